import Atomics
import FramescopeCore

/// Cuts the stream of frame ticks into screen visits: one `FrameAnalyzer` per visit, with
/// the visit's motion (scrolls, animations) as its segments, pauses left out, and late
/// frames that overlapped a busy main thread counted apart.
///
/// It is a value with no threads or clocks of its own: the caller passes every time it
/// needs (``Framescope`` reads the clocks; tests pass made-up times). Use it from one
/// thread, the one that delivers the ticks.
///
/// ```swift
/// var tracker = ScreenTracker()
/// tracker.enter("Feed", now: clock.now(), unixTime: wallClock)   // nil: no visit before
/// tracker.tick(timestamp: t, targetTimestamp: t + 1/60)
/// tracker.beginMotion(); …; tracker.endMotion()
/// let outcome = tracker.enter("Detail", now: clock.now(), unixTime: wallClock)
/// ```
///
/// - **First interval**: each visit's analyzer starts afresh, so the first interval after
///   entering a screen, after ``resume(now:)`` and after a long pause is reported only as
///   `FrameReport.firstFPS` and kept out of every other figure.
/// - **Long pause**: a gap between ticks longer than ``Configuration/longPause`` in which
///   the watchdog did *not* see the main thread busy means the ticks stopped (the display
///   link was paused, the process stopped): the gap is left out, like a pause. A gap in
///   which the main thread was seen busy is a hang and counts. Without a watchdog every gap
///   counts.
/// - **Busy main thread**: a late frame (at least one refresh missed) is checked at the
///   next tick against the latest two busy spans the watchdog published; if it overlaps
///   one, it counts in `MainThreadHitches`.
///
/// - Complexity: ``tick(timestamp:targetTimestamp:refreshInterval:)`` is O(1), allocates
///   nothing and takes no lock: the analyzer's work plus one atomic load.
public struct ScreenTracker {
    /// What makes a visit worth sending, and the engine's thresholds.
    public struct Configuration: Sendable, Hashable {
        /// The engine's thresholds (hang 0.25 s and frozen 0.7 s frames, FPS windows).
        public var analyzer: AnalyzerConfiguration
        /// Visits measured for less than this are dropped and counted, in seconds (default 1 s),
        /// unless they hold a hang (``ClosedVisit/isKeptWhenShort(hangs:)``): ``Framescope``
        /// sends those all the same.
        public var minimumVisitDuration: Double
        /// Visits with fewer measured frames are dropped and counted (default 10), unless they
        /// hold a hang, as for ``minimumVisitDuration``.
        public var minimumVisitFrames: Int
        /// A gap between ticks longer than this, in which the main thread was not seen busy,
        /// is left out as a pause, in seconds (default 1 s).
        public var longPause: Double

        /// Creates a configuration (seconds and frames; see the properties).
        public init(analyzer: AnalyzerConfiguration = AnalyzerConfiguration(), minimumVisitDuration: Double = 1,
                    minimumVisitFrames: Int = 10, longPause: Double = 1) {
            self.analyzer = analyzer
            self.minimumVisitDuration = minimumVisitDuration
            self.minimumVisitFrames = minimumVisitFrames
            self.longPause = longPause
        }

        /// What is wrong with these values, naming the field, or nil when they are usable.
        public var problem: String? {
            if let problem = analyzer.problem { return problem }
            if !(minimumVisitDuration.isFinite && minimumVisitDuration >= 0) {
                return "minimumVisitDuration must be a non-negative number of seconds"
            }
            if minimumVisitFrames < 0 { return "minimumVisitFrames must not be negative" }
            if !(longPause.isFinite && longPause > 0) { return "longPause must be a positive number of seconds" }
            return nil
        }
    }

    /// Counters since the tracker was created.
    public struct Statistics: Sendable, Hashable {
        /// Visits closed and handed on.
        public var visitsFinished = 0
        /// Visits dropped for being shorter than the minimum duration or frame count
        /// (``Framescope`` still sends those that hold a hang, and counts them in
        /// ``Framescope/Statistics/shortVisitsKept``).
        public var visitsDropped = 0
        /// Gaps between ticks left out as long pauses.
        public var longPauses = 0
    }

