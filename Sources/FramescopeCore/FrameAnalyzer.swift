/// Turns a stream of frame ticks into a ``RecordingReport``, one tick at a time.
///
/// Feed it every display-refresh tick with ``record(_:)``. Cut the stream into
/// segments — one per scroll gesture or animation — with ``beginSegment(_:)`` and
/// ``endSegment()``; call ``pause()`` when measuring stops (the app went to the
/// background) so the gap counts as nothing. ``report()`` can be taken at any time.
///
/// ```swift
/// var analyzer = FrameAnalyzer()
/// analyzer.beginSegment("scroll 1")
/// for tick in ticks { analyzer.record(tick) }
/// analyzer.endSegment()
/// let report = analyzer.report()
/// report.whole.hitchRatio      // ms of hitch per s, whole recording
/// report.motion?.hitchRatio    // ms of hitch per s while scrolling
/// ```
///
/// - Complexity: ``record(_:)`` is O(1), allocates nothing, takes no lock and does
///   no I/O. Memory is constant in the number of ticks; it grows only by one
///   finished ``SegmentReport`` per segment.
public struct FrameAnalyzer: Sendable {
    /// The thresholds this analyzer measures with.
    public let configuration: AnalyzerConfiguration
    /// Where the ticks come from, which decides how the first interval and early ticks count.
    public let timing: TickTiming

    // Each interval is counted in exactly one accumulator: the open segment's, or
    // `outside`'s. The whole recording is their merge with the finished segments,
    // plus `wholeWindows`, whose FPS windows run across segment boundaries.
    private var outside: FrameAccumulator
    private var segment: FrameAccumulator
    private var wholeWindows: WindowCounter
    private var segmentLabel: String?
    private let keepsSegmentReports: Bool
    private var finishedSegments: [SegmentReport] = []
    /// The finished segments merged (no frames: none yet).
    private var finishedMotion = FrameReport()

    private var hasPrevious = false
    private var awaitingFirstInterval = true
    private var previousTimestamp = 0.0
    private var previousTarget = 0.0
    private var cachedExpected = -1.0
    private var cachedRefreshRate = 0

    /// Creates an analyzer.
    /// - Parameters:
    ///   - configuration: Thresholds; check ``AnalyzerConfiguration/problem`` first
    ///     for values that come from users.
    ///   - keepsSegmentReports: Whether ``report()`` lists each finished segment. With
    ///     `false`, finished segments count only in the merged motion report, so memory
    ///     stays constant however many segments a long recording has (the SDK's choice).
    ///   - timing: Where the ticks come from: a display link (the default) or another
    ///     tool's recording of display times (``TickTiming``).
    public init(configuration: AnalyzerConfiguration = AnalyzerConfiguration(), keepsSegmentReports: Bool = true, timing: TickTiming = .displayLink) {
        self.configuration = configuration
        self.timing = timing
        self.keepsSegmentReports = keepsSegmentReports
        outside = FrameAccumulator(configuration: configuration, tracksWindows: false)
        segment = FrameAccumulator(configuration: configuration, tracksWindows: true)
        wholeWindows = WindowCounter(windowLength: configuration.windowLength)
    }

    /// Whether a segment is open.
    public var isInSegment: Bool { segmentLabel != nil }

    /// Records one tick and says what it measured.
    ///
    /// A tick is rejected — counted in ``FrameReport/rejectedTicks`` and otherwise
    /// ignored — when its timestamp is not finite, not after the previous accepted one
    /// or more than ``maximumTickGap`` after it; when its target is not finite or not
    /// 1 ms to 1 s after its timestamp (a display refreshes at 1 to 1,000 Hz); or when
    /// no refresh interval is known for it.
    @discardableResult
    @inlinable
    public mutating func record(_ tick: FrameTick) -> TickOutcome {
        recordTick(timestamp: tick.timestamp, targetTimestamp: tick.targetTimestamp, refreshInterval: tick.refreshInterval)
    }

