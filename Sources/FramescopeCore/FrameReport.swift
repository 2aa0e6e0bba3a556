/// The smoothness of a span of frames — a recording, a segment, a screen visit or a
/// whole fleet — as counters and histograms that merge exactly.
///
/// A report stores sums, never ratios: every figure such as ``averageFPS``,
/// ``hitchRatio`` or ``stability`` is derived on demand from the sums, so the
/// report of two recordings merged equals the report of both (`docs/metrics.md`).
/// Times are summed as whole nanoseconds in 128 bits (``NanosecondTotal``), which makes
/// merging associative, exact and unable to overflow; they are exposed in seconds.
///
/// ```swift
/// var analyzer = FrameAnalyzer()
/// for tick in ticks { analyzer.record(tick) }
/// let report = analyzer.report().whole
/// print(report.hitchRatio ?? 0, "ms/s")
/// ```
public struct FrameReport: Sendable, Hashable {
    /// Measured frame intervals, the first interval after a start excluded.
    public internal(set) var frames: Int = 0
    /// Σ frame duration D, in nanoseconds.
    public internal(set) var durationNanoseconds: NanosecondTotal = 0
    /// First intervals after a start, resume or screen change (one per start).
    public internal(set) var firstFrames: Int = 0
    /// Σ duration of the first intervals, in nanoseconds.
    public internal(set) var firstDurationNanoseconds: NanosecondTotal = 0
    /// The shortest frame duration, in seconds; `nil` without frames.
    public internal(set) var minFrameDuration: Double?
    /// The longest frame duration, in seconds; `nil` without frames.
    public internal(set) var maxFrameDuration: Double?
    /// Σ dropped frames k over all intervals.
    public internal(set) var droppedFrames: Int = 0
    /// Intervals that dropped at least one frame.
    public internal(set) var dropEvents: Int = 0
    /// The most frames dropped in one interval (0 without drops).
    public internal(set) var maxDroppedFrames: Int = 0
    /// Σ lateness L, in nanoseconds.
    public internal(set) var hitchTimeNanoseconds: NanosecondTotal = 0
    /// Frames at least as long as the hang threshold.
    public internal(set) var hangs: Int = 0
    /// Σ duration of the hang frames, in nanoseconds.
    public internal(set) var hangTimeNanoseconds: NanosecondTotal = 0
    /// Frames that missed at least one refresh and are shorter than the frozen threshold.
    public internal(set) var slowFrames: Int = 0
    /// Frames at least as long as the frozen threshold (never also counted as slow).
    public internal(set) var frozenFrames: Int = 0
    /// Ticks the analyzer refused (non-finite, not increasing, no known refresh interval).
    public internal(set) var rejectedTicks: Int = 0
    /// Frame durations, log-bucketed.
    public internal(set) var frameDurations = DurationHistogram()
    /// Completed FPS windows per window frame rate; keys in hundredths of FPS.
    public internal(set) var windowFPS = Tally()
    /// Frames per nominal refresh rate; keys in whole Hz.
    public internal(set) var refreshRates = Tally()
    /// Half-width of the stability band as a fraction of ``averageFPS`` (0.2 for ±20 %).
    public internal(set) var stabilityBand: Double = 0.2

    /// An empty report.
    public init() {}

    /// An empty report whose ``stability`` uses `stabilityBand`.
    public init(stabilityBand: Double) {
        self.stabilityBand = stabilityBand
    }

    /// Whether nothing at all was recorded: no frames, no first frames, no rejected ticks.
    public var isEmpty: Bool { frames == 0 && firstFrames == 0 && rejectedTicks == 0 }
}

// MARK: - Derived figures

extension FrameReport {
    /// Seconds per nanosecond.
    @usableFromInline static let secondsPerNanosecond = 1e-9

    /// Converts non-negative seconds to whole nanoseconds, rounding to nearest
    /// (`Int64(x + 0.5)`: no libm call on the per-tick path); 9.2 × 10⁹ s (292 years)
    /// or more become `Int64.max` instead of trapping.
    @inlinable @inline(__always)
    static func nanoseconds(_ seconds: Double) -> Int64 {
        seconds < 9.2e9 ? Int64(seconds * 1e9 + 0.5) : .max
    }

    /// Σ frame duration, in seconds.
    public var duration: Double { durationNanoseconds.seconds }
    /// Σ lateness, in seconds.
    public var hitchTime: Double { hitchTimeNanoseconds.seconds }
    /// Σ duration of hang frames, in seconds.
    public var hangTime: Double { hangTimeNanoseconds.seconds }
    /// Σ duration of first intervals, in seconds.
    public var firstDuration: Double { firstDurationNanoseconds.seconds }

    /// frames / duration, in FPS; `nil` without frames.
    public var averageFPS: Double? {
        !durationNanoseconds.isZero ? Double(frames) / duration : nil
    }

