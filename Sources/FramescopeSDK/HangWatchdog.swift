import Atomics
import Dispatch
import FramescopeCore
import Foundation

/// Watches a serial queue (on Apple platforms the main queue) from a background queue and
/// reports hangs while they happen: a hang begins when the queue has made no progress for
/// the threshold (default 0.25 s) and ends when it moves again.
///
/// Frame ticks show a hang only once it is over, as one long frame; the watchdog sees it
/// as it happens, so a hang that never ends (the app is killed) is still reported as
/// begun.
///
/// ```swift
/// let watchdog = HangWatchdog(watching: .main) { event in
///     if case let .ended(hang, _) = event { print("hang of \(hang.duration) s") }
/// }
/// watchdog.start()
/// // app to background:   watchdog.pause()
/// // app to foreground:   watchdog.resume()
/// ```
///
/// ## Design: a ping that must run within the threshold
/// Every check interval, the watchdog's own thread wakes and looks at one *ping*: work
/// that the watchdog posts to the watched queue and that records the time it ran. If the
/// ping has run, the watchdog posts it again. If it has waited for the threshold, a hang
/// has begun; it ends when the ping runs, at the time the ping recorded. At most one ping
/// is in flight.
///
/// The queue stopped keeping up at some moment between the previous ping's run and this
/// ping's post, which no check sees; the hang is dated from the middle of that window
/// (off by at most half a check interval either way), or from the post when no earlier
/// run is known (right after a start, resume or suspension).
///
/// The ping is a user-data dispatch source (`DispatchSource.makeUserDataAddSource`)
/// created once, whose handler runs on the watched queue: `add(data:)` enqueues it behind
/// the work already there, as `async` would enqueue a block. Unlike `async`, it needs no
/// libdispatch continuation: posting a preallocated block with `async` cost one `malloc`
/// per check on Linux, the source none (see docs/sdk.md).
///
/// The alternative, a run-loop observer that signals a semaphore the watchdog waits on,
/// was rejected: it exists only for `CFRunLoop` (not for any `DispatchQueue`, and not
/// testable on Linux), its callback runs on the main thread on every run-loop pass (many
/// times per frame while scrolling), and it needs care to tell an idle run loop from a
/// busy one. The ping measures exactly what a user feels: how long new work waits before
/// the queue runs it.
///
/// ## Clock
/// Times come from a ``MonotonicClock``: by default `CLOCK_MONOTONIC` on Linux and
/// `mach_absolute_time()` (`CLOCK_UPTIME_RAW`) on Darwin, which do not advance while the
/// system sleeps. `CLOCK_BOOTTIME` and `mach_continuous_time()` do, and were not chosen:
/// a device asleep is not an app hanging. The thread's sleeps are timed on `DispatchTime`,
/// the same clock on both systems.
///
/// ## Suspension
/// No clock stops for a stopped process (`SIGSTOP`, a debugger) or an iOS app suspended
/// in the background on an awake device, so the watchdog handles these cases itself:
///
/// - **(a) The watchdog's own check is late.** If a check runs more than
///   ``Configuration/suspensionTolerance`` after it was due, the watchdog itself was not
///   running, and neither was the watched queue: the gap is not evidence of a hang. The
///   measurement restarts (the ping in flight is measured afresh from now, or a new ping
///   is posted); nothing is reported. A hang already reported as begun ends at the last
///   check before the gap, flagged ``HangEnding/suspended``. Because
///   `checkInterval + suspensionTolerance < threshold`, a stop too short to be noticed
///   cannot make a hang on its own.
/// - **(b) ``pause()``** (app in the background) stops checking; the paused time is
///   never counted.
/// - **(c) ``resume()``** starts afresh: the first wait is measured from the resume,
///   even for a ping posted before the pause.
/// - **(d) A hang under way at ``pause()``** ends at the pause, flagged
///   ``HangEnding/paused``; one under way at ``stop()`` ends at the stop, flagged
///   ``HangEnding/stopped``. A hang whose threshold has passed but that no check has
///   seen yet is reported as begun first.
///
/// ## Cost
/// While the queue is healthy, each check reads the clock, takes two uncontended locks
/// and signals the ping source; nothing is allocated (measured: zero `malloc` calls per
/// check over 1,000 checks). The watchdog sleeps on a semaphore with a timeout on a
/// thread of its own (not a dispatch timer, whose wakeups go through a libdispatch worker
/// thread as well), so each check costs two thread wakeups: the watchdog's and the
/// watched queue's for the ping. Those wakeups are nearly all of the cost, so the check
/// interval trades precision against CPU: a hang is reported at most one interval after
/// its threshold and dated to within half an interval. The default 0.125 s (8 checks per
/// second) keeps the watchdog under 0.1 % of a core even where a wakeup costs 50 µs, as on
/// the virtual machine of docs/benchmarks.md; 0.05 s dates hangs to ±25 ms for 2.5 times
/// the wakeups.
///
/// ## Threads
/// The handler is called on the watchdog's own thread, never on the watched queue, one
/// event at a time and in order; keep it short, since checks wait for it. The thread is
/// created by ``start()`` and exits at ``stop()``. ``start()``, ``pause()``, ``resume()``
/// and ``stop()`` may be called from any thread, the handler included (the events such a
/// call causes are then handled inside it); they return after the events they cause have
/// been handled.
public final class HangWatchdog: Sendable {
    /// The watchdog's settings: the threshold, the check interval and the suspension
    /// tolerance, in seconds.
    public struct Configuration: Sendable, Hashable {
        /// No progress for this long is a hang, in seconds (default 0.25 s, Apple's).
        public let threshold: Double
        /// The time between checks, in seconds (default 0.125 s). Shorter detects hangs
        /// sooner and dates them more exactly, at the cost of more wakeups.
        public let checkInterval: Double
        /// How late a check may run before the watchdog takes the process to have been
        /// stopped or suspended, in seconds (default: half of `threshold − checkInterval`,
        /// 0.0625 s with the defaults).
        public let suspensionTolerance: Double
        /// A ping that waits this long marks the watched queue as busy for that span (see
        /// ``latestBusySpan``), in seconds (default 0.034 s: two frames at 60 Hz, more than
        /// any healthy frame's work).
        public let busyThreshold: Double

