import Dispatch
import FramescopeCore
import Foundation
import Testing
@testable import FramescopeSDK

@Suite("/proc parsing: text in, numbers out")
struct ProcFilesTests {
    func cpuTicks(_ text: String) -> UInt64? {
        Array(text.utf8).withUnsafeBytes { ProcFiles.cpuTicks(stat: $0) }
    }

    func residentPages(_ text: String) -> UInt64? {
        Array(text.utf8).withUnsafeBytes { ProcFiles.residentPages(statm: $0) }
    }

    // A real line from `cat /proc/self/stat`, with utime 250 and stime 75 written in.
    static let catLine = "14818 (cat) R 14814 14814 13412 0 -1 4194304 98 0 1 0 250 75 0 0 20 0 1 0 1183358 3133440 381 18446744073709551615 94492050726912 94492050746793 140735397156304 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"

    @Test("utime + stime (fields 14 and 15) in clock ticks", arguments: [
        (catLine, UInt64(325)),
        // Spaces and parentheses in the command name: fields count from the last ')'.
        ("4242 (my (odd) app) S 1 4242 4242 0 -1 4194560 5000 0 0 0 1200 34 0 0 20 0 8 0 99 1000000 2000 18446744073709551615\n", 1234),
        // A name that looks like fields: a split on spaces would read 99 + 99.
        ("7 (a) 99 99 (b) S 1 7 7 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5 100 10 0", 30),
        // A name that is only a parenthesis and a space.
        ("8 ( )) R 1 8 8 0 -1 0 0 0 0 0 0 1 0 0 20 0 1 0 5 100 10 0", 1),
        // Exactly up to stime, no newline.
        ("9 (x) R 1 9 9 0 -1 0 0 0 0 0 7 8", 15),
    ])
    func cpuTicks(line: String, ticks: UInt64) {
        #expect(cpuTicks(line) == ticks)
    }

    @Test("Not a stat line: nil, never a crash", arguments: [
        "",
        "14818 cat R 1 2 3",                           // no parentheses
        "9 (x) R 1 9 9 0 -1 0 0 0 0 0 7",              // cut before stime
        "9 (x) R 1 9 9 0 -1 0 0 0 0 0 7 -8 0",         // a negative time
        "9 (x) R 1 9 9 0 -1 0 0 0 0 0 7x 8 0",         // not a number
        "9 (x) R 1 9 9 0 -1 0 0 0 0 0 99999999999999999999 8 0",  // overflows UInt64
        "9 (x) R 1 9 9 0 -1 0 0 0 0 0 18446744073709551615 1 0",  // the sum overflows
    ])
    func cpuTicksRejects(line: String) {
        #expect(cpuTicks(line) == nil)
    }

    @Test("statm: resident pages are field 2")
    func residentPages() {
        #expect(residentPages("765 430 402 5 0 123 0\n") == 430)
        #expect(residentPages("1 2") == 2)
        #expect(residentPages("") == nil)
        #expect(residentPages("765\n") == nil)
        #expect(residentPages("765 4x0 402") == nil)
        #expect(residentPages("x 430 402") == nil)
    }

    #if os(Linux)
    @Test("This process's own /proc files read as plausible numbers")
    func ownProcess() throws {
        let reading = try #require(ResourceReading.current())
        #expect(reading.cpuSeconds > 0)
        #expect(reading.residentBytes > 1 << 20)
        #expect(reading.residentBytes < 1 << 40)
    }
    #endif
}

@Suite("Resource window: minimum, mean and maximum")
struct ResourceWindowTests {
    @Test("No samples: no figures")
    func empty() {
        #expect(ResourceWindow().usage == nil)
    }

    @Test("Hand-computed samples; the CPU mean weights each sample by its span")
    func summaries() throws {
        var window = ResourceWindow()
        window.add(cpuSeconds: 0.5, wallSeconds: 1, residentBytes: 100)   // 50 %
        window.add(cpuSeconds: 3, wallSeconds: 2, residentBytes: 400)     // 150 %
        window.add(cpuSeconds: 0, wallSeconds: 1, residentBytes: 100)     // 0 %
        window.add(cpuSeconds: 1, wallSeconds: 0, residentBytes: 9999)    // no span: ignored
        let usage = try #require(window.usage)
        #expect(usage.samples == 3)
        #expect(usage.cpuPercent == .init(min: 0, mean: 87.5, max: 150))  // 100 · 3.5 s / 4 s
        #expect(usage.residentBytes == .init(min: 100, mean: 200, max: 400))
    }
}

