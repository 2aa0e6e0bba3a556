/// The shift between two small samples (candidate − baseline) with a rank-based confidence
/// interval: the Hodges–Lehmann estimate (the median of every pairwise difference) and the
/// Mann–Whitney interval (Moses), which assume only that the candidate's values are the
/// baseline's shifted, not that either is normal.
///
/// Chosen for 5–20 runs a side of skewed figures with ties (hitch ratios, drop counts):
/// a run that hit a stall moves a mean and a t-interval far, a rank statistic by one rank.
/// The interval is exact for continuous data (the null distribution of the Mann–Whitney U is
/// counted, not approximated, up to 30 runs a side; a normal approximation beyond); ties
/// make it conservative. docs/decisions.md has the measured false-positive rate and power.
///
/// ```swift
/// let shift = ShiftInterval(baseline: [4.1, 3.9, 4.4, 4.0, 4.2], candidate: [6.0, 5.7, 6.3, 5.9, 6.1], alpha: 0.05)
/// shift?.estimate   // 1.9
/// shift?.lower      // the interval's lower end, > 0: the candidate is higher
/// ```
public struct ShiftInterval: Sendable, Hashable {
    /// The Hodges–Lehmann estimate of the shift, in the values' unit.
    public var estimate: Double
    /// The interval's lower end.
    public var lower: Double
    /// The interval's upper end.
    public var upper: Double
    /// The interval's nominal coverage, 1 − α (its exact coverage is at least this).
    public var confidence: Double

    /// The shift of `candidate` from `baseline` with a `1 − alpha` interval, or `nil` when the
    /// samples are too small for any interval at that level (with 3 runs a side the smallest
    /// two-sided level is 0.1) or a value is not finite.
    public init?(baseline: [Double], candidate: [Double], alpha: Double) {
        let m = baseline.count, n = candidate.count
        guard m > 0, n > 0, alpha > 0, alpha < 1, (baseline + candidate).allSatisfy(\.isFinite) else { return nil }
        let k = Self.criticalCount(m: m, n: n, alpha: alpha)
        guard k > 0 else { return nil }
        var differences: [Double] = []
        differences.reserveCapacity(m * n)
        for b in baseline { for c in candidate { differences.append(c - b) } }
        differences.sort()
        let count = differences.count
        estimate = count % 2 == 1 ? differences[count / 2] : (differences[count / 2 - 1] + differences[count / 2]) / 2
        lower = differences[k - 1]
        upper = differences[count - k]
        confidence = 1 - alpha
    }

    /// Whether the interval excludes no change.
    public var excludesZero: Bool { lower > 0 || upper < 0 }

    /// The Moses interval's rank: the largest k such that P(U < k) ≤ α/2 for samples of `m`
    /// and `n` under no shift; 0 when even the most extreme ranking is more likely than α/2.
    /// The interval is then [D₍ₖ₎, D₍ₘₙ₊₁₋ₖ₎] of the sorted pairwise differences.
    public static func criticalCount(m: Int, n: Int, alpha: Double) -> Int {
        let total = m * n
        if m <= 30 && n <= 30 {
            let distribution = uDistribution(m: m, n: n)
            var cumulative = 0.0
            var k = 0
            // P(U ≤ k) ≤ α/2  ⇔  the k+1 smallest differences may be left out below.
            while k < total, cumulative + distribution[k] <= alpha / 2 {
                cumulative += distribution[k]
                k += 1
            }
            return min(k, total / 2)
        }
        // Normal approximation with a continuity correction.
        let mean = Double(total) / 2
        let deviation = (Double(total) * Double(m + n + 1) / 12).squareRoot()
        let z = normalQuantile(1 - alpha / 2)
        return max(0, min(total / 2, Int((mean - z * deviation - 0.5).rounded(.down)) + 1))
    }

    /// The probabilities of U = 0, 1, …, m·n for samples of `m` and `n` under no shift: the
    /// coefficients of the Gaussian binomial (m+n choose m)_q over C(m+n, m).
    static func uDistribution(m: Int, n: Int) -> [Double] {
        // counts[i][u]: rankings of i baseline values among j candidate ones with U = u,
        // built up over j: c(i, j) = c(i − 1, j) shifted by j + c(i, j − 1).
        var previous: [[Double]] = (0...m).map { _ in [1] }  // j = 0: U = 0 only
        if n > 0 {
            for j in 1...n {
                var current: [[Double]] = [[1]]  // i = 0
                for i in 1...m {
                    var counts = [Double](repeating: 0, count: i * j + 1)
                    for (u, value) in current[i - 1].enumerated() where u + j < counts.count { counts[u + j] += value }
                    for (u, value) in previous[i].enumerated() { counts[u] += value }
                    current.append(counts)
                }
                previous = current
            }
        }
        let counts = previous[m]
        let sum = counts.reduce(0, +)
        return counts.map { $0 / sum }
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