    /// Records one tick given as separate values; see ``record(_:)``.
    /// - Parameters:
    ///   - timestamp: When the last frame was shown, in seconds.
    ///   - targetTimestamp: When the next frame is due, in seconds, if known.
    ///   - refreshInterval: Nominal refresh interval in seconds, if known.
    @discardableResult
    public mutating func recordTick(timestamp: Double, targetTimestamp: Double?, refreshInterval: Double?) -> TickOutcome {
        guard timestamp.isFinite else { return reject(.nonFiniteTimestamp) }
        let target: Double
        if let targetTimestamp {
            let expected = targetTimestamp - timestamp
            guard expected >= Self.refreshIntervalRange.lowerBound, expected <= Self.refreshIntervalRange.upperBound else {
                return reject(.invalidTarget)
            }
            target = targetTimestamp
        } else if let interval = refreshInterval ?? configuration.refreshInterval, interval.isFinite, interval > 0 {
            guard Self.refreshIntervalRange.contains(interval) else { return reject(.invalidTarget) }
            target = timestamp + interval
        } else {
            return reject(.unknownRefreshInterval)
        }
        guard hasPrevious else {
            hasPrevious = true
            previousTimestamp = timestamp
            previousTarget = target
            return .started
        }
        guard timestamp > previousTimestamp else { return reject(.notIncreasing) }
        guard timestamp - previousTimestamp <= Self.maximumTickGap else { return reject(.gapTooLong) }

        let frame = FrameInterval(previousTimestamp: previousTimestamp, previousTarget: previousTarget, timestamp: timestamp,
                                  clampsEarly: timing == .displayLink)
        // 1/E changes only when the refresh rate does; skip the division otherwise.
        let drift = frame.expected - cachedExpected
        if drift > 1e-9 || drift < -1e-9 {
            cachedExpected = frame.expected
            cachedRefreshRate = frame.refreshRate
        }
        let sample = FrameSample(frame, start: previousTimestamp, refreshRate: cachedRefreshRate)
        previousTimestamp = timestamp
        previousTarget = target
        if awaitingFirstInterval, timing == .displayLink {
            awaitingFirstInterval = false
            outside.recordFirst(sample)
            return .first(frame)
        }
        if segmentLabel == nil {
            outside.record(sample, endingAt: timestamp)
        } else {
            segment.record(sample, endingAt: timestamp)
        }
        wholeWindows.count(sample, endingAt: timestamp)
        return .measured(frame)
    }

    /// The refresh intervals a tick may declare, in seconds: a display refreshes at
    /// 1 to 1,000 Hz (``FrameReport/maximumRefreshRate``), a little rounding allowed.
    public static let refreshIntervalRange: ClosedRange<Double> = 0.000_999_9...1.000_1

    /// The longest gap between two accepted ticks, in seconds (10⁶ s, 11.6 days): a tick
    /// further on is a corrupt timestamp, not a frame.
    public static let maximumTickGap: Double = 1_000_000

    private mutating func reject(_ reason: TickRejection) -> TickOutcome {
        outside.recordRejected()
        return .rejected(reason)
    }

    /// Records `count` frames known only by their duration, such as a bucket of another
    /// tool's frame-time histogram, whose order and times are lost.
    ///
    /// Each counts as a measured interval of `duration` on a display refreshing every
    /// `refreshInterval`: in frames, drops, hitch time, hangs, slow and frozen frames, the
    /// duration histogram and the refresh rates, exactly as a tick `duration` after the
    /// previous one would (a frame shorter than the interval counts as the interval, as an
    /// early frame does). They form no FPS window, belong to no segment, and leave the tick
    /// sequence untouched.
    /// - Parameters:
    ///   - duration: Seconds per frame; more than 0 and at most ``maximumTickGap``.
    ///   - count: How many frames; 0 records nothing.
    ///   - refreshInterval: The display's refresh interval in seconds, within
    ///     ``refreshIntervalRange``.
    /// - Returns: `false`, recording nothing, when a value is outside those ranges.
    @discardableResult
    public mutating func recordFrames(duration: Double, count: Int, refreshInterval: Double) -> Bool {
        guard duration > 0, duration <= Self.maximumTickGap, count >= 0,
              Self.refreshIntervalRange.contains(refreshInterval) else { return false }
        let frame = FrameInterval(previousTimestamp: 0, previousTarget: refreshInterval, timestamp: duration)
        outside.record(FrameSample(frame, start: 0, refreshRate: frame.refreshRate), count: count)
        return true
    }

    /// Starts a segment named `label`; an open segment is ended first.
    ///
    /// An interval belongs to the segment of the tick that ends it, so intervals
    /// recorded from now on count in this segment as well as in the whole recording.
    public mutating func beginSegment(_ label: String) {
        if segmentLabel != nil { endSegment() }
        segmentLabel = label
    }

