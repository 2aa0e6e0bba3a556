@testable import FramescopeCore
import Testing

/// The rank statistics under `framescope compare` over runs: the exact U distribution against
/// an independent count, critical ranks against a brute-force table and a published one, a
/// textbook's worked example, and made-up samples.
@Suite("Shift interval (Hodges–Lehmann, Mann–Whitney)")
struct ShiftIntervalTests {
    @Test("The U distribution is counted exactly: against a direct count of rankings, and the table's 5 and 5")
    func distribution() throws {
        for (m, n) in [(1, 1), (2, 2), (2, 5), (4, 3), (5, 5), (6, 7), (1, 9), (9, 2)] {
            let counted = ShiftInterval.uDistribution(m: m, n: n)
            let reference = ShiftIntervalReference.distribution(m: m, n: n)
            #expect(counted.count == reference.count)
            #expect(zip(counted, reference).allSatisfy { abs($0 - $1) < 1e-12 }, "\(m) and \(n)")
        }
        // 5 and 5: 252 rankings; U = 0…4 in 1, 1, 2, 3, 5 of them.
        let five = ShiftInterval.uDistribution(m: 5, n: 5)
        #expect(five.prefix(5).map { ($0 * 252).rounded() } == [1, 1, 2, 3, 5])
    }

    @Test("The exact counts are integers: 40 and 40 against the brute-force count in 128 bits, word for word")
    func exactCounts() {
        let reference = ShiftIntervalReference.Table(upTo: 40)
        for (m, n) in [(40, 40), (13, 37), (2, 40), (33, 8)] {
            let counts = MannWhitneyCounts(m: m, n: n)
            for u in 0...counts.degree {
                let words = counts.count(u)
                let value = UInt128(words[words.startIndex]) | (words.count > 1 ? UInt128(words[words.startIndex + 1]) << 64 : 0)
                #expect(words.dropFirst(2).allSatisfy { $0 == 0 } && value == reference.counts(m, n)[u], "\(m), \(n), U = \(u)")
            }
        }
    }

    @Test("Critical ranks for every m and n from 2 to 40 at 80, 90, 95 and 99 % equal a brute-force table")
    func criticalTable() {
        let reference = ShiftIntervalReference.Table(upTo: 40)
        let levels = [(1, 5), (1, 10), (1, 20), (1, 100)].map { SignificanceLevel(numerator: $0, denominator: $1)! }
        var checked = 0
        for m in 2...40 {
            for n in m...40 {
                let counts = MannWhitneyCounts(m: m, n: n)
                for level in levels {
                    let expected = reference.criticalRank(m, n, level)
                    #expect(counts.largestTail(within: level) == expected, "\(m), \(n) at α = \(level)")
                    checked += 1
                }
            }
        }
        #expect(checked == 780 * 4)
        // The rank does not depend on which side is which.
        for (m, n) in [(3, 32), (4, 36), (35, 36), (7, 19)] {
            for level in levels {
                #expect(ShiftInterval.criticalCount(m: m, n: n, level: level) == ShiftInterval.criticalCount(m: n, n: m, level: level))
            }
        }
    }

    @Test("Critical ranks match a published Mann–Whitney table (two-sided 5 % and 1 %) and the exact cases the issue names")
    func publishedTable() throws {
        let five = try #require(SignificanceLevel(confidence: 0.95))
        let one = try #require(SignificanceLevel(confidence: 0.99))
        // Published critical U (reject when U ≤ value); the interval's rank is one more.
        for (size, critical) in [(5, 2), (8, 13), (10, 23), (12, 37), (15, 64), (20, 127)] {
            #expect(ShiftInterval.criticalCount(m: size, n: size, level: five) == critical + 1, "\(size) a side at 5 %")
        }
        for (size, critical) in [(5, 0), (10, 16), (20, 105)] {
            #expect(ShiftInterval.criticalCount(m: size, n: size, level: one) == critical + 1, "\(size) a side at 1 %")
        }
        // 3 and 3 at 90 %: P(U = 0) = 1/20 is exactly α/2, so one difference is left out each side
        // (in binary floating point 1 − 0.9 < 0.1 dropped it and gave no interval).
        let ninety = try #require(SignificanceLevel(confidence: 0.9))
        #expect(ninety == SignificanceLevel(numerator: 1, denominator: 10))
        #expect(ShiftInterval.criticalCount(m: 3, n: 3, level: ninety) == 1)
        #expect(ShiftInterval(baseline: [1, 2, 3], candidate: [4, 5, 6], level: ninety)?.lower == 1)
        #expect(ShiftInterval.criticalCount(m: 3, n: 3, level: five) == 0)
        // Past 30 a side the count is still exact (it was a normal approximation, a rank too wide).
        #expect(ShiftInterval.isExact(m: 32, n: 3) && ShiftInterval.isExact(m: 150, n: 150))
        #expect(!ShiftInterval.isExact(m: 10_000, n: 10_000))
    }