        /// Creates a configuration. `checkInterval + suspensionTolerance` must be less
        /// than `threshold`, and all of them and `busyThreshold` positive (seconds).
        public init(threshold: Double = 0.25, checkInterval: Double = 0.125, suspensionTolerance: Double? = nil,
                    busyThreshold: Double = 0.034) {
            let tolerance = suspensionTolerance ?? (threshold - checkInterval) / 2
            precondition(busyThreshold.isFinite && busyThreshold > 0, "HangWatchdog: busy threshold must be a positive number of seconds")
            precondition(threshold.isFinite && threshold > 0, "HangWatchdog: threshold must be a positive number of seconds")
            precondition(checkInterval.isFinite && checkInterval > 0, "HangWatchdog: check interval must be a positive number of seconds")
            precondition(tolerance.isFinite && tolerance > 0, "HangWatchdog: suspension tolerance must be a positive number of seconds")
            precondition(checkInterval + tolerance < threshold,
                         "HangWatchdog: check interval + suspension tolerance must be less than the threshold, or a stop could pass for a hang")
            self.threshold = threshold
            self.checkInterval = checkInterval
            self.suspensionTolerance = tolerance
            self.busyThreshold = busyThreshold
        }
    }

    /// Counters since the watchdog was created.
    public struct Statistics: Sendable, Hashable {
        /// Checks made (periodic checks plus one per pause and stop).
        public var checks: Int
        /// Checks that ran later than the suspension tolerance and restarted the
        /// measurement (case (a) above).
        public var suspensions: Int
        /// Hangs reported as begun.
        public var hangs: Int
        /// Hangs whose stack was sampled (the watchdog was made to sample stacks, and the ping
        /// last ran on the thread it samples).
        public var sampledHangs: Int = 0
        /// Hangs not sampled although the watchdog samples stacks: the ping last ran on
        /// another thread (a queue drained by worker threads), or had not run yet.
        public var unsampledHangs: Int = 0
        /// Sampled hangs in which every sample found the thread parked in its run loop's wait
        /// (``Hang/isIdle``).
        public var idleHangs: Int = 0
    }

