import CFramescopeStack
import Dispatch
import FramescopeCore
import Foundation

/// How to take one sample of one thread's stack: the platform's part of the sampler.
///
/// `take` writes the interrupted instruction and the return addresses (innermost first) into
/// the slot and returns how many, or 0 or less when no stack came back; it consults the text
/// ranges (`fs_walk_frames`). It must allocate nothing. `.thread(_:)` makes one from a
/// ``SampledThread``: on Linux it sends the thread a signal (`StackSampler+Linux.swift`), on
/// Apple platforms it suspends the Mach thread (`StackSampler+Darwin.swift`).
struct StackSource: Sendable {
    /// Takes one sample into the slot; returns the addresses written (≤ 0: none).
    let take: @Sendable (UnsafeMutableBufferPointer<UInt64>, UnsafeBufferPointer<fs_text_range>) -> Int
}

/// Samples one thread's stack while a hang lasts, on a thread of its own, and hands the
/// samples back as a ``HangStack`` when the hang ends.
///
/// ```swift
/// let sampler = StackSampler(loadImages: ImageTable.loaded)
/// sampler.hangBegan(at: hang.start, source: .thread(mainThread), pingRuns: counter)
/// // … the watchdog sees the ping run …
/// let stack = sampler.hangEnded()   // the samples, as (image, offset) frames
/// ```
///
/// The thread is created on first use, parks on a semaphore between hangs and holds the
/// sampler until ``stop()``. When a hang begins it loads the image table (outside any window;
/// `dl_iterate_phdr` on Linux, dyld on Apple platforms), then follows
/// ``HangSamplingSchedule``: a sample at once, then one every
/// ``Configuration/interval``, at most ``Configuration/maximumSamples``, each written into a
/// preallocated ``StackSampleBuffer``. Between a sample's request and its answer nothing is
/// allocated on either thread. The conversion into a ``HangStack`` (lookups, deduplication)
/// runs after the hang, on the sampler's thread.
///
/// One sampler per process on Linux (the signal handler's state is global); on Apple
/// platforms samplers keep no shared state.
final class StackSampler: @unchecked Sendable {
    // @unchecked: `schedule`, `buffer`, `hang` and `action` are touched only on the
    // sampler's thread (in `loop()`); the rest is immutable or locked.

    /// The sampler's settings.
    struct Configuration: Sendable, Hashable {
        /// Seconds between samples of one hang (default 0.1 s).
        var interval: Double = 0.1
        /// Most samples per hang (default 20).
        var maximumSamples: Int = StackSampleBuffer.defaultCapacity
        /// Most addresses per sample (default 128).
        var depth: Int = StackSampleBuffer.defaultDepth
    }

    /// What happened to the last hang's samples.
    struct Statistics: Sendable, Hashable {
        /// Samples kept.
        var kept = 0
        /// Stacks taken but dropped because the ping ran meanwhile.
        var dropped = 0
        /// Requests that brought no stack back (timeout, thread gone).
        var failed = 0
        /// Samples kept that showed the thread parked in its run loop's wait
        /// (``IdleClassifier``); 0 without a classifier.
        var idle = 0
        /// Whether sampling of the hang is over (the bound was reached or the ping ran).
        var finished = false
    }

    /// What ``hangEnded()`` returns: the hang's samples as the wire sends them.
    struct SampledHang: Sendable, Hashable {
        /// The samples, as (image, offset) frames.
        var stack: HangStack
        /// Addresses that lay in no image that could be sent.
        var droppedFrames: Int
        /// Whether every sample showed the thread parked in its run loop's wait.
        var isIdle: Bool
    }

    let configuration: Configuration
    private let clock: MonotonicClock
    private let loadImages: @Sendable () -> ImageTable
    private let idleClassifier: IdleClassifier?
    private let wakeup = DispatchSemaphore(value: 0)
    /// Signalled each time sampling of a hang finishes (``waitUntilFinished(timeout:)``).
    private let finishedSignal = DispatchSemaphore(value: 0)
    private let mailbox = Locked(Mailbox())
    private let published = Locked(Statistics())

    private var schedule: HangSamplingSchedule
    private var buffer: StackSampleBuffer
    private var hang: HangUnderWay?
    private var action = HangSamplingSchedule.Action.park
    private var idleSamples = 0