    @Test("Hollander & Wolfe's worked example (chorioamnion permeability): U = 35, P(U ≥ 35) = 0.1272, estimate 0.305")
    func textbookExample() throws {
        let term = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46]
        let early = [1.15, 0.88, 0.90, 0.74, 1.21]
        let u = term.reduce(0) { sum, x in sum + early.filter { x > $0 }.count }
        #expect(u == 35)
        let distribution = ShiftInterval.uDistribution(m: 10, n: 5)
        let pValue = distribution[35...].reduce(0, +)
        #expect(abs(pValue - 0.1272) < 0.00005, "R's wilcox.test(x, y, alternative = \"greater\"): p-value = 0.1272")
        let shift = try #require(ShiftInterval(baseline: early, candidate: term, level: SignificanceLevel(numerator: 1, denominator: 20)!))
        #expect(abs(shift.estimate - 0.305) < 1e-12 && shift.exact)
        #expect(shift.lower < 0 && shift.upper > 0, "p = 0.25 two-sided: the 95 % interval includes no change")
    }

    @Test("Levels are read as the decimals they print as, Bonferroni-divided exactly")
    func levels() throws {
        #expect(SignificanceLevel(confidence: 0.95, comparisons: 2) == SignificanceLevel(numerator: 1, denominator: 40))
        #expect(SignificanceLevel(confidence: 0.999) == SignificanceLevel(numerator: 1, denominator: 1000))
        #expect(SignificanceLevel(0.00001) == SignificanceLevel(numerator: 1, denominator: 100_000))
        #expect(SignificanceLevel(0.025)?.description == "1/40")
        #expect(SignificanceLevel(confidence: 1) == nil && SignificanceLevel(confidence: 0) == nil)
        #expect(SignificanceLevel(confidence: .nan) == nil && SignificanceLevel(confidence: 0.95, comparisons: 0) == nil)
        #expect(SignificanceLevel(1e-300) == nil, "more places than 64 bits hold")
    }

    @Test("Order statistics of the differences equal sorting every difference, with ties, zeros and signs")
    func orderStatistics() {
        var generator = SplitMix(seed: 42)
        for trial in 0..<200 {
            let m = Int(generator.next() % 9) + 1, n = Int(generator.next() % 9) + 1
            let values: () -> Double = { Double(Int(generator.next() % 11) - 5) * (trial % 2 == 0 ? 0.5 : 0.1) }
            let baseline = (0..<m).map { _ in values() }, candidate = (0..<n).map { _ in values() }
            let sorted = baseline.flatMap { b in candidate.map { $0 - b } }.sorted()
            let differences = PairwiseDifferences(baseline: baseline, candidate: candidate)
            for rank in 1...sorted.count {
                #expect(differences.smallest(rank) == sorted[rank - 1], "trial \(trial), rank \(rank)")
            }
        }
    }

    @Test("Ten thousand runs a side: an interval without storing 10⁸ differences (normal approximation)")
    func largeSamples() throws {
        let baseline = (0..<10_000).map { Double($0 % 97) }
        let candidate = baseline.map { $0 + 3 }
        let shift = try #require(ShiftInterval(baseline: baseline, candidate: candidate, level: SignificanceLevel(numerator: 1, denominator: 20)!))
        #expect(shift.estimate == 3 && shift.excludesZero && !shift.exact)
        let far = try #require(ShiftInterval(baseline: [1e308, -1e308], candidate: [-1e308, 1e308], level: SignificanceLevel(numerator: 1, denominator: 2)!))
        #expect(far.lower == -.infinity && far.upper == .infinity, "differences past Double's range are infinite, never a trap")
    }

    @Test("A clean shift of 2 is estimated as 2 and its interval excludes no change; equal samples give 0")
    func estimates() throws {
        let level = try #require(SignificanceLevel(0.05))
        let baseline = [4.1, 3.9, 4.4, 4.0, 4.2, 3.8, 4.3]
        let shifted = baseline.map { $0 + 2 }
        let shift = try #require(ShiftInterval(baseline: baseline, candidate: shifted, level: level))
        #expect(abs(shift.estimate - 2) < 1e-9)
        #expect(shift.lower > 1 && shift.upper < 3 && shift.excludesZero)
        let same = try #require(ShiftInterval(baseline: baseline, candidate: baseline, level: level))
        #expect(same.estimate == 0 && !same.excludesZero)
        #expect(ShiftInterval(baseline: [1, 2, 3], candidate: [4, 5, 6], level: level) == nil, "3 a side: no 95 % interval")
        #expect(ShiftInterval(baseline: [1, .nan, 3, 4, 5], candidate: [1, 2, 3, 4, 5], level: level) == nil)
        // One wild run moves the estimate little.
        let wild = try #require(ShiftInterval(baseline: baseline, candidate: baseline.dropLast() + [40], level: level))
        #expect(abs(wild.estimate) < 0.3 && !wild.excludesZero)
    }

    @Test("Verdicts: a big shift regresses, a tiny real one does not count, a noisy one is inconclusive, too few runs are inconclusive")
    func verdicts() {
        let minimum = MinimumChange(relative: 0.1, absolute: 1)
        let base: [Double] = [20, 21, 19, 22, 20, 21]
        func judge(_ candidate: [Double], _ baseline: [Double] = base) -> RunsComparison.Row {
            RunsComparison.judge(.motionHitchRatio, baseline: baseline, candidate: candidate,
                                 alpha: SignificanceLevel(numerator: 1, denominator: 40), minimum: minimum, gating: true)
        }
        #expect(judge(base.map { $0 + 8 }).verdict == .regressed)
        #expect(judge(base.map { $0 - 8 }).verdict == .improved)
        let steady: [Double] = [20, 20.1, 19.9, 20.05, 19.95, 20]
        #expect(judge(steady.map { $0 + 0.5 }, steady).verdict == .noSignificantChange, "real (every difference > 0), under the minimum of 2")
        #expect(judge(steady.map { $0 + 0.5 }, steady).shift?.excludesZero == true)
        #expect(judge(base).verdict == .noSignificantChange)
        #expect(judge([10, 35, 15, 30, 12, 33]).verdict == .inconclusive, "the interval includes 0 and reaches far past the minimum")
        let few = judge([30, 31, 29], [20, 21, 19])
        #expect(few.verdict == .inconclusive && few.shift == nil && few.reason.hasPrefix("too few runs"))
        #expect(abs((judge(base.map { $0 + 8 }).minimumChange ?? 0) - 2.05) < 1e-9, "10 % of the median 20.5")
    }

    @Test("3 runs a side at 90 % over one gating figure give an interval and a verdict (binary α gave none)")
    func threeRunsAtNinety() {
        let row = RunsComparison.judge(.motionHitchRatio, baseline: [20, 21, 19], candidate: [40, 41, 39],
                                       alpha: SignificanceLevel(confidence: 0.9), minimum: MinimumChange(relative: 0.1, absolute: 1),
                                       gating: true)
        #expect(row.shift != nil && row.verdict == .regressed, "\(row.reason)")
    }
}

