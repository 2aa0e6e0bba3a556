import FramescopeCore
import FramescopeSimulation
import Testing

/// `framescope compare` over runs, judged on the frame-pipeline simulator: A against A (the
/// same workload, other seeds) must rarely be called a regression, and a real step must be
/// found. Runs are simulated once into pools; each comparison draws disjoint runs from them.
/// The measured rates are in docs/decisions.md; these tests hold their bounds.
@Suite("Runs comparison on simulated runs")
struct RunsComparisonSimulationTests {
    /// One simulated run of a scroll script: 4 s, scrolls of 1.2 s after 0.5 s idle.
    static func run(_ profile: SyntheticWorkload.Profile, stallEvery: Double? = nil, seed: UInt64) -> RecordingReport {
        var workload = SyntheticWorkload(profile: profile, duration: 4, idleLength: 0.5, scrollLength: 1.2,
                                         stallInterval: stallEvery, stallLength: 0.12, seed: seed)
        return PipelineSimulator(display: .fixed(hz: 60), seed: seed).run(&workload).analyze()
    }

    static func pool(_ count: Int, _ profile: SyntheticWorkload.Profile, stallEvery: Double? = nil, seed: UInt64) -> [RecordingReport] {
        (0..<count).map { run(profile, stallEvery: stallEvery, seed: seed &+ UInt64($0) &* 7_919) }
    }

    /// A seeded shuffle of `0..<count`, for drawing runs.
    static func shuffled(_ count: Int, seed: UInt64) -> [Int] {
        var generator = SeededGenerator(seed: seed)
        return Array(0..<count).shuffled(using: &generator)
    }

    /// Over `trials` comparisons of `perSide` runs drawn without overlap from the pools: the
    /// share called regressed, and the share inconclusive.
    static func shares(trials: Int, perSide: Int, baseline: [RecordingReport], candidate: [RecordingReport],
                       seed: UInt64) -> (regressed: Double, inconclusive: Double) {
        var regressed = 0
        var inconclusive = 0
        let same = baseline == candidate
        for trial in 0..<trials {
            let order = shuffled(baseline.count, seed: seed &+ UInt64(trial))
            let base = order.prefix(perSide).map { baseline[$0] }
            let cand = same ? order.dropFirst(perSide).prefix(perSide).map { candidate[$0] }
                : shuffled(candidate.count, seed: seed &+ 99 &+ UInt64(trial)).prefix(perSide).map { candidate[$0] }
            let comparison = RunsComparison(baseline: base, candidate: cand)
            if comparison.regressed { regressed += 1 } else if comparison.inconclusive { inconclusive += 1 }
        }
        return (Double(regressed) / Double(trials), Double(inconclusive) / Double(trials))
    }

    @Test("A against A: 500 comparisons of 5 runs a side and 500 of 10 call a regression at most at the nominal 2.5 %")
    func falsePositives() {
        let moderate = Self.pool(200, .moderate, seed: 1)
        for perSide in [5, 10] {
            let (regressed, inconclusive) = Self.shares(trials: 500, perSide: perSide, baseline: moderate, candidate: moderate, seed: 7)
            print("FIGURE A-vs-A, \(perSide) runs a side: regressed \(regressed * 100) %, inconclusive \(inconclusive * 100) %")
            // Nominal: at most (1 − 0.95) / 2 over both gating figures; 500 trials allow binomial slack.
            #expect(regressed <= 0.04, "\(perSide) runs a side: \(regressed)")
        }
    }

    @Test("Power: moderate against heavy always at 5 runs a side; a 0.12 s stall every 2 s in the documented share")
    func power() {
        let moderate = Self.pool(100, .moderate, seed: 11)
        let heavy = Self.pool(60, .heavy, seed: 13)
        let stalled = Self.pool(60, .moderate, stallEvery: 2, seed: 17)
        let steep = Self.shares(trials: 200, perSide: 5, baseline: moderate, candidate: heavy, seed: 3)
        let step5 = Self.shares(trials: 200, perSide: 5, baseline: moderate, candidate: stalled, seed: 5)
        let step10 = Self.shares(trials: 200, perSide: 10, baseline: moderate, candidate: stalled, seed: 9)
        print("FIGURE power: heavy, 5 a side \(steep.regressed * 100) %; stall every 2 s, 5 a side \(step5.regressed * 100) %, 10 a side \(step10.regressed * 100) %")
        #expect(steep.regressed >= 0.95)
        #expect(step5.regressed >= 0.1)
        #expect(step10.regressed >= step5.regressed)
    }
}
