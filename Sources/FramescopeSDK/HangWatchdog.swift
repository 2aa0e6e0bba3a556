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
/// ## Decisions as values, IO in a shell
/// Two values decide, with no threads or clocks of their own, and are tested with made-up
/// times: `HangDetector` (which hangs began and ended, when to post the ping) and
/// `HangWatchdogPolicy` (busy spans to publish or withdraw, when to start and end stack
/// sampling, when to report progress, the sampling counts; its `BusySpanRule` is what the
/// ping applies on the watched queue). The shell, `HangWatchdog+Core.swift`, owns the thread
/// and feeds them clock readings and the ping's runs (`HangWatchdog+Ping.swift`), then
/// carries out what they return.
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
        core.published.withLock { $0 }
    }
}