    /// The settings it runs with.
    public let configuration: Configuration
    private let core: Core

    /// Creates a watchdog for `queue` (a serial queue; on Apple platforms usually
    /// `.main`). It does nothing, and has no thread, until ``start()``.
    ///
    /// - Parameters:
    ///   - queue: The queue to watch. It must be serial: on a concurrent queue the ping
    ///     runs beside the stuck work.
    ///   - configuration: Threshold, check interval and suspension tolerance.
    ///   - clock: The clock hang times are read from (tests drive their own).
    ///   - handler: Called with each ``HangEvent``, on the watchdog's thread.
    public convenience init(watching queue: DispatchQueue, configuration: Configuration = Configuration(),
                            clock: MonotonicClock = .system, handler: @escaping @Sendable (HangEvent) -> Void) {
        self.init(watching: queue, configuration: configuration, clock: clock, stackSampling: nil, handler: handler)
    }

    /// Creates a watchdog for `queue` that also samples the stack of the calling thread while
    /// a hang lasts, every `stackSampleInterval` seconds, at most `maximumSamples` times (1–50):
    /// each ``HangEvent/ended(_:_:)`` then carries ``Hang/stack`` and ``Hang/isIdle``, counted
    /// in ``Statistics/sampledHangs`` and ``Statistics/idleHangs``.
    ///
    /// Call it on the thread that runs `queue`: for `.main`, on the main thread. A hang is
    /// sampled only when the ping last ran on that thread (on Linux the main queue runs on the
    /// main thread only while it runs its run loop, `RunLoop.main.run()`, not under
    /// `dispatch_main()`); otherwise it comes without a stack and counts in
    /// ``Statistics/unsampledHangs``. Where threads cannot be sampled (not Linux or an Apple
    /// platform, or no free signal on Linux), no hang has a stack.
    public convenience init(watching queue: DispatchQueue, configuration: Configuration = Configuration(),
                            clock: MonotonicClock = .system, stackSampleInterval: Double, maximumSamples: Int = 20,
                            handler: @escaping @Sendable (HangEvent) -> Void) {
        precondition(stackSampleInterval.isFinite && stackSampleInterval > 0,
                     "HangWatchdog: the stack sample interval must be a positive number of seconds")
        precondition((1...HangStack.maximumSamples).contains(maximumSamples),
                     "HangWatchdog: 1 to \(HangStack.maximumSamples) samples per hang")
        self.init(watching: queue, configuration: configuration, clock: clock,
                  stackSampling: .callingThread(interval: stackSampleInterval, samples: maximumSamples, clock: clock),
                  handler: handler)
    }

    /// Creates a watchdog that also samples the watched thread's stack while a hang lasts
    /// (`stackSampling`, whose sampler must use the same `clock`): each ``HangEvent/ended(_:_:)``
    /// then carries ``Hang/stack`` and ``Hang/isIdle``. While every sample of a hang under way
    /// shows the thread parked in its run loop's wait, the wait publishes no busy span and
    /// the one already published is withdrawn (``BusySpanReader/retract(start:)``), so the
    /// screen tracker leaves the gap out as a pause.
    ///
    /// `progress`, when given, is called on the watchdog's thread while a hang lasts, after
    /// its ``HangEvent/began(_:)``: at each check that finds a new sample, and at least every
    /// ``progressInterval`` seconds, with the hang so far (its duration up to that check and
    /// the samples so far). It is how the SDK keeps the record of a hang in progress, which a
    /// process killed during the hang leaves behind.
    init(watching queue: DispatchQueue, configuration: Configuration = Configuration(),
         clock: MonotonicClock = .system, stackSampling: HangStackSampling?,
         progress: (@Sendable (Hang) -> Void)? = nil,
         handler: @escaping @Sendable (HangEvent) -> Void) {
        self.configuration = configuration
        core = Core(target: queue, configuration: configuration, clock: clock, stackSampling: stackSampling,
                    progress: progress, handler: handler)
    }

