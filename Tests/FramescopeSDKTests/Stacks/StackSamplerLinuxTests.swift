#if os(Linux)
import CFramescopeStack
import FramescopeCore
import Foundation
import Glibc
import Testing
@testable import FramescopeSDK

/// The Linux sampler on real threads: a thread blocked in `read` and one spinning, each in a
/// known function of this file's neighbour (KnownFunctions.swift), sampled from another
/// thread. Serialized: the process has one sampler (the signal handler's state is global).
@Suite("Stack sampler on real Linux threads", .serialized)
struct StackSamplerLinuxTests {
    // MARK: Threads to sample

    /// A thread blocked in `fs_test_block_in_read` on a pipe nobody writes to, until `release()`.
    final class BlockedReader: Sendable {
        let thread: SampledThread
        private let writeEnd: Int32
        private let finished = DispatchSemaphore(value: 0)

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            let (readEnd, writeEnd) = (ends[0], ends[1])
            self.writeEnd = writeEnd
            let box = Locked<SampledThread?>(nil)
            let ready = DispatchSemaphore(value: 0)
            let finished = finished
            let thread = Thread {
                box.withLock { $0 = SampledThread.current() }
                ready.signal()
                _ = fsTestBlockInRead(readEnd)
                close(readEnd)
                finished.signal()
            }
            thread.start()
            ready.wait()
            guard let sampled = box.withLock({ $0 }) else { throw POSIXError(.ESRCH) }
            self.thread = sampled
            try waitUntilSleeping(sampled.tid)
        }

