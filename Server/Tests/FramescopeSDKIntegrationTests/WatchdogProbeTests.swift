import Foundation
import FramescopeProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `FramescopeWatchdogProbe` run as a child process, its output read line by
/// line while it runs.
func startProbe(_ arguments: [String]) throws -> LineReadingProcess {
    try LineReadingProcess(product: "FramescopeWatchdogProbe", arguments: arguments)
}

/// The numbers of a `done checks=… suspensions=… hangs=…` line.
func summary(_ lines: [String]) -> [String: Double] {
    guard let done = lines.last(where: { $0.hasPrefix("done ") }) else { return [:] }
    var fields: [String: Double] = [:]
    for pair in done.split(separator: " ").dropFirst() {
        let parts = pair.split(separator: "=", maxSplits: 1)
        if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
    }
    return fields
}

extension RealThreadTests {
    /// A separate process, so that it can really be stopped with `SIGSTOP`.
    @Suite("Hang watchdog in a process stopped and continued")
    struct WatchdogProbeTests {
        @Test("The probe reports a real 400 ms block as one hang (so its silence below means something)")
        func probeSeesHang() throws {
            let probe = try startProbe(["--seconds", "1.5", "--work-ms", "0", "--block-at", "0.3", "--block-ms", "400"])
            let lines = probe.remainingLines()
            #expect(probe.process.terminationStatus == 0)
            let began = lines.filter { $0.hasPrefix("began ") }
            let ended = lines.filter { $0.hasPrefix("ended ") }
            #expect(began.count == 1, "\(lines)")
            #expect(ended.count == 1 && ended.allSatisfy { $0.hasSuffix("ending=recovered") }, "\(lines)")
            #expect(summary(lines)["hangs"] == 1, "\(lines)")
        }

        @Test("SIGSTOP for 2 s, then SIGCONT, with a ping waiting: no hang, one suspension noticed")
        func stopAndContinue() throws {
            // The queue runs 100 ms chunks back to back, so a ping is almost always waiting
            // behind one when the stop lands: its wait then spans the stop.
            let probe = try startProbe(["--seconds", "4", "--work-ms", "100"])
            let ready = probe.nextLine()
            try #require(ready?.hasPrefix("ready ") == true, "probe said \(ready ?? "nothing")")
            Thread.sleep(forTimeInterval: 0.5)
            probe.signal(SIGSTOP)
            Thread.sleep(forTimeInterval: 2)
            probe.signal(SIGCONT)
            let lines = probe.remainingLines()

            #expect(probe.process.terminationStatus == 0)
            #expect(!lines.contains { $0.hasPrefix("began ") || $0.hasPrefix("ended ") }, "\(lines)")
            let numbers = summary(lines)
            #expect(numbers["hangs"] == 0, "\(lines)")
            #expect(numbers["suspensions"] == 1, "\(lines)")
            #expect((numbers["checks"] ?? 0) > 100, "\(lines)")
        }
    
        @Test("With the main thread sampled: a block on it is a hang with samples; SIGSTOP makes no hang and takes no sample")
        func mainThreadSampledAndStopped() throws {
            let probe = try startProbe(["--main", "--seconds", "4", "--work-ms", "0", "--block-at", "0.3", "--block-ms", "600"])
            let ready = probe.nextLine()
            try #require(ready?.hasPrefix("ready ") == true, "probe said \(ready ?? "nothing")")
            // Stop the process once the block's hang has ended (its line is out), for 1.5 s of real time.
            var lines: [String] = []
            while let line = probe.nextLine() {
                lines.append(line)
                if line.hasPrefix("ended ") { break }
            }
            probe.signal(SIGSTOP)
            Thread.sleep(forTimeInterval: 1.5)
            probe.signal(SIGCONT)
            lines += probe.remainingLines()
            #expect(probe.process.terminationStatus == 0)
            let ended = lines.filter { $0.hasPrefix("ended ") }
            #expect(ended.count == 1, "\(lines)")
            let samples = ended.first.flatMap { line in
                line.split(separator: " ").first { $0.hasPrefix("samples=") }.flatMap { Int($0.dropFirst(8)) }
            } ?? 0
            #expect(samples >= 3, "\(lines)")
            #expect(ended.first?.hasSuffix("idle=false") == true, "\(lines)")
            let numbers = summary(lines)
            #expect(numbers["hangs"] == 1 && numbers["sampled"] == 1 && numbers["idle"] == 0, "\(lines)")
            #expect(numbers["suspensions"] == 1, "\(lines)")
        }

        @Test("A main thread parked in a nested run loop is an idle hang: every sample idle")
        func parkedMainThread() throws {
            let probe = try startProbe(["--main", "--seconds", "2", "--work-ms", "0", "--park-at", "0.3", "--park-ms", "800"])
            let lines = probe.remainingLines()
            #expect(probe.process.terminationStatus == 0)
            let ended = lines.filter { $0.hasPrefix("ended ") }
            #expect(ended.count == 1 && ended.first?.hasSuffix("idle=true") == true, "\(lines)")
            #expect(summary(lines)["idle"] == 1, "\(lines)")
        }
}
}