/// Independent references: the U distribution by direct recursion over rankings, and exact
/// counts in 128-bit integers built over (i, j) as Mann and Whitney did.
enum ShiftIntervalReference {
    static func distribution(m: Int, n: Int) -> [Double] {
        func count(_ i: Int, _ j: Int, _ u: Int) -> Double {
            if u < 0 { return 0 }
            if i == 0 || j == 0 { return u == 0 ? 1 : 0 }
            return count(i - 1, j, u - j) + count(i, j - 1, u)
        }
        let counts = (0...(m * n)).map { count(m, n, $0) }
        let total = counts.reduce(0, +)
        return counts.map { $0 / total }
    }

    /// c(i, j)[u]: rankings of i values among j others with U = u, for i, j ≤ `limit`, from
    /// c(i, j)[u] = c(i − 1, j)[u − j] + c(i, j − 1)[u] (the last value is the largest or not).
    struct Table {
        private var table: [[[UInt128]]]

        init(upTo limit: Int) {
            table = Array(repeating: Array(repeating: [], count: limit + 1), count: limit + 1)
            for i in 0...limit {
                for j in 0...limit {
                    if i == 0 || j == 0 { table[i][j] = [1]; continue }
                    var counts = [UInt128](repeating: 0, count: i * j + 1)
                    for (u, value) in table[i - 1][j].enumerated() { counts[u + j] += value }
                    for (u, value) in table[i][j - 1].enumerated() { counts[u] += value }
                    table[i][j] = counts
                }
            }
        }