    /// A sampler that has no thread until the first hang. `loadImages` lists the loaded
    /// images (`ImageTable.loaded`, on Linux and Apple platforms); tests may pass their own. `idleClassifier` judges each
    /// kept sample (``IdleClassifier/loader`` in the SDK); without one no hang is idle.
    init(configuration: Configuration = Configuration(), clock: MonotonicClock = .system,
         idleClassifier: IdleClassifier? = nil, loadImages: @escaping @Sendable () -> ImageTable) {
        precondition(configuration.interval.isFinite && configuration.interval > 0,
                     "StackSampler: the interval must be a positive number of seconds")
        self.configuration = configuration
        self.clock = clock
        self.loadImages = loadImages
        self.idleClassifier = idleClassifier
        schedule = HangSamplingSchedule(interval: nanoseconds(configuration.interval),
                                        maximumSamples: configuration.maximumSamples)
        buffer = StackSampleBuffer(capacity: configuration.maximumSamples, depth: configuration.depth)
    }

    deinit {
        stop()
    }

    /// A hang began at `start` (ns of the sampler's clock, what sample times count from):
    /// sample `source` until ``hangEnded()``. `pingRuns` is the watched queue's ping counter;
    /// once it moves, sampling stops. Returns at once.
    func hangBegan(at start: UInt64, source: StackSource, pingRuns: PingRunCounter) {
        published.withLock { $0 = Statistics() }
        while finishedSignal.wait(timeout: .now()) == .success {}  // forget earlier hangs' ends
        post(.began(start: start, source: source, pingRuns: pingRuns))
    }

    /// The hang ended: stops sampling it and returns its samples (nil when none was kept),
    /// how many addresses lay in no image that could be sent, and whether it was idle. Waits
    /// for the sample under way, if any, and the conversion.
    func hangEnded() -> SampledHang? {
        let reply = Locked<SampledHang?>(nil)
        let done = DispatchSemaphore(value: 0)
        guard post(.ended(reply: reply, done: done)) else { return nil }
        done.wait()
        return reply.withLock { $0 }
    }

    /// The samples of the hang under way so far, as ``hangEnded()`` would return them, without
    /// ending it (nil when none was kept, or no hang is under way). Waits for the sample under
    /// way, if any, and the conversion: for the record of a hang in progress, which a process
    /// killed during the hang leaves behind.
    func snapshot() -> SampledHang? {
        let reply = Locked<SampledHang?>(nil)
        let done = DispatchSemaphore(value: 0)
        guard post(.snapshot(reply: reply, done: done)) else { return nil }
        done.wait()
        return reply.withLock { $0 }
    }

    /// What happened to the current or last hang's samples (all zero and not finished from
    /// ``hangBegan(at:source:pingRuns:)`` on).
    var statistics: Statistics {
        published.withLock { $0 }
    }

    /// Waits until sampling of the current hang is over (its bound was reached, the ping ran,
    /// or it ended), at most `timeout` seconds; returns whether it is. For tests and
    /// benchmarks, which would otherwise poll ``statistics``.
    func waitUntilFinished(timeout: Double) -> Bool {
        if statistics.finished { return true }
        let deadline = DispatchTime.now() + .nanoseconds(Int(clamping: nanoseconds(timeout)))
        while finishedSignal.wait(timeout: deadline) == .success {
            if statistics.finished { return true }
        }
        return statistics.finished
    }

    /// Ends the sampler's thread; later calls do nothing.
    func stop() {
        post(.stop)
    }
}

extension StackSampler {
    private struct HangUnderWay {
        let start: UInt64
        let source: StackSource
        let pingRuns: PingRunCounter
        let images: ImageTable
    }

    private enum Command: Sendable {
        case began(start: UInt64, source: StackSource, pingRuns: PingRunCounter)
        case ended(reply: Locked<SampledHang?>, done: DispatchSemaphore)
        case snapshot(reply: Locked<SampledHang?>, done: DispatchSemaphore)
        case stop
    }

    private struct Mailbox {
        var started = false
        var exited = false
        var commands: [Command] = []
    }