    /// The thresholds it runs with.
    public let configuration: Configuration
    /// The screen being visited, if any.
    public private(set) var screen: String?
    /// Whether measuring is paused (the app is in the background).
    public private(set) var isPaused = false
    /// Whether motion (a scroll or an animation) is under way.
    public private(set) var isInMotion = false
    /// Custom tags given to every visit that closes from now on (see `VisitContext.tags`).
    public var tags: [String: String] = [:]
    /// Counters since the tracker was created.
    public private(set) var statistics = Statistics()

    private var analyzer: FrameAnalyzer
    /// Keeps the reader (and so its word) alive; the tick path uses `busyWord` and `busyEpoch`.
    private let busySpans: BusySpanReader?
    private let busyWord: UnsafeAtomic<UInt64>?
    private let busyEpoch: UInt64

    // The visit under way.
    private var visitStart: UInt64 = 0
    private var visitUnixStart: Double = 0
    private var activeSince: UInt64 = 0
    private var activeNanoseconds: UInt64 = 0

    // Ticks and the busy-main-thread hint.
    // Tick times stay in seconds as the display link gives them; they are converted to
    // the clock's nanoseconds only when compared with busy spans (rarely), not per tick.
    private var hasTick = false
    private var lastTickTimestamp = 0.0
    private var latestBusyWord: UInt64 = 0
    private var earlierBusyWord: UInt64 = 0
    private var pendingLateStart = 0.0
    private var pendingLateEnd = 0.0
    private var pendingLateness = 0.0
    private var busyFrames = 0
    private var busyHitchTime = 0.0