    /// The longest time between two calls of the progress handler while a hang lasts, in
    /// seconds (0.5 s).
    static let progressInterval = 0.5

    deinit {
        stop()
    }

    /// Starts checking the queue, on a thread of the watchdog's own. Does nothing unless
    /// the watchdog is new (use ``resume()`` after ``pause()``).
    public func start() {
        core.run(.start)
    }

    /// Stops checking until ``resume()``, without counting the time in between: for an app
    /// going to the background. A hang under way ends now, flagged ``HangEnding/paused``.
    public func pause() {
        core.run(.pause)
    }

    /// Checks again after ``pause()``, measuring afresh from now. Does nothing unless
    /// paused.
    public func resume() {
        core.run(.resume)
    }

    /// Ends monitoring for good; the watchdog's thread exits. A hang under way ends now,
    /// flagged ``HangEnding/stopped``. Later calls to any method do nothing.
    public func stop() {
        core.run(.stop)
    }

    /// The latest span in which the watched queue was seen busy: a ping waited at least
    /// ``Configuration/busyThreshold``, from when it was posted to when it ran (or, while it
    /// still waits, to the latest check). Times are on the watchdog's clock, to the
    /// millisecond; `nil` until the first such span.
    ///
    /// Read it on the watched queue: the ping that ends a span writes it there, so the
    /// value read there is never older than the work that queue has done. Time in which the
    /// watchdog itself did not run (a stopped process, a pause) never makes a busy span.
    public var latestBusySpan: BusySpan? {
        core.busySpans.latest
    }

    /// The reader of busy spans, for the screen tracker's per-tick check (one atomic load).
    var busySpanReader: BusySpanReader {
        core.busySpans
    }

    /// Counters since the watchdog was created: checks, suspensions noticed, hangs.
    public var statistics: Statistics {
        let sampling = core.samplingCounts.withLock { $0 }
        return core.detector.withLock {
            Statistics(checks: $0.checks, suspensions: $0.suspensions, hangs: $0.hangs, sampledHangs: sampling.sampled,
                       unsampledHangs: sampling.unsampled, idleHangs: sampling.idle)
        }
    }
}

extension HangWatchdog {
    /// A call to one of the public methods, for the watchdog's thread to carry out.
    private enum Command: Sendable {
        case start, pause, resume, stop
    }

    /// A command waiting for the watchdog's thread, and the semaphore its caller waits on.
    private struct Request: Sendable {
        let command: Command
        let done: DispatchSemaphore
    }

    /// Whether the watchdog's thread exists, and the commands waiting for it.
    private struct Mailbox {
        var thread: Thread?
        var exited = false
        var requests: [Request] = []
    }