    /// Queues `command` for the sampler's thread, creating it on first use. Returns false when
    /// the thread has exited (or never started and the command needs none).
    @discardableResult
    private func post(_ command: Command) -> Bool {
        let posted: Bool = mailbox.withLock { mailbox in
            if mailbox.exited { return false }
            if !mailbox.started {
                guard case .began = command else {
                    if case .stop = command { mailbox.exited = true }
                    return false
                }
                mailbox.started = true
                let thread = Thread { [self] in loop() }
                thread.name = "framescope.stack-sampler"
                thread.qualityOfService = .userInitiated
                thread.start()
            }
            mailbox.commands.append(command)
            return true
        }
        if posted { wakeup.signal() }
        return posted
    }

    /// The sampler's thread: parks, sleeps until the next sample is due, or samples.
    private func loop() {
        while true {
            switch action {
            case .park:
                wakeup.wait()
            case .sleep(let until):
                let wait = until.minus(clock.now())
                _ = wakeup.wait(timeout: .now() + .nanoseconds(Int(clamping: wait)))
            case .sample:
                break
            }
            let commands = mailbox.withLock { mailbox in
                defer { mailbox.commands.removeAll(keepingCapacity: true) }
                return mailbox.commands
            }
            for (position, command) in commands.enumerated() {
                switch command {
                case let .began(start, source, pingRuns):
                    let images = loadImages()
                    buffer.removeAll()
                    idleSamples = 0
                    hang = HangUnderWay(start: start, source: source, pingRuns: pingRuns, images: images)
                    action = schedule.began(at: clock.now(), pingRuns: pingRuns.value)
                    publish(finished: false)
                case let .ended(reply, done):
                    action = schedule.ended()
                    if let result = converted() { reply.withLock { $0 = result } }
                    hang = nil
                    publish(finished: true)
                    done.signal()
                case let .snapshot(reply, done):
                    if let result = converted() { reply.withLock { $0 = result } }
                    done.signal()
                case .stop:
                    action = schedule.ended()
                    hang = nil
                    // Answer every `hangEnded()` still waiting: those after the stop in this
                    // batch, and those posted before the mailbox closed.
                    let late = mailbox.withLock { mailbox in
                        mailbox.exited = true
                        defer { mailbox.commands.removeAll() }
                        return mailbox.commands
                    }
                    for command in commands[(position + 1)...] + late {
                        switch command {
                        case let .ended(_, done), let .snapshot(_, done): done.signal()
                        case .began, .stop: break
                        }
                    }
                    return
                }
            }
            guard let hang else {
                action = .park
                continue
            }
            if case .sleep = action {
                action = schedule.tick(now: clock.now(), pingRuns: hang.pingRuns.value)
            }
            if action == .sample {
                sample(hang)
            }
        }
    }

    /// The samples so far as a ``SampledHang``, or nil with no hang or no sample.
    private func converted() -> SampledHang? {
        guard let hang, buffer.count > 0 else { return nil }
        let (stack, dropped) = buffer.hangStack(images: hang.images, hangStart: hang.start)
        return SampledHang(stack: stack, droppedFrames: dropped, isIdle: idleSamples == buffer.count)
    }

    /// Takes one sample of the hang's thread and lets the schedule judge it.
    private func sample(_ hang: HangUnderWay) {
        let before = hang.pingRuns.value
        let takenAt = clock.now()
        let source = hang.source
        let succeeded = hang.images.textRanges.withUnsafeBufferPointer { text in
            buffer.write(at: takenAt) { slot in source.take(slot, text) }
        }
        let after = hang.pingRuns.value
        let (keep, next) = schedule.sampled(now: clock.now(), pingRunsBefore: before, pingRunsAfter: after,
                                            succeeded: succeeded)
        if succeeded && !keep { buffer.removeLast() }
        if succeeded && keep, let idleClassifier,
           idleClassifier.isIdle(buffer.addresses(ofSample: buffer.count - 1), images: hang.images) {
            idleSamples += 1
        }
        action = next
        publish(finished: next == .park)
    }

    private func publish(finished: Bool) {
        let statistics = Statistics(kept: schedule.kept, dropped: schedule.dropped, failed: schedule.failed,
                                    idle: idleSamples, finished: finished)
        published.withLock { $0 = statistics }
        if finished { finishedSignal.signal() }
    }
}
