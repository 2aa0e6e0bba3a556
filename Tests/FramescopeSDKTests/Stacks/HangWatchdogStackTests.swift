#if os(Linux)
import CFramescopeStack
import FramescopeCore
import Foundation
import Glibc
import Testing
@testable import FramescopeSDK

/// The watchdog with stack sampling on a real serial queue: a block in a known function comes
/// back as the hang's stack, a queue whose thread waits in a run loop comes back idle with its
/// busy span withdrawn. In the sampler's suite: the process has one sampler.
extension StackSamplerLinuxTests {
    /// A watchdog on `queue` that samples whichever thread `target` holds (the queue's worker
    /// threads take turns, so the test names the one it blocked), every 20 ms, at most 10.
    static func samplingWatchdog(_ queue: DispatchQueue, target: Locked<SampledThread?>, log: HangEventLog,
                                 progress: (@Sendable (Hang) -> Void)? = nil) -> HangWatchdog {
        let table = ImageTable.loaded()
        let sampler = StackSampler(configuration: .init(interval: 0.02, maximumSamples: 10), idleClassifier: .loader) {
            table
        }
        let sampling = HangStackSampling(sampler: sampler, source: { _ in target.withLock { $0 }.map { .thread($0) } },
                                         currentThread: { SampledThread.currentIdentity() })
        return HangWatchdog(watching: queue,
                            configuration: HangWatchdog.Configuration(threshold: 0.25, checkInterval: 0.02,
                                                                      suspensionTolerance: 0.2),
                            stackSampling: sampling, progress: progress) { log.append($0) }
    }

    // Real threads are the subject: a real blocked thread sampled by signal while the watchdog
    // reports progress (the progress cadence alone is HangWatchdogPolicyTests').
    @Test("A hang in a known function ends with that function's stack, every sample in it; not idle")
    func watchdogSamplesTheHang() throws {
        let queue = DispatchQueue(label: "test.stacks.read")
        let target = Locked<SampledThread?>(nil)
        let log = HangEventLog()
        let progress = Locked<[Hang]>([])
        let fiveSamples = DispatchSemaphore(value: 0)
        let watchdog = Self.samplingWatchdog(queue, target: target, log: log) { hang in
            let first = progress.withLock { reports in
                defer { reports.append(hang) }
                return !reports.contains { ($0.stack?.samples.count ?? 0) >= 5 }
            }
            if first, (hang.stack?.samples.count ?? 0) >= 5 { fiveSamples.signal() }
        }
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let blocked = DispatchSemaphore(value: 0)
        watchdog.start()
        queue.async {
            target.withLock { $0 = SampledThread.current() }
            blocked.signal()
            _ = fsTestBlockInRead(readEnd)
        }
        blocked.wait()
        let tid = try #require(target.withLock { $0 }).tid
        try Self.waitUntilSleeping(tid)
        // Hold the block until the hang has five samples (it begins at 0.25 s; one every 20 ms).
        #expect(fiveSamples.wait(timeout: .now() + 10) == .success, "the hang was never sampled five times")
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        queue.sync {}
        watchdog.stop()
        close(readEnd)
        close(writeEnd)

        let (hang, ending) = try #require(log.ended.first)
        #expect(ending == .recovered)
        #expect(!hang.isIdle)
        let stack = try #require(hang.stack)
        #expect(stack.samples.count >= 5 && stack.samples.count <= 10, "\(stack.samples.count) samples")
        let table = ImageTable.loaded()
        for sample in stack.samples {
            #expect(sample.at >= 0 && sample.at <= hang.duration + 0.05, "sample at \(sample.at) s of \(hang.duration) s")
            let addresses = sample.frames.compactMap { Self.address(stack.frames[$0], in: stack, table: table) }
            #expect(addresses.contains { address in
                KnownFunction.blockInRead.contains(address) || KnownFunction.blockInRead.contains(address &- 1)
            }, "a sample without fs_test_block_in_read")
        }
        // The progress handler saw the hang grow, with more samples each time a sample came.
        let reports = progress.withLock { $0 }
        #expect(reports.count >= 3, "\(reports.count) progress reports")
        #expect(reports.allSatisfy { $0.start == hang.start && $0.duration <= hang.duration + 0.001 })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.duration < $1.duration })
        #expect((reports.last?.stack?.samples.count ?? 0) >= stack.samples.count - 2)
        let statistics = watchdog.statistics
        #expect(statistics.sampledHangs == 1 && statistics.unsampledHangs == 0 && statistics.idleHangs == 0)
    }

    // Real threads are the subject: a real run loop's wait classified idle from real samples
    // (the withdrawal decision alone is HangWatchdogPolicyTests' idle tests).
    @Test("A thread parked in its run loop's wait is an idle hang: every sample idle, no busy span left")
    func parkedRunLoopIsIdle() throws {
        let queue = DispatchQueue(label: "test.stacks.parked")
        let target = Locked<SampledThread?>(nil)
        let log = HangEventLog()
        let watchdog = Self.samplingWatchdog(queue, target: target, log: log)
        let unparked = DispatchSemaphore(value: 0)
        watchdog.start()
        queue.async {
            target.withLock { $0 = SampledThread.current() }
            // A nested run loop in a mode of its own, as a modal loop would run: the thread waits
            // for events (epoll_wait under CoreFoundation) and the queue does not move.
            // (A run loop with nothing due returns at once: a timer at the end keeps it waiting.)
            let mode = RunLoop.Mode("framescope.test.parked")
            let wake = Timer(fire: Date().addingTimeInterval(0.7), interval: 0, repeats: false) { _ in }
            RunLoop.current.add(wake, forMode: mode)
            _ = RunLoop.current.run(mode: mode, before: Date().addingTimeInterval(0.8))
            unparked.signal()
        }
        unparked.wait()
        queue.sync {}
        watchdog.stop()

        let (hang, _) = try #require(log.ended.first)
        let stack = try #require(hang.stack)
        #expect(stack.samples.count >= 3)
        #expect(hang.isIdle, "samples: \(Self.describe(stack))")
        #expect(watchdog.statistics.idleHangs == 1)
        // The wait's busy span was withdrawn: nothing the screen tracker would count as busy.
        #expect(watchdog.latestBusySpan.map { $0.overlaps(from: hang.start, to: hang.start &+ 500_000_000) } != true)
    }

    @Test("The main-thread resolver samples only its own thread")
    func resolverNamesOneThread() throws {
        let thread = try #require(SampledThread.current())
        let sampling = HangStackSampling.thread(thread, sampler: StackSampler { ImageTable(images: []) })
        #expect(sampling.source(thread.identity) != nil)
        #expect(sampling.source(thread.identity &+ 1) == nil)
        #expect(sampling.source(0) == nil)
        #expect(sampling.currentThread() == thread.identity)
    }

    /// Each sample's frames as `image+offset (symbol)`, for a failure message.
    static func describe(_ stack: HangStack) -> String {
        let table = ImageTable.loaded()
        return stack.samples.map { sample in
            sample.frames.prefix(6).map { index -> String in
                let frame = stack.frames[index]
                let symbol = address(frame, in: stack, table: table).flatMap { fs_symbol_name(UInt($0)) }
                    .map { String(cString: $0) } ?? "?"
                return "\(stack.images[frame.image].name)+0x\(String(frame.offset, radix: 16)) (\(symbol))"
            }.joined(separator: " ← ")
        }.joined(separator: "\n")
    }
}
#endif
