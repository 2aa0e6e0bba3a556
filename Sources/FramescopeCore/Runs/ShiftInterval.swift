/// The shift between two samples (candidate − baseline) with a rank-based confidence
/// interval: the Hodges–Lehmann estimate (the median of every pairwise difference) and the
/// Mann–Whitney interval (Moses), which assume only that the candidate's values are the
/// baseline's shifted, not that either is normal.
///
/// Chosen for 5–20 runs a side of skewed figures with ties (hitch ratios, drop counts):
/// a run that hit a stall moves a mean and a t-interval far, a rank statistic by one rank.
/// The interval's rank comes from the exact null distribution of the Mann–Whitney U
/// (``MannWhitneyCounts``, compared with α in integers) whenever counting it costs at most
/// ``exactWorkLimit`` word additions — every pair of sizes up to 150 a side, and any size
/// when one side is small — and from a normal approximation beyond, whose coverage
/// docs/metrics.md states as measured. Ties make it conservative.
///
/// The pairwise differences are never stored: each order statistic is found by bisecting the
/// ordered `Double`s and counting the differences at or below a value in one pass over the two
/// sorted samples, so memory is O(m + n) and time O((m + n) · 64) past the sort.
///
/// ```swift
/// let shift = ShiftInterval(baseline: [4.1, 3.9, 4.4, 4.0, 4.2], candidate: [6.0, 5.7, 6.3, 5.9, 6.1],
///                           level: SignificanceLevel(numerator: 1, denominator: 20)!)
/// shift?.estimate   // 1.9
/// shift?.lower      // the interval's lower end, > 0: the candidate is higher
/// ```
public struct ShiftInterval: Sendable, Hashable {
    /// The Hodges–Lehmann estimate of the shift, in the values' unit.
    public var estimate: Double
    /// The interval's lower end, in the values' unit.
    public var lower: Double
    /// The interval's upper end, in the values' unit.
    public var upper: Double
    /// The interval's nominal coverage, 1 − α (with ``exact``, its coverage is at least this).
    public var confidence: Double
    /// Whether the interval's rank came from the exact distribution (else the normal approximation).
    public var exact: Bool

    /// The shift of `candidate` from `baseline` with a `1 − level` interval, or `nil` when the
    /// samples are too small for any interval at that level (with 3 runs a side the smallest
    /// two-sided level is 0.1), a value is not finite, or m·n does not fit an `Int`.
    public init?(baseline: [Double], candidate: [Double], level: SignificanceLevel) {
        var ranks = CriticalRanks()
        self.init(baseline: baseline, candidate: candidate, level: level, ranks: &ranks)
    }

    /// As ``init(baseline:candidate:level:)``, taking the rank from `ranks` (and adding it):
    /// several figures over the same runs count each distribution once.
    public init?(baseline: [Double], candidate: [Double], level: SignificanceLevel, ranks: inout CriticalRanks) {
        let m = baseline.count, n = candidate.count
        guard m > 0, n > 0, baseline.allSatisfy(\.isFinite), candidate.allSatisfy(\.isFinite) else { return nil }
        let (count, overflow) = m.multipliedReportingOverflow(by: n)
        guard !overflow else { return nil }
        let rank = ranks.rank(m: m, n: n, level: level)
        guard rank.count > 0 else { return nil }
        let differences = PairwiseDifferences(baseline: baseline, candidate: candidate)
        estimate = count % 2 == 1 ? differences.smallest(count / 2 + 1)
            : (differences.smallest(count / 2) + differences.smallest(count / 2 + 1)) / 2
        lower = differences.smallest(rank.count)
        upper = differences.smallest(count + 1 - rank.count)
        confidence = level.confidence
        exact = rank.exact
    }

    /// Whether the interval excludes no change.
    public var excludesZero: Bool { lower > 0 || upper < 0 }

    /// The most word additions counting the exact distribution may cost (m · (m·n/2) · words
    /// per count, m ≤ n): 2.5 × 10⁸, about 0.3 s on this project's 2-core machine
    /// (docs/benchmarks.md, "Exact rank statistics"); 150 against 150 runs costs 1.0 × 10⁷.
    public static let exactWorkLimit = 150_000_000

