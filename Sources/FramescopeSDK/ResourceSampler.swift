import Dispatch
import FramescopeCore

/// Samples the process's CPU use and resident memory at an interval on a background
/// queue, and summarises each window (a screen visit) as a `ResourceUsage`: minimum,
/// mean and maximum.
///
/// ```swift
/// let sampler = ResourceSampler(interval: 1)
/// sampler.startWindow()                    // entering the screen
/// // …
/// event.resources = sampler.finishWindow() // leaving it
/// ```
///
/// **CPU** is in percent of one core, summed over the process's threads (two busy threads
/// read 200 %). Each sample is the CPU time used since the previous sample over the wall
/// time between them, both on ``MonotonicClock``. On Linux, CPU time is `utime + stime`
/// from `/proc/self/stat`, counted in clock ticks (`sysconf(_SC_CLK_TCK)`, usually 100 per
/// second): a 1 s sample is exact to about 1 percentage point. On Darwin it is
/// `getrusage(RUSAGE_SELF)`.
///
/// **Resident memory** is in bytes, read at each sample: on Linux the second field of
/// `/proc/self/statm` times the page size, on Darwin `resident_size` from
/// `task_info(MACH_TASK_BASIC_INFO)`.
///
/// The timer runs only while a window is open. ``startWindow()`` reads the counters as the
/// baseline; the timer then samples every interval; ``finishWindow()`` adds a last sample
/// for the remainder when it spans at least half an interval (or when the window has no
/// sample yet), so a short remainder, whose CPU figure would be mostly rounding, does not
/// count as a full sample.
///
/// All methods may be called from any thread. ``finishWindow()`` reads two small files (or
/// makes two system calls) on the calling thread.
public final class ResourceSampler: Sendable {
    /// The time between samples, in seconds.
    public let interval: Double
    private let clock: MonotonicClock
    private let read: @Sendable () -> ResourceReading?
    private let state: Locked<State>
    private let timer: SendableDispatchSource<DispatchSourceTimer>

    private struct State {
        var window: ResourceWindow?
        /// The time and reading of the last sample or of the window's start.
        var last: (time: UInt64, reading: ResourceReading)?

        /// Adds a sample from the last reading to `reading` at `now`, if a window is open
        /// and time has passed. Unless `always`, only when the span is at least
        /// `minimumSpan` or the window has no sample yet.
        mutating func add(_ reading: ResourceReading, at now: UInt64, always: Bool, minimumSpan: UInt64 = 0) {
            guard var window, let last, now > last.time else { return }
            let span = now - last.time
            guard always || span >= minimumSpan || window.samples == 0 else { return }
            window.add(cpuSeconds: reading.cpuSeconds - last.reading.cpuSeconds, wallSeconds: seconds(span),
                       residentBytes: reading.residentBytes)
            self.window = window
            self.last = (now, reading)
        }
    }

    /// Creates a sampler that samples every `interval` seconds (default 1 s) while a window
    /// is open.
    public convenience init(interval: Double = 1) {
        self.init(interval: interval, clock: .system, read: ResourceReading.current)
    }

    /// Creates a sampler with its clock and its source of readings (tests pass their own).
    init(interval: Double, clock: MonotonicClock, read: @escaping @Sendable () -> ResourceReading?) {
        precondition(interval.isFinite && interval > 0, "ResourceSampler: interval must be a positive number of seconds")
        self.interval = interval
        self.clock = clock
        self.read = read
        let state = Locked(State())
        self.state = state
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "framescope.resource-sampler", qos: .utility))
        source.setEventHandler { [clock] in
            let now = clock.now()
            guard let reading = read() else { return }
            state.withLock { $0.add(reading, at: now, always: true) }
        }
        // An active timer without a schedule never fires; an inactive one may not be released.
        source.activate()
        timer = SendableDispatchSource(source)
    }

    deinit {
        timer.source.cancel()
    }

    /// Opens a window: reads the counters now as its baseline and starts sampling. A window
    /// already open is discarded.
    public func startWindow() {
        let now = clock.now()
        let reading = read()
        state.withLock { state in
            state.window = ResourceWindow()
            state.last = reading.map { (now, $0) }
        }
        let interval = DispatchTimeInterval.nanoseconds(Int(nanoseconds(interval)))
        timer.source.schedule(deadline: .now() + interval, repeating: interval, leeway: .nanoseconds(Int(self.interval * 1e8)))
    }

    /// Closes the window and returns its CPU and memory figures, or nil when no window is
    /// open or no sample could be taken (the counters could not be read).
    public func finishWindow() -> ResourceUsage? {
        timer.source.schedule(deadline: .distantFuture, repeating: .never)
        let now = clock.now()
        let reading = read()
        let minimumSpan = nanoseconds(interval) / 2
        return state.withLock { state in
            if let reading {
                state.add(reading, at: now, always: false, minimumSpan: minimumSpan)
            }
            defer {
                state.window = nil
                state.last = nil
            }
            return state.window?.usage
        }
    }
}