    /// What the watchdog's thread and the public methods share: the detector, the ping and
    /// where it records its run, the handler, and the thread's mailbox.
    private final class Core: @unchecked Sendable {
        // @unchecked: `nextCheck` and `exiting` are read and written only on the
        // watchdog's thread (in `loop()` and in commands carried out there); every other
        // stored property is immutable or itself thread-safe.
        let clock: MonotonicClock
        let handler: @Sendable (HangEvent) -> Void
        let detector: Locked<HangDetector>
        /// When the ping in flight ran, once it has; taken by the next check.
        let pingRanAt: Locked<UInt64?>
        /// The ping: a user-data dispatch source whose handler runs on the watched queue.
        /// Each `add(data:)` enqueues it there, behind the work already queued.
        let ping: SendableDispatchSource<DispatchSourceUserDataAdd>
        /// The detector's `pingWaitingSince` (0: no ping waiting), for the ping to read on
        /// the watched queue.
        let pingWaitingSince = ManagedAtomic<UInt64>(0)
        /// When the latest check (or start) ran, so a ping can tell a stopped process from
        /// a busy queue.
        let lastCheckAt: ManagedAtomic<UInt64>
        /// Where busy spans are published.
        let busySpans: BusySpanReader
        let busyThreshold: UInt64
        let checkGapTolerance: UInt64
        /// The check interval as the thread's sleeps count it.
        let interval: DispatchTimeInterval
        /// What the thread sleeps on: it times out when a check is due and is signalled
        /// when a command arrives.
        let wakeup = DispatchSemaphore(value: 0)
        let mailbox = Locked(Mailbox())
        /// Stack sampling, when the watchdog samples stacks.
        let stackSampling: HangStackSampling?
        /// Bumped by the ping each time it runs: the sampler stops once it moves.
        let pingRuns = PingRunCounter()
        /// The identity of the thread the ping last ran on (0: none yet).
        let pingThread = ManagedAtomic<UInt64>(0)
        /// The ping wait (its `pingWaitingSince`) found idle so far by the samples of the hang
        /// under way, or 0: neither the checks nor the ping publish a busy span for it.
        let idleWaitSince = ManagedAtomic<UInt64>(0)
        /// Hangs sampled, not sampled, and idle.
        let samplingCounts = Locked((sampled: 0, unsampled: 0, idle: 0))
        /// Whether the hang under way is being sampled. Only the watchdog's thread touches it.
        private var isSamplingHang = false
        /// Called with the hang so far while it lasts (see the initializer).
        let progress: (@Sendable (Hang) -> Void)?
        /// The hang reported as begun and not yet ended, the samples it had at the last
        /// progress call, and when that was (ns). Only the watchdog's thread touches it.
        private var hangUnderWay: (start: UInt64, samples: Int, reportedAt: UInt64)?
        /// When the next check is due; `nil` while not checking (new, paused, stopped).
        /// Only the watchdog's thread touches it.
        private var nextCheck: DispatchTime?
        /// Set on the watchdog's thread by a stop; the thread then exits.
        private var exiting = false

        init(target: DispatchQueue, configuration: Configuration, clock: MonotonicClock,
             stackSampling: HangStackSampling?, progress: (@Sendable (Hang) -> Void)?,
             handler: @escaping @Sendable (HangEvent) -> Void) {
            self.clock = clock
            self.stackSampling = stackSampling
            self.progress = progress
            self.handler = handler
            detector = Locked(HangDetector(
                threshold: nanoseconds(configuration.threshold),
                checkInterval: nanoseconds(configuration.checkInterval),
                suspensionTolerance: nanoseconds(configuration.suspensionTolerance)))
            let pingRanAt = Locked<UInt64?>(nil)
            self.pingRanAt = pingRanAt
            let epoch = clock.now()
            busySpans = BusySpanReader(epoch: epoch)
            lastCheckAt = ManagedAtomic(epoch)
            busyThreshold = nanoseconds(configuration.busyThreshold)
            checkGapTolerance = nanoseconds(configuration.checkInterval + configuration.suspensionTolerance)
            interval = .nanoseconds(Int(nanoseconds(configuration.checkInterval)))
            let ping = DispatchSource.makeUserDataAddSource(queue: target)
            let currentThread = stackSampling?.currentThread
            ping.setEventHandler { [clock, pingWaitingSince, lastCheckAt, busySpans, busyThreshold, checkGapTolerance,
                                    pingRuns, pingThread, idleWaitSince] in
                let now = clock.now()
                if let currentThread {
                    pingThread.store(currentThread(), ordering: .relaxed)
                    pingRuns.bump()
                }
                pingRanAt.withLock { $0 = now }
                // A long wait is a busy span only if the watchdog kept checking meanwhile;
                // otherwise the whole process was stopped and the wait means nothing. A wait
                // its samples found idle is none either.
                let since = pingWaitingSince.load(ordering: .acquiring)
                if since != 0, now.minus(since) >= busyThreshold, since != idleWaitSince.load(ordering: .relaxed),
                   now.minus(lastCheckAt.load(ordering: .relaxed)) <= checkGapTolerance {
                    busySpans.publish(start: since, end: now)
                }
            }
            ping.activate()
            self.ping = SendableDispatchSource(ping)
        }