    /// The most words the exact counts may hold: 2²³ (64 MiB).
    public static let exactMemoryLimit = 1 << 23

    /// Whether the critical rank for samples of `m` and `n` is counted exactly (within
    /// ``exactWorkLimit`` and ``exactMemoryLimit``).
    public static func isExact(m: Int, n: Int) -> Bool {
        let (small, large) = (min(m, n), max(m, n))
        guard small >= 1 else { return false }
        let counts = Double(small) * Double(large) / 2 + 1
        guard counts <= Double(exactMemoryLimit) else { return false }
        let words = Double(MannWhitneyCounts.width(m: small, n: large))
        return counts * words <= Double(exactMemoryLimit) && Double(small) * counts * words <= Double(exactWorkLimit)
    }

    /// The Moses interval's rank: the largest k such that P(U ≤ k − 1) ≤ α/2 for samples of
    /// `m` and `n` under no shift (exactly, in integers, when ``isExact(m:n:)``); 0 when even the
    /// most extreme ranking is more likely than α/2. The interval is then [D₍ₖ₎, D₍ₘₙ₊₁₋ₖ₎] of the
    /// sorted pairwise differences.
    public static func criticalCount(m: Int, n: Int, level: SignificanceLevel) -> Int {
        criticalRank(m: m, n: n, level: level).count
    }

    static func criticalRank(m: Int, n: Int, level: SignificanceLevel) -> (count: Int, exact: Bool) {
        guard m > 0, n > 0 else { return (0, true) }
        if isExact(m: m, n: n) {
            return (MannWhitneyCounts(m: m, n: n).largestTail(within: level), true)
        }
        return (normalApproximateRank(m: m, n: n, alpha: level.value), false)
    }

    /// The exact coverage of the interval of rank `rank` for samples of `m` and `n` without
    /// ties: 1 − 2·P(U ≤ rank − 1), counted whatever the sizes (O(m²·n) word additions; for
    /// measuring the approximation, `framescope bench compare`).
    public static func exactCoverage(m: Int, n: Int, rank: Int) -> Double {
        guard m > 0, n > 0, rank > 0 else { return 1 }
        let probabilities = MannWhitneyCounts(m: m, n: n).probabilities()
        let tail = probabilities.prefix(rank).reduce(0, +)
        return 1 - 2 * tail
    }

    /// The rank from the normal approximation of U, corrected for U's kurtosis (Cornish–Fisher)
    /// and for continuity: with σ² = mn(m+n+1)/12 and the excess kurtosis
    /// γ₂ = κ₄/σ⁴, κ₄ = −mn(m+n+1)(m²+n²+mn+m+n)/120 (U is symmetric, so no skew term), the
    /// lower α/2 quantile of U is mn/2 + σ·w with w = −z + γ₂/24 · (3z − z³),
    /// z = Φ⁻¹(1 − α/2), and k = ⌊mn/2 + σ·w + 1/2⌋, bounded to 0…mn/2. U's tails are lighter
    /// than the normal's: without the correction the rank is up to 23 too small at 99 % and one
    /// to four too large at 80 % (too narrow) for sizes past the exact range.
    public static func normalApproximateRank(m: Int, n: Int, alpha: Double) -> Int {
        let (mm, nn) = (Double(m), Double(n))
        let total = mm * nn
        let variance = total * (mm + nn + 1) / 12
        let fourthCumulant = -total * (mm + nn + 1) * (mm * mm + nn * nn + mm * nn + mm + nn) / 120
        let excessKurtosis = fourthCumulant / (variance * variance)
        let z = normalQuantile(1 - alpha / 2)
        let w = -z + excessKurtosis / 24 * (3 * z - z * z * z)
        let rank = (total / 2 + variance.squareRoot() * w + 0.5).rounded(.down)
        guard rank.isFinite else { return 0 }
        return Int(max(0, min((total / 2).rounded(.down), rank)))
    }

