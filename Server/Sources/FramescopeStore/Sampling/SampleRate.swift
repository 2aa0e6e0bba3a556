import FramescopeCore

/// A batch's sample rate (``EventBatch/sampleRate``, the share of installations that
/// measure) as the stores key it: a whole number of parts per million, so that two batches
/// sent at `0.1` count under one rate, whatever their last binary digit.
///
/// The rate is device-supplied: an ingest key's holder may claim any rate from 0.000001 to 1. It
/// changes only which rates the figures are said to come from (``SampleRateVisits``), never
/// a figure: visits are counted as they arrived, not scaled.
public enum SampleRate {
    /// Every installation measures (a batch without `sampleRate`): 1 000 000 parts per million.
    public static let full = 1_000_000

    /// `rate` in parts per million, rounded to the nearest and kept within 1…1 000 000.
    /// Validation refuses a rate outside 0.000001…1 (``EventBatch/isValidSampleRate(_:)``),
    /// so no rate a batch claims is stored as a different one by the bounds (before issue 43
    /// a rate below half a millionth was counted as one millionth).
    public static func partsPerMillion(of rate: Double) -> Int {
        guard rate.isFinite else { return full }
        let parts = Int((min(max(rate, 0), 1) * Double(full)).rounded())
        return min(max(parts, 1), full)
    }

    /// The rate (0–1) of `partsPerMillion`.
    public static func rate(partsPerMillion: Int) -> Double {
        Double(partsPerMillion) / Double(full)
    }
}

/// How many screen visits arrived at one sample rate over a range: an entry of
/// `GET /v1/apps/{app}/sample-rates` (``SampleRateStore/sampleRates(app:from:to:)``).
public struct SampleRateVisits: Sendable, Hashable, Codable {
    /// The share of installations that measured, 0–1 (exclusive of 0), to the millionth.
    public var sampleRate: Double
    /// Screen visits that arrived at that rate, as counted (not scaled by the rate).
    public var visits: Int

    /// An entry.
    public init(sampleRate: Double, visits: Int) {
        self.sampleRate = sampleRate
        self.visits = visits
    }

    /// An entry from a stored rate in parts per million.
    public init(partsPerMillion: Int, visits: Int) {
        self.init(sampleRate: SampleRate.rate(partsPerMillion: partsPerMillion), visits: visits)
    }

    /// The `limit` entries of `entries` with the most visits (then the lower rate), by rate
    /// (lowest first), and how many rates and visits the rest hold: a list a device can make
    /// as long as it likes (any rate from 0.000001 to 1 is a claim), held to a length a page or an
    /// answer can show (issue 43: 20,000 rates made a 450 KiB sentence).
    /// - Complexity: O(n log n) for n entries.
    public static func mostVisited(_ entries: [SampleRateVisits], limit: Int) -> (kept: [SampleRateVisits], otherRates: Int, otherVisits: Int) {
        let counted = entries.filter { $0.visits > 0 }
        guard counted.count > limit else { return (counted.sorted { $0.sampleRate < $1.sampleRate }, 0, 0) }
        let byVisits = counted.sorted { ($1.visits, $0.sampleRate) < ($0.visits, $1.sampleRate) }
        let kept = byVisits.prefix(max(0, limit)).sorted { $0.sampleRate < $1.sampleRate }
        let rest = byVisits.dropFirst(max(0, limit))
        return (kept, rest.count, rest.reduce(0) { $0 + $1.visits })
    }

    /// Whether every visit of `entries` came from installations that all measure (rate 1):
    /// then no figure needs to say where it comes from.
    public static func allFull(_ entries: [SampleRateVisits]) -> Bool {
        entries.allSatisfy { $0.sampleRate >= 1 || $0.visits == 0 }
    }
}

extension SampleRate {
    /// The UTC days that `[from, to)` (Unix seconds) touches, as the start of the first and
    /// the end of the last, Unix seconds: what a count kept per day answers for the range.
    /// Empty (`start == end`) when `to` is not after `from`.
    public static func days(from: Double, to: Double) -> (start: Int64, end: Int64) {
        let start = IngestPlanner.day(of: from)
        guard to > from else { return (start, start) }
        let end = IngestPlanner.day(of: to.rounded(.up) - 1) + 86_400
        return (start, max(start, end))
    }
}
