import ArgumentParser
import Foundation
import FramescopeCore

/// `framescope bench compare`: what `compare`'s rank statistics cost, and how well the normal
/// approximation covers where the exact count stops.
struct BenchCompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Time compare's exact rank statistics and measure the approximation's coverage.",
        discussion: """
            For runs a side from 10 to 400 prints the time to count the Mann–Whitney \
            distribution exactly and find the interval's rank, beside the floor the old code \
            paid on every comparison (sorting all m·n differences), and the interval of \
            --values runs a side. Then, for sizes past the exact range, the normal \
            approximation's exact coverage at 80, 90, 95 and 99 % (counted, whatever it costs) \
            and its coverage in --trials simulated comparisons without a shift. Build with \
            -c release for meaningful figures.
            """
    )

    @Option(help: "Simulated comparisons per size for the coverage.")
    var trials: Int = 2_000

    @Option(help: "Runs a side for the interval of many runs (no stored differences).")
    var values: Int = 10_000

    mutating func validate() throws {
        if trials < 1 { throw ValidationError("--trials must be at least 1") }
        if values < 2 { throw ValidationError("--values must be at least 2") }
    }

    func run() throws {
        let clock = ContinuousClock()
        let level = SignificanceLevel(numerator: 1, denominator: 20)!
        print("Exact rank (95 %): sizes, exact?, rank, seconds; floor: sorting m·n differences, seconds")
        for (m, n) in [(10, 10), (30, 30), (50, 50), (100, 100), (150, 150), (200, 200), (300, 300), (3, 2_000), (20, 2_000), (400, 400)] {
            var rank = 0
            let exactTime = clock.measure { rank = ShiftInterval.criticalCount(m: m, n: n, level: level) }
            var generator = SystemRandomNumberGenerator()
            let baseline = (0..<m).map { _ in Double.random(in: 0..<1, using: &generator) }
            let candidate = (0..<n).map { _ in Double.random(in: 0..<1, using: &generator) }
            let sortTime = clock.measure {
                var differences: [Double] = []
                differences.reserveCapacity(m * n)
                for b in baseline { for c in candidate { differences.append(c - b) } }
                differences.sort()
                precondition(differences.count == m * n && differences[0] <= differences[m * n - 1])
            }
            print("  \(m) × \(n)\t\(ShiftInterval.isExact(m: m, n: n) ? "exact" : "normal")\t\(rank)\t"
                  + "\(format(seconds(exactTime)))\tfloor \(format(seconds(sortTime)))")
        }

        var generator = SystemRandomNumberGenerator()
        let baseline = (0..<values).map { _ in Double.random(in: 0..<1, using: &generator) }
        let candidate = (0..<values).map { _ in Double.random(in: 0..<1, using: &generator) + 0.01 }
        var shift: ShiftInterval?
        let manyTime = clock.measure { shift = ShiftInterval(baseline: baseline, candidate: candidate, level: level) }
        print("\n\(values) runs a side: interval in \(format(seconds(manyTime))) s, estimate "
              + "\(shift.map { format($0.estimate) } ?? "none") [\(shift.map { format($0.lower) } ?? "")"
              + ", \(shift.map { format($0.upper) } ?? "")], peak RSS \(residentMemory().peak / 1_048_576) MiB")

        print("\nThe normal approximation past the exact range: exact coverage (counted) and simulated coverage")
        let confidences = [0.8, 0.9, 0.95, 0.99]
        for (m, n) in [(330, 330), (350, 400), (150, 2_000)] {
            var ranks = CriticalRanks()
            var line = "  \(m) × \(n)\(ShiftInterval.isExact(m: m, n: n) ? " (exact range)" : ""):"
            for confidence in confidences {
                guard let alpha = SignificanceLevel(confidence: confidence) else { continue }
                let rank = ShiftInterval.normalApproximateRank(m: m, n: n, alpha: alpha.value)
                let exact = ShiftInterval.exactCoverage(m: m, n: n, rank: rank)
                var covered = 0
                for _ in 0..<trials {
                    let base = (0..<m).map { _ in Double.random(in: 0..<1, using: &generator) }
                    let cand = (0..<n).map { _ in Double.random(in: 0..<1, using: &generator) }
                    if let interval = ShiftInterval(baseline: base, candidate: cand, level: alpha, ranks: &ranks), !interval.excludesZero { covered += 1 }
                }
                line += "  \(Int(confidence * 100)) %: " + String(format: "%.4f", 100 * exact) + " % counted, "
                    + String(format: "%.2f", 100 * Double(covered) / Double(trials)) + " % of \(trials) simulated"
            }
            print(line)
        }
    }

    private func format(_ value: Double) -> String { String(format: "%.4g", value) }
}