        /// Lets the read return (one byte) and waits for the thread to finish.
        func release() {
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
            close(writeEnd)
            finished.wait()
        }
    }

    /// A thread spinning in `fs_test_spin` until `release()`.
    final class Spinner: Sendable {
        let thread: SampledThread
        private let spin = Spin()
        private let finished = DispatchSemaphore(value: 0)

        init() throws {
            let box = Locked<SampledThread?>(nil)
            let (spin, finished) = (spin, finished)
            let thread = Thread {
                box.withLock { $0 = SampledThread.current() }
                _ = fsTestSpin(spin.pointer)
                finished.signal()
            }
            thread.start()
            spin.entered.wait()  // the thread is in the function, about to spin
            guard let sampled = box.withLock({ $0 }) else { throw POSIXError(.ESRCH) }
            self.thread = sampled
        }

        func release() {
            spin.stop.bump()
            finished.wait()
        }
    }

    /// Waits (≤ 2 s) until thread `tid` sleeps in the kernel (state S in /proc).
    static func waitUntilSleeping(_ tid: Int32) throws {
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            if let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"),
               stat[stat.index(close, offsetBy: 2)] == "S" {
                return
            }
            // Real threads are the subject: nothing signals that another thread has entered the
            // kernel, so its state in /proc is polled, 1 ms apart.
            Thread.sleep(forTimeInterval: 0.001)
        }
        throw POSIXError(.ETIMEDOUT)
    }

    // MARK: Helpers

    /// Samples `thread` five times through a StackSampler (every 10 ms) and returns the stack.
    static func sampleFiveTimes(_ thread: SampledThread) throws -> (stack: HangStack, droppedFrames: Int, table: ImageTable) {
        let table = ImageTable.loaded()
        let sampler = StackSampler(configuration: .init(interval: 0.01, maximumSamples: 5)) { table }
        let start = systemMonotonicNanoseconds()
        sampler.hangBegan(at: start, source: .thread(thread), pingRuns: PingRunCounter())
        #expect(sampler.waitUntilFinished(timeout: 5))
        let statistics = sampler.statistics
        #expect(statistics == StackSampler.Statistics(kept: 5, dropped: 0, failed: 0, finished: true))
        let result = try #require(sampler.hangEnded())
        sampler.stop()
        return (result.stack, result.droppedFrames, table)
    }

    /// The frame's address in this process: its image's base plus its offset.
    static func address(_ frame: HangStack.Frame, in stack: HangStack, table: ImageTable) -> UInt64? {
        let id = stack.images[frame.image].id
        return table.images.first { $0.id == id }.map { $0.base + frame.offset }
    }

    static var executable: ImageTable.Image? {
        ImageTable.loaded().images.first { $0.isApp && $0.path.hasSuffix(".xctest") }
            ?? ImageTable.loaded().images.first { $0.isApp }
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Tests

    @Test("A thread blocked in read: every sample has the read's caller (found by the stack scan) and the chain above it")
    func blockedInRead() throws {
        let reader = try BlockedReader()
        defer { reader.release() }
        let (stack, _, table) = try Self.sampleFiveTimes(reader.thread)
        #expect(stack.samples.count == 5)
        for sample in stack.samples {
            let addresses = sample.frames.map { Self.address(stack.frames[$0], in: stack, table: table) }
            // Frame 0 is in the C library (read's system call); frame 1 is the Swift function
            // that called read, which only the stack scan finds (glibc's read keeps no frame,
            // so the frame pointer still holds the function's own frame); frame 2, from the
            // frame-pointer chain, is the thread's closure that called the function.
            let first = try #require(sample.frames.first)
            #expect(stack.images[stack.frames[first].image].name.hasPrefix("libc.so"))
            #expect(addresses.count >= 3)
            if addresses.count >= 3, let second = addresses[1], let third = addresses[2] {
                #expect(KnownFunction.blockInRead.contains(second), "frame 1 is read's caller: \(addresses)")
                #expect(!KnownFunction.blockInRead.contains(third), "frame 2 is its caller: \(addresses)")
            }
        }
        // Without the code ranges there is no scan: the chain alone misses the function.
        var slot = [UInt64](repeating: 0, count: 64)
        let chainOnly = try slot.withUnsafeMutableBufferPointer { slot in
            try reader.thread.sample(into: slot, text: UnsafeBufferPointer(start: nil, count: 0)).get()
        }
        #expect(chainOnly >= 2)
        #expect(!slot[0..<chainOnly].contains(where: KnownFunction.blockInRead.contains))
        // The thread's own frames are the app's; the C library's are not.
        #expect(stack.images.contains { $0.app })
        #expect(stack.images.filter { $0.name.hasPrefix("libc.so") }.allSatisfy { !$0.app })
    }

    @Test("A spinning thread: every sample has the spinning function")
    func spinning() throws {
        let spinner = try Spinner()
        defer { spinner.release() }
        let (stack, _, table) = try Self.sampleFiveTimes(spinner.thread)
        #expect(stack.samples.count == 5)
        for sample in stack.samples {
            let addresses = sample.frames.compactMap { Self.address(stack.frames[$0], in: stack, table: table) }
            #expect(addresses.contains(where: KnownFunction.spin.contains), "\(addresses)")
        }
    }

    @Test("The ping runs while the third stack is taken: that sample is dropped, sampling stops, the first two are kept")
    func pingRanDuringSample() throws {
        let reader = try BlockedReader()
        defer { reader.release() }
        let pingRuns = PingRunCounter()
        let calls = Locked(0)
        let real = StackSource.thread(reader.thread)
        // The third request finds the ping run during it: as if the hang ended mid-sample.
        let source = StackSource { slot, text in
            let call = calls.withLock { $0 += 1; return $0 }
            let count = real.take(slot, text)
            if call == 3 { pingRuns.bump() }
            return count
        }
        let table = ImageTable.loaded()
        let sampler = StackSampler(configuration: .init(interval: 0.01, maximumSamples: 20)) { table }
        let start = systemMonotonicNanoseconds()
        sampler.hangBegan(at: start, source: source, pingRuns: pingRuns)
        #expect(sampler.waitUntilFinished(timeout: 5))
        #expect(sampler.statistics == StackSampler.Statistics(kept: 2, dropped: 1, failed: 0, finished: true))
        let stack = try #require(sampler.hangEnded()).stack
        // Answered on the sampler's thread, after it parked: no further request came (that a
        // moved counter parks the sampler is HangSamplingScheduleTests' sweep, at made-up times).
        #expect(calls.withLock { $0 } == 3)
        #expect(stack.samples.count == 2)
        #expect(stack.samples[0].at < stack.samples[1].at && stack.samples[1].at < 1)
        sampler.stop()
    }

    @Test("A hang that ends before any sample gives no stack; the sampler then samples the next hang")
    func endedAtOnce() throws {
        let reader = try BlockedReader()
        defer { reader.release() }
        let table = ImageTable.loaded()
        let sampler = StackSampler(configuration: .init(interval: 0.01, maximumSamples: 3)) { table }
        let moved = PingRunCounter()
        moved.bump()
        // The counter moved between the hang's report and the first sample.
        let source = StackSource { slot, text in
            moved.bump()
            return StackSource.thread(reader.thread).take(slot, text)
        }
        sampler.hangBegan(at: systemMonotonicNanoseconds(), source: source, pingRuns: moved)
        #expect(sampler.waitUntilFinished(timeout: 5))
        #expect(sampler.hangEnded() == nil)
        sampler.hangBegan(at: systemMonotonicNanoseconds(), source: .thread(reader.thread), pingRuns: PingRunCounter())
        #expect(sampler.waitUntilFinished(timeout: 5))
        #expect(sampler.hangEnded()?.stack.samples.count == 3)
        sampler.stop()
        #expect(sampler.hangEnded() == nil)  // stopped: answers at once
    }

    @Test("The image table holds the test executable with the build id readelf prints, and offsets are file addresses")
    func executableImage() throws {
        let executable = try #require(Self.executable)
        let notes = try Self.run("readelf", ["-n", executable.path])
        let line = try #require(notes.split(separator: "\n").first { $0.contains("Build ID:") })
        let readelfID = line.split(separator: " ").last.map(String.init)
        #expect(executable.id == readelfID)
        #expect(executable.isApp && !executable.omitsFramePointers)
        let libc = try #require(ImageTable.loaded().images.first { $0.name.hasPrefix("libc.so") })
        #expect(!libc.isApp && libc.omitsFramePointers)

        // offset = address − load bias is the symbol's value in the file (nm), the same in every
        // run whatever ASLR chose.
        let symbols = try Self.run("nm", ["--defined-only", executable.path])
        for function in KnownFunction.allCases {
            let symbol = try #require(symbols.split(separator: "\n").first { $0.hasSuffix(" T \(function.rawValue)") })
            let fileAddress = try #require(UInt64(symbol.prefix { $0 != " " }, radix: 16))
            let (index, offset) = try #require(ImageTable.loaded().lookup(function.address))
            #expect(ImageTable.loaded().images[index].path == executable.path)
            #expect(offset == fileAddress)
        }
    }

    @Test("A thread's identity is its tid, as currentIdentity() gives it on that thread and no other")
    func identity() throws {
        let box = Locked<(thread: SampledThread?, identity: UInt64)>((nil, 0))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.withLock { $0 = (SampledThread.current(), SampledThread.currentIdentity()) }
            done.signal()
        }
        thread.start()
        done.wait()
        let (sampled, identity) = box.withLock { $0 }
        let other = try #require(sampled)
        #expect(other.identity == identity)
        #expect(other.identity == UInt64(other.tid))
        #expect(SampledThread.currentIdentity() != identity)
        #expect(SampledThread.currentIdentity() == UInt64(fs_current_tid()))
    }

    @Test("A thread that exited, or a tid that never existed, fails cleanly")
    func goneThread() throws {
        let box = Locked<SampledThread?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.withLock { $0 = SampledThread.current() }
            done.signal()
        }
        thread.start()
        done.wait()
        let gone = try #require(box.withLock { $0 })
        // Wait until the kernel has reaped the thread.
        let deadline = Date().addingTimeInterval(2)
        while FileManager.default.fileExists(atPath: "/proc/self/task/\(gone.tid)") && Date() < deadline {
            // Real threads are the subject: nothing signals the kernel's reaping of a detached
            // thread, so /proc is polled, 1 ms apart.
            Thread.sleep(forTimeInterval: 0.001)
        }
        var slot = [UInt64](repeating: 0, count: 16)
        let table = ImageTable.loaded()
        let result = slot.withUnsafeMutableBufferPointer { slot in
            table.textRanges.withUnsafeBufferPointer { gone.sample(into: slot, text: $0) }
        }
        #expect(result == .failure(.noThread))
        let never = SampledThread(tid: Int32.max, stack: gone.stack)
        let bad = slot.withUnsafeMutableBufferPointer { slot in
            table.textRanges.withUnsafeBufferPointer { never.sample(into: slot, text: $0) }
        }
        #expect(bad == .failure(.noThread))
    }

    @Test("A thread with the signal blocked times out; its late handler writes nothing, and the next sample is right")
    func lateHandler() throws {
        let signal = try #require(SampledThread.installedSignal)
        let box = Locked<SampledThread?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let unblock = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.withLock { $0 = SampledThread.current() }
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, signal)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            ready.signal()
            unblock.wait()
            pthread_sigmask(SIG_UNBLOCK, &blocked, nil)  // the pending signal runs the handler now
            finished.signal()
        }
        thread.start()
        ready.wait()
        let deaf = try #require(box.withLock { $0 })
        let table = ImageTable.loaded()
        var slot = [UInt64](repeating: 0xDEAD, count: 16)
        let timedOut = slot.withUnsafeMutableBufferPointer { slot in
            table.textRanges.withUnsafeBufferPointer { deaf.sample(into: slot, text: $0, timeout: 0.01) }
        }
        #expect(timedOut == .failure(.timeout))
        #expect(slot.allSatisfy { $0 == 0xDEAD })
        unblock.signal()
        finished.wait()

        let reader = try BlockedReader()
        defer { reader.release() }
        let count = slot.withUnsafeMutableBufferPointer { slot in
            table.textRanges.withUnsafeBufferPointer { reader.thread.sample(into: slot, text: $0) }
        }
        let taken = try count.get()
        #expect(slot[1..<taken].contains(where: KnownFunction.blockInRead.contains))
    }

    @Test("A sample interrupts the sampled thread's nanosleep with EINTR")
    func interruptsSleep() throws {
        let box = Locked<SampledThread?>(nil)
        let result = Locked<(Int32, Int32)>((0, 0))
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.withLock { $0 = SampledThread.current() }
            ready.signal()
            var request = timespec(tv_sec: 2, tv_nsec: 0)
            var left = timespec()
            let code = nanosleep(&request, &left)
            let error = errno
            result.withLock { $0 = (code, error) }
            finished.signal()
        }
        thread.start()
        ready.wait()
        let sleeper = try #require(box.withLock { $0 })
        try Self.waitUntilSleeping(sleeper.tid)
        let table = ImageTable.loaded()
        var slot = [UInt64](repeating: 0, count: 16)
        let sampled = slot.withUnsafeMutableBufferPointer { slot in
            table.textRanges.withUnsafeBufferPointer { sleeper.sample(into: slot, text: $0) }
        }
        #expect((try? sampled.get()) ?? 0 >= 1)
        #expect(finished.wait(timeout: .now() + 1) == .success, "nanosleep returned long before its 2 s")
        #expect(result.withLock { $0 } == (-1, EINTR))
    }
}
#endif