    /// Creates a tracker. Check ``Configuration/problem`` first for values from users.
    public init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, busySpans: nil)
    }

    /// Creates a tracker that reads the busy spans of `watchdog` for the main-thread hint
    /// and to tell long pauses from hangs.
    public init(configuration: Configuration = Configuration(), watchdog: HangWatchdog) {
        self.init(configuration: configuration, busySpans: watchdog.busySpanReader)
    }

    init(configuration: Configuration, busySpans: BusySpanReader?) {
        self.configuration = configuration
        self.busySpans = busySpans
        busyWord = busySpans?.word
        busyEpoch = busySpans?.epoch ?? 0
        analyzer = FrameAnalyzer(configuration: configuration.analyzer, keepsSegmentReports: false)
    }

    /// Closes the current visit, if any, and starts one of `screen`.
    ///
    /// - Parameters:
    ///   - screen: The screen's name; cut to 128 characters, and "unnamed" when empty.
    ///   - now: The monotonic clock, in nanoseconds (``MonotonicClock``).
    ///   - unixTime: The wall clock, in seconds since 1970, for the visit's `startedAt`.
    /// - Returns: What became of the visit that was closed, or nil when none was open.
    public mutating func enter(_ screen: String, now: UInt64, unixTime: Double) -> VisitOutcome? {
        let outcome = close(now: now)
        self.screen = screen.isEmpty ? "unnamed" : String(screen.prefix(128))
        visitStart = now
        visitUnixStart = unixTime
        activeSince = now
        activeNanoseconds = 0
        if isInMotion { analyzer.beginSegment("motion") }
        return outcome
    }

    /// Closes the current visit without starting another (the app stops measuring).
    /// - Parameter now: The monotonic clock, in nanoseconds.
    /// - Returns: What became of the visit, or nil when none was open.
    public mutating func close(now: UInt64) -> VisitOutcome? {
        guard let screen else { return nil }
        settlePendingLateFrame()
        if !isPaused { activeNanoseconds += now.minus(activeSince) }
        let recording = analyzer.report()
        let visit = ClosedVisit(
            screen: screen, unixStart: visitUnixStart, start: visitStart, end: max(now, visitStart),
            duration: max(seconds(activeNanoseconds), recording.whole.duration),
            report: recording.whole, motion: recording.motion, tags: tags,
            mainThreadHitches: busySpans == nil ? nil : MainThreadHitches(frames: busyFrames, hitchTime: busyHitchTime))
        self.screen = nil
        analyzer = FrameAnalyzer(configuration: configuration.analyzer, keepsSegmentReports: false)
        hasTick = false
        busyFrames = 0
        busyHitchTime = 0
        if visit.duration < configuration.minimumVisitDuration || visit.report.frames < configuration.minimumVisitFrames {
            statistics.visitsDropped += 1
            return .dropped(visit)
        }
        statistics.visitsFinished += 1
        return .finished(visit)
    }

    /// Records one display-refresh tick of the current visit (ignored with no visit or
    /// while paused).
    /// - Parameters:
    ///   - timestamp: When the last frame was shown, in seconds of the monotonic clock
    ///     (`CADisplayLink.timestamp`; ``MonotonicClock`` seconds elsewhere).
    ///   - targetTimestamp: When the next frame is due, in the same seconds, if known.
    ///   - refreshInterval: The nominal refresh interval in seconds, if known.
    public mutating func tick(timestamp: Double, targetTimestamp: Double?, refreshInterval: Double? = nil) {
        guard screen != nil, !isPaused else { return }
        if let busyWord {
            let word = busyWord.load(ordering: .acquiring)
            if word != latestBusyWord {
                // A span that grew, or was withdrawn, replaces its earlier word.
                if !BusySpanReader.isSameSpan(word, latestBusyWord) { earlierBusyWord = latestBusyWord }
                latestBusyWord = word
            }
            settlePendingLateFrame()
            if hasTick, timestamp - lastTickTimestamp > configuration.longPause,
               !wasBusy(from: lastTickTimestamp, to: timestamp) {
                analyzer.pause()
                statistics.longPauses += 1
            }
        }
        let outcome = analyzer.recordTick(timestamp: timestamp, targetTimestamp: targetTimestamp, refreshInterval: refreshInterval)
        switch outcome {
        case let .measured(frame):
            if busyWord != nil, frame.lateness > 0 {
                pendingLateStart = lastTickTimestamp
                pendingLateEnd = timestamp
                pendingLateness = frame.lateness
            }
        case .started, .first:
            break
        case .rejected:
            return
        }
        hasTick = true
        lastTickTimestamp = timestamp
    }

    /// Counts the late frame waiting for its verdict, if any, when it overlapped a busy span.
    private mutating func settlePendingLateFrame() {
        guard pendingLateness > 0 else { return }
        if wasBusy(from: pendingLateStart, to: pendingLateEnd) {
            busyFrames += 1
            busyHitchTime += pendingLateness
        }
        pendingLateness = 0
    }

    /// Whether one of the two latest busy spans overlaps `[start, end]` (tick timestamps,
    /// seconds).
    private func wasBusy(from start: Double, to end: Double) -> Bool {
        let from = nanoseconds(start)
        let to = nanoseconds(end)
        if let span = BusySpanReader.span(latestBusyWord, epoch: busyEpoch), span.overlaps(from: from, to: to) { return true }
        if let span = BusySpanReader.span(earlierBusyWord, epoch: busyEpoch), span.overlaps(from: from, to: to) { return true }
        return false
    }

    /// Motion (a scroll or an animation) begins: frames from now on count in the visit's
    /// motion report as well as in its whole report.
    public mutating func beginMotion() {
        guard !isInMotion else { return }
        isInMotion = true
        if screen != nil { analyzer.beginSegment("motion") }
    }

    /// Motion ends.
    public mutating func endMotion() {
        guard isInMotion else { return }
        isInMotion = false
        analyzer.endSegment()
    }

    /// Stops measuring (the app went to the background): the time until ``resume(now:)``
    /// counts nowhere, neither as visit duration nor as a frame.
    /// - Parameter now: The monotonic clock, in nanoseconds.
    public mutating func pause(now: UInt64) {
        guard !isPaused else { return }
        settlePendingLateFrame()
        isPaused = true
        if screen != nil { activeNanoseconds += now.minus(activeSince) }
        analyzer.pause()
        hasTick = false
    }

    /// Measures again after ``pause(now:)``; the first interval after it is reported as
    /// `FrameReport.firstFPS` only.
    /// - Parameter now: The monotonic clock, in nanoseconds.
    public mutating func resume(now: UInt64) {
        guard isPaused else { return }
        isPaused = false
        activeSince = now
    }

    /// The current visit's report so far (for a live overlay), or nil with no visit.
    public func currentReport() -> RecordingReport? {
        screen == nil ? nil : analyzer.report()
    }
}