        /// Carries out `command` on the watchdog's thread and returns once it and the
        /// events it causes are handled: in place when called there (from the handler),
        /// otherwise by waking the thread, which `.start` creates on first use.
        func run(_ command: Command) {
            let done = DispatchSemaphore(value: 0)
            enum Route { case inPlace, posted, nothingToDo }
            let route: Route = mailbox.withLock { mailbox in
                if let thread = mailbox.thread, thread == Thread.current { return .inPlace }
                if mailbox.exited { return .nothingToDo }
                if mailbox.thread == nil {
                    // No thread yet: only a start needs one; a stop just ends the detector,
                    // and marks the watchdog exited so that later calls do nothing.
                    guard case .start = command else {
                        if case .stop = command { mailbox.exited = true }
                        return .nothingToDo
                    }
                    let thread = Thread { [self] in loop() }
                    thread.name = "framescope.hang-watchdog"
                    thread.qualityOfService = .userInitiated
                    mailbox.thread = thread
                    thread.start()
                }
                mailbox.requests.append(Request(command: command, done: done))
                return .posted
            }
            switch route {
            case .inPlace:
                carryOut(command)
            case .posted:
                wakeup.signal()
                done.wait()
            case .nothingToDo:
                // Never started, or stopped: the detector has nothing to report.
                if case .stop = command { stop() }
            }
        }

        /// The watchdog's thread: sleeps until a check is due or a command arrives.
        private func loop() {
            while !exiting {
                let signalled: Bool
                if let due = nextCheck {
                    signalled = wakeup.wait(timeout: due) == .success
                } else {
                    wakeup.wait()
                    signalled = true
                }
                if signalled {
                    let requests = mailbox.withLock { mailbox in
                        defer { mailbox.requests.removeAll() }
                        return mailbox.requests
                    }
                    for request in requests {
                        carryOut(request.command)
                        request.done.signal()
                    }
                } else if let due = nextCheck {
                    check()
                    // The next check is one interval after this one was due; after a late
                    // wakeup (a stop of the process), one interval from now.
                    let next = due + interval
                    let now = DispatchTime.now()
                    if nextCheck != nil { nextCheck = next > now ? next : now + interval }
                }
            }
            // Answer whoever posted a command after the stop was taken.
            let late = mailbox.withLock { mailbox in
                mailbox.exited = true
                defer { mailbox.requests.removeAll() }
                return mailbox.requests
            }
            for request in late { request.done.signal() }
        }

        /// Carries out `command` on the watchdog's thread.
        private func carryOut(_ command: Command) {
            switch command {
            case .start, .resume:
                let from: HangDetector.Phase = command == .start ? .idle : .paused
                guard detector.withLock({ $0.phase == from }) else { return }
                begin()
                nextCheck = DispatchTime.now() + interval
            case .pause:
                guard detector.withLock({ $0.phase == .running }) else { return }
                pause()
                nextCheck = nil
            case .stop:
                stop()
                nextCheck = nil
                exiting = true
            }
        }

        /// A periodic check, on the watchdog's thread.
        func check() {
            let now = clock.now()
            let ranAt = takePingRun()
            let (action, since) = detector.withLock { ($0.check(now: now, pingRanAt: ranAt), $0.pingWaitingSince) }
            if let since, ranAt == nil { judgeIdle(waitingSince: since) }
            // A late check (a stop) restarts the wait at `now`, so only a real wait passes.
            if let since, ranAt == nil, now.minus(since) >= busyThreshold,
               since != idleWaitSince.load(ordering: .relaxed) {
                // The ping still waits: the queue has been busy since it was posted.
                busySpans.publish(start: since, end: now)
            }
            perform(action, now: now, waitingSince: since)
            if ranAt == nil { reportProgress(now: now) }
        }

