import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the built `FramescopeWatchdogProbe` (it sits beside the test bundle) and reads its
/// output line by line while it runs.
final class Probe {
    let process = Process()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    static var binary: URL {
        let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        var directory = testBinary.deletingLastPathComponent()
        // On macOS the test bundle is a directory: Contents/MacOS/<binary>.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("FramescopeWatchdogProbe").path), directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("FramescopeWatchdogProbe")
    }

    init(_ arguments: [String]) throws {
        let binary = Self.binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw ProbeError(message: "FramescopeWatchdogProbe not found beside the test bundle; run `swift build --build-tests` first")
        }
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The next line of output, or nil at the end.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty {
                return nil
            }
            buffer += data
        }
    }

    /// The remaining lines, after the process has exited.
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = nextLine() { lines.append(line) }
        process.waitUntilExit()
        return lines
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }
}

struct ProbeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
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
            let probe = try Probe(["--seconds", "1.5", "--work-ms", "0", "--block-at", "0.3", "--block-ms", "400"])
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
            let probe = try Probe(["--seconds", "4", "--work-ms", "100"])
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
    }
}