/// What ``ScreenTracker`` made of a visit it closed.
public enum VisitOutcome: Sendable {
    /// The visit is long enough to send.
    case finished(ClosedVisit)
    /// The visit was too short (duration or frames) and is counted; it is to be sent only
    /// if it holds a hang (``ClosedVisit/isKeptWhenShort(hangs:)``).
    case dropped(ClosedVisit)
}

/// A visit as the tracker closed it: everything measured on the ticking thread. The SDK's
/// pipeline adds hangs, resources and the device's state to make the wire event.
public struct ClosedVisit: Sendable, Hashable {
    /// The screen's name.
    public var screen: String
    /// When the visit began, in seconds since 1970.
    public var unixStart: Double
    /// When it began, on the monotonic clock, in nanoseconds.
    public var start: UInt64
    /// When it ended, on the monotonic clock, in nanoseconds.
    public var end: UInt64
    /// How long it was measured, in seconds: pauses excluded, and at least the report's duration.
    public var duration: Double
    /// The whole visit's frames.
    public var report: FrameReport
    /// Its frames in motion, or nil when nothing moved.
    public var motion: FrameReport?
    /// The tags at the close.
    public var tags: [String: String]
    /// Late frames that overlapped a busy main thread, or nil without a watchdog.
    public var mainThreadHitches: MainThreadHitches?

    /// The hangs among `hangs` that belong to this visit (their midpoint lies in it), as
    /// the wire records them: offsets from the visit's start, cut to the visit's end (with
    /// the samples of the part cut off). Only the longest
    /// `HangStack.maximumStackedHangsPerVisit` keep their stacks, as the collector accepts.
    public func hangRecords(from hangs: [Hang]) -> [HangRecord] {
        var records: [HangRecord] = hangs.compactMap { hang in
            guard hang.midpoint >= start, hang.midpoint < end else { return nil }
            var record = hang.record(visitStart: start)
            let inside = min(record.duration, seconds(end.minus(start)) - record.offset)
            if inside < record.duration {
                record.duration = inside
                record.stack = record.stack?.window(from: 0, duration: inside)
            }
            return record.duration > 0 ? record : nil
        }
        let stacked = records.indices.filter { records[$0].stack != nil }
        if stacked.count > HangStack.maximumStackedHangsPerVisit {
            let longestFirst = stacked.sorted { records[$0].duration > records[$1].duration }
            for index in longestFirst.dropFirst(HangStack.maximumStackedHangsPerVisit) { records[index].stack = nil }
        }
        return records
    }

    /// Whether this visit, dropped as short (``VisitOutcome/dropped(_:)``), is sent all the
    /// same: it holds a hang, either one the watchdog saw (among `hangs`, from
    /// ``hangRecords(from:)``) or a frame at least as long as the hang threshold, and at
    /// least one measured frame (the collector refuses a visit without one). A screen that
    /// hangs as it opens and is left at once is exactly what should be seen.
    public func isKeptWhenShort(hangs: [HangRecord]) -> Bool {
        report.frames > 0 && (!hangs.isEmpty || report.hangs > 0)
    }

    /// The wire event for this visit.
    /// - Parameters:
    ///   - hangs: Hang records of the visit (``hangRecords(from:)``).
    ///   - resources: CPU and memory over the visit, if sampled.
    ///   - state: The device's network, power and thermal state.
    public func event(hangs: [HangRecord], resources: ResourceUsage?, state: DeviceState) -> ScreenVisitEvent {
        ScreenVisitEvent(
            screen: screen, startedAt: ISO8601.format(unixSeconds: unixStart), duration: duration,
            context: state.visitContext(tags: tags),
            report: report, motion: motion, hangs: hangs, resources: resources, mainThreadHitches: mainThreadHitches)
    }
}
