@testable import FramescopeCore
import Testing

/// The rank statistics under `framescope compare` over runs, at values worked out by hand
/// (the Mann–Whitney table) and at made-up samples.
@Suite("Shift interval (Hodges–Lehmann, Mann–Whitney)")
struct ShiftIntervalTests {
    @Test("The U distribution is counted exactly: against a direct count of rankings, and the table's 5 and 5")
    func distribution() throws {
        for (m, n) in [(1, 1), (2, 2), (2, 5), (4, 3), (5, 5), (6, 7)] {
            let counted = ShiftInterval.uDistribution(m: m, n: n)
            let reference = ShiftIntervalReference.distribution(m: m, n: n)
            #expect(counted.count == reference.count)
            #expect(zip(counted, reference).allSatisfy { abs($0 - $1) < 1e-12 }, "\(m) and \(n)")
        }
        // 5 and 5: 252 rankings; U = 0…4 in 1, 1, 2, 3, 5 of them.
        let five = ShiftInterval.uDistribution(m: 5, n: 5)
        #expect(five.prefix(5).map { ($0 * 252).rounded() } == [1, 1, 2, 3, 5])
    }

    @Test("Critical counts: 5 and 5 runs at 95 % leave 3 differences out each side; 3 and 3 give no interval")
    func criticalCounts() {
        #expect(ShiftInterval.criticalCount(m: 5, n: 5, alpha: 0.05) == 3)   // P(U ≤ 2) = 4/252 ≤ 0.025 < 7/252
        #expect(ShiftInterval.criticalCount(m: 3, n: 3, alpha: 0.05) == 0)   // P(U = 0) = 1/20 > 0.025
        #expect(ShiftInterval.criticalCount(m: 3, n: 3, alpha: 0.1) == 1)
        #expect(ShiftInterval.criticalCount(m: 10, n: 10, alpha: 0.05) == 24)  // the table's U = 23
        // Past 30 a side the normal approximation takes over and agrees with the count at 30.
        let exact = ShiftInterval.criticalCount(m: 30, n: 30, alpha: 0.05)
        let approximate = ShiftInterval.criticalCount(m: 31, n: 31, alpha: 0.05)
        #expect(exact > 300 && approximate > exact && approximate - exact < 40)
    }

    @Test("A clean shift of 2 is estimated as 2 and its interval excludes no change; equal samples give 0")
    func estimates() throws {
        let baseline = [4.1, 3.9, 4.4, 4.0, 4.2, 3.8, 4.3]
        let shifted = baseline.map { $0 + 2 }
        let shift = try #require(ShiftInterval(baseline: baseline, candidate: shifted, alpha: 0.05))
        #expect(abs(shift.estimate - 2) < 1e-9)
        #expect(shift.lower > 1 && shift.upper < 3 && shift.excludesZero)
        let same = try #require(ShiftInterval(baseline: baseline, candidate: baseline, alpha: 0.05))
        #expect(same.estimate == 0 && !same.excludesZero)
        #expect(ShiftInterval(baseline: [1, 2, 3], candidate: [4, 5, 6], alpha: 0.05) == nil, "3 a side: no 95 % interval")
        #expect(ShiftInterval(baseline: [1, .nan, 3, 4, 5], candidate: [1, 2, 3, 4, 5], alpha: 0.05) == nil)
        // One wild run moves the estimate little.
        let wild = try #require(ShiftInterval(baseline: baseline, candidate: baseline.dropLast() + [40], alpha: 0.05))
        #expect(abs(wild.estimate) < 0.3 && !wild.excludesZero)
    }

    @Test("Verdicts: a big shift regresses, a tiny real one does not count, a noisy one is inconclusive, too few runs are inconclusive")
    func verdicts() {
        let minimum = MinimumChange(relative: 0.1, absolute: 1)
        let base: [Double] = [20, 21, 19, 22, 20, 21]
        func judge(_ candidate: [Double], _ baseline: [Double] = base) -> RunsComparison.Row {
            RunsComparison.judge(.motionHitchRatio, baseline: baseline, candidate: candidate, alpha: 0.025, minimum: minimum, gating: true)
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
}

/// The U distribution by direct recursion over rankings, to check the counted one.
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
}