        func counts(_ m: Int, _ n: Int) -> [UInt128] { table[m][n] }

        /// The largest k ≤ m·n/2 with count(U ≤ k − 1) / C(m+n, m) ≤ α/2, compared in integers.
        func criticalRank(_ m: Int, _ n: Int, _ level: SignificanceLevel) -> Int {
            let counts = table[m][n]
            let total = counts.reduce(0, +)
            var tail: UInt128 = 0
            var k = 0
            while k < m * n / 2 {
                tail += counts[k]
                guard tail * 2 * UInt128(level.denominator) <= UInt128(level.numerator) * total else { break }
                k += 1
            }
            return k
        }
    }
}

/// A repeatable generator for the sweeps (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The approximation used past the exact range, checked where the exact rank is known.
@Suite("Shift interval: the approximation past the exact range")
struct ShiftIntervalApproximationTests {
    @Test("The kurtosis-corrected normal rank is within one of the exact rank for 30–80 runs a side at 80, 90, 95 and 99 %")
    func approximateRanks() {
        let levels = [(1, 5), (1, 10), (1, 20), (1, 100)].map { SignificanceLevel(numerator: $0, denominator: $1)! }
        var exactMatches = 0, checked = 0
        for (m, n) in [(30, 30), (35, 36), (40, 60), (50, 50), (60, 80), (80, 80), (20, 300)] {
            let counts = MannWhitneyCounts(m: m, n: n)
            for level in levels {
                let exact = counts.largestTail(within: level)
                let approximate = ShiftInterval.normalApproximateRank(m: m, n: n, alpha: level.value)
                #expect(abs(approximate - exact) <= 1, "\(m), \(n) at α = \(level): \(approximate) against \(exact)")
                if approximate == exact { exactMatches += 1 }
                checked += 1
            }
        }
        #expect(exactMatches * 10 >= checked * 7, "\(exactMatches) of \(checked) equal")
    }

    @Test("Simulated without a shift, the approximate 90 % interval covers no change in 90 ± 2 % of 1,000 comparisons of 400 a side")
    func simulatedCoverage() throws {
        var generator = SplitMix(seed: 7)
        let level = try #require(SignificanceLevel(confidence: 0.9))
        var ranks = CriticalRanks()
        var covered = 0
        for _ in 0..<1_000 {
            let baseline = (0..<400).map { _ in Double(generator.next() >> 11) }
            let candidate = (0..<400).map { _ in Double(generator.next() >> 11) }
            let shift = try #require(ShiftInterval(baseline: baseline, candidate: candidate, level: level, ranks: &ranks))
            #expect(!shift.exact)
            if !shift.excludesZero { covered += 1 }
        }
        #expect((880...920).contains(covered), "\(covered) of 1,000")
    }
}