/// A reader whose counters follow a clock the test moves: CPU grows at `cpuShare` seconds
/// per second, resident memory is fixed.
final class ScriptedProcess: Sendable {
    private let now = Locked<UInt64>(1_000_000_000)
    let cpuShare: Double
    let residentBytes: UInt64

    init(cpuShare: Double, residentBytes: UInt64) {
        self.cpuShare = cpuShare
        self.residentBytes = residentBytes
    }

    func advance(by seconds: Double) {
        now.withLock { $0 += UInt64(seconds * 1e9) }
    }

    var clock: MonotonicClock {
        MonotonicClock { [now] in now.withLock { $0 } }
    }

    var read: @Sendable () -> ResourceReading? {
        { [now, cpuShare, residentBytes] in
            ResourceReading(cpuSeconds: cpuShare * Double(now.withLock { $0 }) / 1e9, residentBytes: residentBytes)
        }
    }
}

@Suite("Resource sampler: windows")
struct ResourceSamplerWindowTests {
    @Test("Finishing without a window gives nil")
    func noWindow() {
        let process = ScriptedProcess(cpuShare: 0.5, residentBytes: 1000)
        let sampler = ResourceSampler(interval: 10, clock: process.clock, read: process.read)
        #expect(sampler.finishWindow() == nil)
    }

    @Test("A window shorter than the interval still gets one sample, at its finish")
    func shortWindow() throws {
        let process = ScriptedProcess(cpuShare: 0.25, residentBytes: 5_000_000)
        let sampler = ResourceSampler(interval: 10, clock: process.clock, read: process.read)
        sampler.startWindow()
        process.advance(by: 2)
        let usage = try #require(sampler.finishWindow())
        #expect(usage.samples == 1)
        #expect(abs(usage.cpuPercent.mean - 25) < 1e-9)
        #expect(usage.residentBytes == .init(min: 5_000_000, mean: 5_000_000, max: 5_000_000))
        #expect(sampler.finishWindow() == nil)  // the window is closed
    }

    @Test("A window that cannot read the counters has no figures")
    func unreadable() {
        let sampler = ResourceSampler(interval: 10, clock: .system, read: { nil })
        sampler.startWindow()
        #expect(sampler.finishWindow() == nil)
    }
}

/// A reader whose counters follow a clock that moves `step` seconds after each reading (CPU at
/// `cpuShare` of it), until frozen; each reading is signalled, so a test waits for the
/// sampler's timer to read instead of sleeping.
final class SteppingProcess: Sendable {
    private let process: ScriptedProcess
    private let step: Double
    private let frozen = Locked(false)
    private let readings = Locked(0)
    private let signal = DispatchSemaphore(value: 0)

    init(cpuShare: Double, residentBytes: UInt64, step: Double) {
        process = ScriptedProcess(cpuShare: cpuShare, residentBytes: residentBytes)
        self.step = step
    }

    var clock: MonotonicClock { process.clock }

    var read: @Sendable () -> ResourceReading? {
        let (read, process, step, frozen, readings, signal) = (process.read, process, step, frozen, readings, signal)
        return {
            let reading = read()
            if !frozen.withLock({ $0 }) { process.advance(by: step) }
            readings.withLock { $0 += 1 }
            signal.signal()
            return reading
        }
    }

    /// Readings so far.
    var count: Int { readings.withLock { $0 } }

    /// Waits until there have been `count` readings (true), or `timeout` seconds (false).
    func wait(forReadings count: Int, timeout: Double = 30) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while self.count < count {
            guard signal.wait(timeout: deadline) == .success else { return self.count >= count }
        }
        return true
    }

    /// Stops the clock: readings from now on are at one time, so they add no sample.
    func freeze() {
        frozen.withLock { $0 = true }
    }
}