        /// Calls the progress handler for the hang under way when a new sample came, or half
        /// a second passed since the last call.
        private func reportProgress(now: UInt64) {
            guard let progress, let underWay = hangUnderWay else { return }
            let samples = isSamplingHang ? stackSampling?.sampler.statistics.kept ?? 0 : 0
            guard samples != underWay.samples
                    || now.minus(underWay.reportedAt) >= nanoseconds(HangWatchdog.progressInterval) else { return }
            hangUnderWay = (underWay.start, samples, now)
            var hang = Hang(start: underWay.start, duration: seconds(now.minus(underWay.start)))
            if samples > 0, let sampled = stackSampling?.sampler.snapshot() {
                hang.stack = sampled.stack
                hang.isIdle = sampled.isIdle
            }
            progress(hang)
        }

        func begin() {
            let now = clock.now()
            let (action, since) = detector.withLock { ($0.start(now: now), $0.pingWaitingSince) }
            perform(action, now: now, waitingSince: since)
        }

        func pause() {
            let now = clock.now()
            let ranAt = takePingRun()
            let action = detector.withLock { $0.pause(now: now, pingRanAt: ranAt) }
            perform(action, now: now, waitingSince: nil)
        }

        func stop() {
            let now = clock.now()
            let ranAt = takePingRun()
            let action = detector.withLock { $0.stop(now: now, pingRanAt: ranAt) }
            perform(action, now: now, waitingSince: nil)
            ping.source.cancel()
            stackSampling?.sampler.stop()
        }

        /// While a sampled hang's ping still waits (since `since`): when every sample so far
        /// shows the thread parked in its run loop's wait, withdraws the wait's busy span and
        /// publishes none for it; when a later sample shows it at work, publishes again.
        private func judgeIdle(waitingSince since: UInt64) {
            guard isSamplingHang, let sampler = stackSampling?.sampler else { return }
            let statistics = sampler.statistics
            let idle = statistics.kept > 0 && statistics.idle == statistics.kept
            let marked = idleWaitSince.load(ordering: .relaxed) == since
            if idle && !marked {
                idleWaitSince.store(since, ordering: .relaxed)
                busySpans.retract(start: since)
            } else if !idle && marked {
                idleWaitSince.store(0, ordering: .relaxed)
            }
        }

        /// Starts or ends the stack sampling of a hang, on the watchdog's thread, and returns
        /// the event to report: an ended hang gets its stack and idle verdict.
        private func sampled(_ event: HangEvent, by sampling: HangStackSampling) -> HangEvent {
            switch event {
            case let .began(hang):
                if let source = sampling.source(pingThread.load(ordering: .relaxed)) {
                    sampling.sampler.hangBegan(at: hang.start, source: source, pingRuns: pingRuns)
                    isSamplingHang = true
                    samplingCounts.withLock { $0.sampled += 1 }
                } else {
                    samplingCounts.withLock { $0.unsampled += 1 }
                }
                return event
            case .ended(var hang, let ending):
                guard isSamplingHang else { return event }
                isSamplingHang = false
                if let result = sampling.sampler.hangEnded() {
                    hang.stack = result.stack
                    hang.isIdle = result.isIdle
                    if result.isIdle { samplingCounts.withLock { $0.idle += 1 } }
                }
                return .ended(hang, ending)
            }
        }

        private func takePingRun() -> UInt64? {
            pingRanAt.withLock { ranAt in
                defer { ranAt = nil }
                return ranAt
            }
        }

        /// Publishes the detector's state for the ping, then posts it and reports the events.
        /// `waitingSince` nil (paused, stopped) means a ping that runs now measures nothing.
        private func perform(_ action: HangDetector.Action, now: UInt64, waitingSince: UInt64?) {
            lastCheckAt.store(now, ordering: .relaxed)
            pingWaitingSince.store(waitingSince ?? 0, ordering: .releasing)
            if action.postPing {
                ping.source.add(data: 1)
            }
            for event in action.events {
                switch event {
                case let .began(hang): hangUnderWay = (hang.start, 0, now)
                case .ended: hangUnderWay = nil
                }
                handler(stackSampling.map { sampled(event, by: $0) } ?? event)
            }
        }
    }
}