    /// FPS of the first interval(s) after a start: firstFrames / firstDuration; `nil` without one.
    public var firstFPS: Double? {
        !firstDurationNanoseconds.isZero ? Double(firstFrames) / firstDuration : nil
    }

    /// The lowest instantaneous FPS (1 / longest frame); `nil` without frames.
    public var minFPS: Double? { maxFrameDuration.map { 1 / $0 } }

    /// The highest instantaneous FPS (1 / shortest frame); `nil` without frames.
    public var maxFPS: Double? { minFrameDuration.map { 1 / $0 } }

    /// Hitch time per second of frames: 1000 · hitchTime / duration, in ms/s; `nil` without frames.
    ///
    /// Apple's guidance: under 5 ms/s good, 5–10 warning, over 10 critical.
    public var hitchRatio: Double? {
        !durationNanoseconds.isZero ? 1000 * hitchTimeNanoseconds.nanoseconds / durationNanoseconds.nanoseconds : nil
    }

    /// Hang time per hour of frames: 3600 · hangTime / duration, in s/h; `nil` without frames.
    public var hangRate: Double? {
        !durationNanoseconds.isZero ? 3600 * hangTimeNanoseconds.nanoseconds / durationNanoseconds.nanoseconds : nil
    }

    /// Share of completed FPS windows whose FPS lies within ±``stabilityBand`` of
    /// ``averageFPS``, from 0 to 1; `nil` without a completed window.
    public var stability: Double? {
        guard let average = averageFPS else { return nil }
        var total = 0
        var within = 0
        let low = average * (1 - stabilityBand)
        let high = average * (1 + stabilityBand)
        for entry in windowFPS.entries {
            total = total.addingSaturated(entry.count)
            let fps = Double(entry.key) / 100
            if fps >= low && fps <= high { within = within.addingSaturated(entry.count) }
        }
        return total > 0 ? Double(within) / Double(total) : nil
    }

    /// Number of completed FPS windows.
    public var windows: Int { windowFPS.total }

    /// The frame duration at quantile `q` (0.95 for p95), in seconds, within 0.79 % of
    /// the exact value and never outside the observed minimum and maximum; `nil` without frames.
    public func frameDuration(atQuantile q: Double) -> Double? {
        guard let estimate = frameDurations.value(atQuantile: q),
              let low = minFrameDuration, let high = maxFrameDuration else { return nil }
        if q >= 1 { return high }
        return min(max(estimate, low), high)
    }
}

// MARK: - Merge

extension FrameReport {
    /// Adds `other` to this report, as if both spans had been recorded by one analyzer
    /// (with a pause between them).
    ///
    /// Counters and times add, minimum and maximum combine, histograms and tallies add.
    /// Nothing traps: times are 128-bit totals, counts saturate at `Int.max`
    /// (`docs/metrics.md`, "Overflow").
    /// The stability band of a non-empty report wins over an empty one's.
    public mutating func merge(_ other: FrameReport) {
        if isEmpty && windowFPS.entries.isEmpty { stabilityBand = other.stabilityBand }
        frames = frames.addingSaturated(other.frames)
        durationNanoseconds += other.durationNanoseconds
        firstFrames = firstFrames.addingSaturated(other.firstFrames)
        firstDurationNanoseconds += other.firstDurationNanoseconds
        minFrameDuration = Self.combine(minFrameDuration, other.minFrameDuration, by: min)
        maxFrameDuration = Self.combine(maxFrameDuration, other.maxFrameDuration, by: max)
        droppedFrames = droppedFrames.addingSaturated(other.droppedFrames)
        dropEvents = dropEvents.addingSaturated(other.dropEvents)
        maxDroppedFrames = max(maxDroppedFrames, other.maxDroppedFrames)
        hitchTimeNanoseconds += other.hitchTimeNanoseconds
        hangs = hangs.addingSaturated(other.hangs)
        hangTimeNanoseconds += other.hangTimeNanoseconds
        slowFrames = slowFrames.addingSaturated(other.slowFrames)
        frozenFrames = frozenFrames.addingSaturated(other.frozenFrames)
        rejectedTicks = rejectedTicks.addingSaturated(other.rejectedTicks)
        frameDurations.merge(other.frameDurations)
        windowFPS.merge(other.windowFPS)
        refreshRates.merge(other.refreshRates)
    }

    /// The report of both spans.
    public func merging(_ other: FrameReport) -> FrameReport {
        var result = self
        result.merge(other)
        return result
    }

    /// The merge of all `reports`; an empty report when there are none.
    public static func merged<S: Sequence>(_ reports: S) -> FrameReport where S.Element == FrameReport {
        var result = FrameReport()
        for report in reports { result.merge(report) }
        return result
    }

    private static func combine(_ a: Double?, _ b: Double?, by pick: (Double, Double) -> Double) -> Double? {
        switch (a, b) {
        case let (a?, b?): return pick(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }
}
