/// Infers a display's refresh interval from tick timestamps alone, for recordings that
/// give neither target timestamps nor a refresh rate.
///
/// The interval is taken as known once ``steadyIntervals`` consecutive intervals agree:
/// each within ±5 % of their median. A display that drops frames shows whole multiples
/// of its interval, never a run of equal ones at the wrong length, so twenty equal
/// intervals name the rate without ambiguity. The median is snapped to a common display
/// rate (24, 25, 30, 48, 50, 60, 72, 75, 90, 100, 120, 144, 165, 240 Hz) when one lies
/// within 2 %.
///
/// ```swift
/// var inference = RefreshRateInference()
/// for t in timestamps { if let interval = inference.add(t) { print(1 / interval, "Hz") } }
/// ```
public struct RefreshRateInference: Sendable {
    /// Consecutive intervals that must agree.
    public static let steadyIntervals = 20
    /// Common display rates in Hz that an inferred rate snaps to.
    public static let commonRates: [Double] = [24, 25, 30, 48, 50, 60, 72, 75, 90, 100, 120, 144, 165, 240]

    private var recent: [Double] = []
    private var previous: Double?

    /// An inference that has seen nothing.
    public init() {
        recent.reserveCapacity(Self.steadyIntervals)
    }

    /// Adds the next timestamp (seconds); returns the refresh interval in seconds once
    /// the last ``steadyIntervals`` intervals agree, `nil` until then. Non-finite or
    /// non-increasing timestamps are skipped.
    public mutating func add(_ timestamp: Double) -> Double? {
        guard timestamp.isFinite else { return nil }
        defer { previous = max(previous ?? timestamp, timestamp) }
        guard let previous, timestamp > previous else { return nil }
        let interval = timestamp - previous
        guard FrameAnalyzer.refreshIntervalRange.contains(interval) else { recent.removeAll(keepingCapacity: true); return nil }
        if recent.count == Self.steadyIntervals { recent.removeFirst() }
        recent.append(interval)
        guard recent.count == Self.steadyIntervals else { return nil }
        let median = recent.sorted()[Self.steadyIntervals / 2]
        guard recent.allSatisfy({ abs($0 - median) <= 0.05 * median }) else { return nil }
        return Self.snapped(interval: median)
    }

    /// The median of `intervals` (seconds), ``snapped(interval:)``; `nil` when there are
    /// none. For sources whose intervals vary too much for a steady run (a display that
    /// tears; a page that draws in bursts).
    public static func snappedMedian(of intervals: [Double]) -> Double? {
        guard !intervals.isEmpty else { return nil }
        return snapped(interval: intervals.sorted()[intervals.count / 2])
    }

    /// `interval` (seconds) moved to the nearest of ``commonRates`` when that rate is within
    /// 2 % of it, else `interval` as it is.
    public static func snapped(interval: Double) -> Double {
        let hz = 1 / interval
        if let common = commonRates.min(by: { abs($0 - hz) < abs($1 - hz) }), abs(common - hz) <= 0.02 * common {
            return 1 / common
        }
        return interval
    }
}