    /// The probabilities of U = 0, 1, …, m·n for samples of `m` and `n` under no shift (the
    /// exact counts over C(m+n, m), as `Double`s).
    static func uDistribution(m: Int, n: Int) -> [Double] {
        let lower = MannWhitneyCounts(m: m, n: n).probabilities()
        // The upper half mirrors the lower: P(U = u) = P(U = m·n − u).
        return (0...(m * n)).map { $0 < lower.count ? lower[$0] : lower[m * n - $0] }
    }
}

/// Critical ranks already found, by sample sizes and level, so that a comparison of several
/// figures over the same runs counts each exact distribution once.
public struct CriticalRanks: Sendable {
    private struct Key: Hashable {
        var small: Int, large: Int, level: SignificanceLevel
    }
    private var known: [Key: (count: Int, exact: Bool)] = [:]

    /// No ranks yet.
    public init() {}

    /// The rank for samples of `m` and `n` at `level` (``ShiftInterval/criticalCount(m:n:level:)``)
    /// and whether it is exact, counted on first use.
    public mutating func rank(m: Int, n: Int, level: SignificanceLevel) -> (count: Int, exact: Bool) {
        let key = Key(small: min(m, n), large: max(m, n), level: level)
        if let rank = known[key] { return rank }
        let rank = ShiftInterval.criticalRank(m: m, n: n, level: level)
        known[key] = rank
        return rank
    }
}

/// The m·n differences candidate − baseline, read by rank without being stored.
struct PairwiseDifferences {
    let baseline: [Double]
    let candidate: [Double]

    init(baseline: [Double], candidate: [Double]) {
        self.baseline = baseline.sorted()
        self.candidate = candidate.sorted()
    }

    /// The `rank`-th smallest difference (1-based, 1…m·n), as `Double` subtraction computes it.
    ///
    /// Bisects the ordered bit patterns of `Double` between the smallest and largest
    /// difference for the least value with at least `rank` differences at or below it: 64
    /// steps at most, each counting in one pass (a difference falls as its baseline value
    /// rises, so the count of candidates within a value of each baseline value only grows).
    func smallest(_ rank: Int) -> Double {
        guard let firstBase = baseline.first, let lastBase = baseline.last,
              let firstCandidate = candidate.first, let lastCandidate = candidate.last else { return .nan }
        var low = Self.key(firstCandidate - lastBase)
        var high = Self.key(lastCandidate - firstBase)
        while low < high {
            let middle = low + (high - low) / 2
            if countAtOrBelow(Self.value(middle)) >= rank { high = middle } else { low = middle + 1 }
        }
        let found = Self.value(low)
        return found == 0 ? 0 : found  // −0 and +0 count alike; report +0
    }

    /// How many differences are at or below `limit`.
    func countAtOrBelow(_ limit: Double) -> Int {
        var count = 0
        var within = 0
        for base in baseline {
            while within < candidate.count, candidate[within] - base <= limit { within += 1 }
            count += within
        }
        return count
    }

    /// The `Double`s in their numeric order as unsigned integers (−∞ … −0, +0 … +∞).
    static func key(_ value: Double) -> UInt64 {
        let bits = value.bitPattern
        return bits >> 63 == 1 ? ~bits : bits | (1 << 63)
    }

    /// The `Double` of a ``key(_:)``.
    static func value(_ key: UInt64) -> Double {
        key >> 63 == 1 ? Double(bitPattern: key & ~(1 << 63)) : Double(bitPattern: ~key)
    }
}

/// The standard normal quantile Φ⁻¹(p) for 0 < p < 1 (Acklam's rational approximation,
/// relative error below 1.2 × 10⁻⁹); −∞ and +∞ outside. The collector's intervals and
/// `framescope compare`'s use it.
public func normalQuantile(_ p: Double) -> Double {
    let a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
             -3.066479806614716e+01, 2.506628277459239e+00]
    let b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
             -1.328068155288572e+01]
    let c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
             4.374664141464968e+00, 2.938163982698783e+00]
    let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
    let low = 0.02425
    if p <= 0 { return -.infinity }
    if p >= 1 { return .infinity }
    if p < low {
        let q = (-2 * Elementary.log(p)).squareRoot()
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    }
    if p > 1 - low {
        let q = (-2 * Elementary.log(1 - p)).squareRoot()
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    }
    let q = p - 0.5
    let r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
}