    /// Ends the open segment, if any. A segment that measured no interval is not kept.
    public mutating func endSegment() {
        guard let label = segmentLabel else { return }
        let report = segment.report()
        if report.frames > 0 {
            if keepsSegmentReports {
                finishedSegments.append(SegmentReport(label: label, report: report))
            }
            finishedMotion.merge(report)
        }
        segment = FrameAccumulator(configuration: configuration, tracksWindows: true)
        segmentLabel = nil
    }

    /// Stops measuring until the next tick: the gap until then counts nowhere, the
    /// incomplete FPS windows are dropped, and the first interval after the pause is
    /// reported as ``FrameReport/firstFPS`` only. An open segment stays open.
    public mutating func pause() {
        hasPrevious = false
        awaitingFirstInterval = true
        wholeWindows.discardOpenWindow()
        segment.discardOpenWindow()
    }

    /// Breaks the tick sequence without a transition: the time until the next tick is no
    /// frame's (the source drew nothing because nothing on its screen changed, as a web page
    /// between gestures), and the incomplete FPS windows are dropped; unlike after
    /// ``pause()``, the interval after the next tick is an ordinary frame, not a first one.
    /// An open segment stays open.
    public mutating func skipIdleGap() {
        hasPrevious = false
        wholeWindows.discardOpenWindow()
        segment.discardOpenWindow()
    }

    /// The report of everything recorded so far. An open segment is included as it
    /// stands; incomplete FPS windows are left out.
    public func report() -> RecordingReport {
        var segments = finishedSegments
        var whole = outside.report()
        whole.merge(finishedMotion)
        var motion = finishedMotion
        if let label = segmentLabel {
            let open = segment.report()
            if open.frames > 0 {
                if keepsSegmentReports {
                    segments.append(SegmentReport(label: label, report: open))
                }
                whole.merge(open)
                motion.merge(open)
            }
        }
        whole.windowFPS = wholeWindows.compacted()
        var recording = RecordingReport(whole: whole, motion: motion.frames > 0 ? motion : nil)
        if keepsSegmentReports { recording.segments = segments }
        return recording
    }
}

/// Where a ``FrameAnalyzer``'s ticks come from, which decides two rules of docs/metrics.md.
public enum TickTiming: Sendable, Hashable {
    /// A display link on the device (the SDK, Framescope's own CSV and JSON): the first
    /// interval after a start or a pause is the screen's transition and is kept apart
    /// (``FrameReport/firstFPS``), and a tick before its target is a frame shown early,
    /// counted as on time (D = max(tᵢ, Tₚ) − tₚ).
    case displayLink
    /// Display times another tool recorded (PresentMon, Chrome, SurfaceFlinger,
    /// Instruments): the recording was cut from a longer session, so its first interval
    /// counts like any other, and a tick before its target is jitter of the recorded time
    /// around the vsync, counted at its own length (D = Δ), so that ``FrameReport/averageFPS``
    /// is the frames over the span, as the tools compute it.
    case recordedDisplayTimes
}

/// What ``FrameAnalyzer/record(_:)`` made of one tick.
public enum TickOutcome: Sendable, Hashable {
    /// The first accepted tick after a start or a pause: no interval to measure yet.
    case started
    /// The first interval after a start or a pause, counted only as ``FrameReport/firstFPS``.
    case first(FrameInterval)
    /// An interval counted in the report (and in the open segment, if any).
    case measured(FrameInterval)
    /// The tick was refused and counted in ``FrameReport/rejectedTicks``.
    case rejected(TickRejection)
}

/// Why a tick was refused.
public enum TickRejection: String, Sendable, Hashable, CaseIterable {
    /// The timestamp is NaN or infinite.
    case nonFiniteTimestamp
    /// The timestamp is not after the previous accepted tick's.
    case notIncreasing
    /// The target timestamp is NaN, infinite, or not 1 ms to 1 s after the timestamp (or
    /// the declared refresh interval lies outside that range).
    case invalidTarget
    /// The timestamp is more than ``FrameAnalyzer/maximumTickGap`` after the previous
    /// accepted tick's.
    case gapTooLong
    /// Neither a target timestamp nor a refresh interval is known for the tick.
    case unknownRefreshInterval
}