@Suite("Resource sampler: its timer")
struct ResourceSamplerTimerTests {
    // Real threads are the subject (the sampler's dispatch timer on its queue), but nothing
    // here is timed: the test waits for the timer's readings, and the scripted clock moves
    // one interval per reading.
    @Test("The timer samples every interval while a window is open")
    func timerSamples() throws {
        let process = SteppingProcess(cpuShare: 0.5, residentBytes: 1 << 20, step: 0.05)
        let sampler = ResourceSampler(interval: 0.05, clock: process.clock, read: process.read)
        sampler.startWindow()  // reading 1: the baseline
        let sampled = process.wait(forReadings: 4)  // three from the timer
        // Each reading is one interval after the last: a sample each. Frozen, the next reading
        // (the finish's, or the timer's if it reads again meanwhile) closes the last interval
        // and any after it spans no time, so adds nothing. The timer adds its sample after the
        // reading signalled, so the finish may close the window first and cover that span
        // itself: at least the timer's three samples, whichever reading took the last.
        process.freeze()
        let usage = try #require(sampler.finishWindow())
        try #require(sampled, "the timer read \(process.count - 1) times")
        #expect(usage.samples >= 3 && usage.samples <= process.count - 1, "\(usage.samples) samples of \(process.count) readings")
        #expect(abs(usage.cpuPercent.min - 50) < 1e-6 && abs(usage.cpuPercent.max - 50) < 1e-6, "\(usage.cpuPercent)")
        #expect(abs(usage.cpuPercent.mean - 50) < 1e-6)
        #expect(usage.residentBytes == .init(min: 1_048_576, mean: 1_048_576, max: 1_048_576))
    }
}

extension RealThreadTests {
    /// What this process really uses: a spinning thread's CPU share and touched memory, which
    /// other suites running beside them in one process would disturb (isolated process).
    @Suite("Resource sampler on this process")
    struct ResourceSamplerProcessTests {
        @Test("A thread spinning for 1 s shows as busy (over 25 % of a core), agreeing with the process CPU clock")
        func busyThread() throws {
            let sampler = ResourceSampler(interval: 0.2)
            let cpuBefore = processCPUSeconds()
            let wallBefore = systemMonotonicNanoseconds()
            sampler.startWindow()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let end = systemMonotonicNanoseconds() + 1_000_000_000
                while systemMonotonicNanoseconds() < end {}
                done.signal()
            }
            done.wait()
            let usage = try #require(sampler.finishWindow())
            let independent = 100 * (processCPUSeconds() - cpuBefore) / elapsed(from: wallBefore, to: systemMonotonicNanoseconds())

            #expect(usage.samples >= 3, "\(usage)")
            // A spinning thread holds a core when the machine is idle (about 100 %); with the
            // other suites running beside it on two cores it has measured 47 %. The agreement
            // with the CPU clock below is the exact check.
            #expect(usage.cpuPercent.max > 25, "\(usage.cpuPercent)")
            #expect(usage.cpuPercent.mean > 25, "\(usage.cpuPercent)")
            #expect(abs(usage.cpuPercent.mean - independent) < 10, "sampler \(usage.cpuPercent.mean) %, CPU clock \(independent) %")
        }

        @Test("Allocating and touching 200 MB raises resident memory by at least 150 MB")
        func memory() throws {
            let before = try #require(ResourceReading.current()).residentBytes
            // An interval longer than the test: the window's one sample is the finish's, read
            // after the touch (a timer sample during it would leave the finish a short
            // remainder, which adds none).
            let sampler = ResourceSampler(interval: 3600)
            sampler.startWindow()
            let size = 200 << 20
            let memory = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
            defer { memory.deallocate() }
            for offset in stride(from: 0, to: size, by: 4096) {
                memory.storeBytes(of: UInt8(truncatingIfNeeded: offset >> 12), toByteOffset: offset, as: UInt8.self)
            }
            let usage = try #require(sampler.finishWindow())
            #expect(usage.samples == 1)
            let growth = usage.residentBytes.max - Double(before)
            #expect(growth >= 150e6, "resident grew by \(growth / 1e6) MB")
            #expect(growth < 400e6, "resident grew by \(growth / 1e6) MB")
            #expect(usage.residentBytes.min <= usage.residentBytes.mean && usage.residentBytes.mean <= usage.residentBytes.max)
        }
    }
}

/// The process's CPU time so far (all threads), from `CLOCK_PROCESS_CPUTIME_ID`: an
/// independent check on the sampler's `/proc` figures.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
