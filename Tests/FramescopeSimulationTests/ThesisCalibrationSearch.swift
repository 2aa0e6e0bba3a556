import FramescopeCore
@testable import FramescopeSimulation
import Foundation
import Testing

/// An opt-in search (FRAMESCOPE_CALIBRATE=1) for the thesis scenarios' costs. It keeps
/// the thesis' chain: each variant starts from the one before and moves only the costs
/// its optimisation touches. The objective is the error over all variants together.
/// It is how ThesisCalibration's figures were found; CI does not run it. Run it in
/// release mode: swift test -c release -Xswiftc -enable-testing --filter ThesisCalibrationSearch
@Suite("Thesis calibration search", .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_CALIBRATE"] != nil))
struct ThesisCalibrationSearch {
    typealias Costs = ThesisScenario.RowCosts
    static let ms = 0.001

    /// Parameters, in ms: the variant chain is built from them.
    static let names = ["worst.textCell", "worst.mediaExtra", "worst.height", "worst.renderImage", "worst.renderBubble",
                        "reuse.textCell", "reuse.mediaExtra", "static.textCell", "static.mediaExtra", "manual.height",
                        "resized.imageResize", "raster.renderNewRow", "raster.renderGIF", "nooff.renderBubble", "nooff.mainSaving (fraction)",
                        "asdk.textCell", "worst.mainPerFrame", "worst.renderPerFrame", "worst.perImage", "worst.mainPerGIF", "worst.renderNewRow", "cached.lookup", "worst.fullSizeImage"]

    /// The parameter vector as ThesisCalibration's parameters, in the order of `names`.
    func parameters(_ p: [Double]) -> ThesisCalibration.Parameters {
        ThesisCalibration.Parameters(
            worstTextCell: p[0], worstMediaExtra: p[1], worstHeight: p[2], worstRenderPerImage: p[3], renderPerBubble: p[4],
            reuseTextCell: p[5], reuseMediaExtra: p[6], staticTextCell: p[7], staticMediaExtra: p[8], manualHeight: p[9],
            imageResize: p[10], rasterizeNewRow: p[11], rasterizePerGIF: p[12], drawnBubble: p[13], drawnBubbleSaving: p[14],
            asyncTextNode: p[15], mainPerFrame: p[16], renderPerFrame: p[17], perImage: p[18], mainPerGIF: p[19], renderPerNewRow: p[20], heightCacheLookup: p[21], fullSizeImage: p[22]
        )
    }

    func chain(_ p: [Double]) -> [String: Costs] {
        ThesisCalibration.costs(parameters(p))
    }

    func measure(_ scenario: ThesisScenario, _ costs: Costs, seed: UInt64, windows: Bool = false) -> (fps: Double, stability: Double, duration: Double) {
        var variant = scenario
        variant.costs = costs
        let (recording, testDuration) = variant.run(seed: seed)
        let report = recording.analyze().whole
        if windows { print("WIN \(scenario.name): " + report.windowFPS.entries.map { "\($0.key / 100):\($0.count)" }.joined(separator: " ")) }
        return (report.averageFPS ?? 0, report.stability ?? 0, testDuration ?? 0)
    }

    /// The comma-separated entries of an environment variable, trimmed; empty if unset.
    static func environmentList(_ key: String) -> [String] {
        (ProcessInfo.processInfo.environment[key] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Weights per scenario in place of 1, from FRAMESCOPE_CALIBRATE_FOCUS ("cached-heights:5").
    let focus: [String: Double] = Dictionary(
        ThesisCalibrationSearch.environmentList("FRAMESCOPE_CALIBRATE_FOCUS").map { entry in
            let parts = entry.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let weight = Double(parts[1]), ThesisScenario.named(parts[0]) != nil else {
                preconditionFailure("FRAMESCOPE_CALIBRATE_FOCUS: '\(entry)' is not scenario-name:weight")
            }
            return (parts[0], weight)
        },
        uniquingKeysWith: { $1 })

    /// Further seeds whose mean figures the objective also fits, from
    /// FRAMESCOPE_CALIBRATE_SEEDS ("2,3,4,5"); seed 1 is always fitted on its own and
    /// counted once in the mean.
    let extraSeeds: [UInt64] = ThesisCalibrationSearch.environmentList("FRAMESCOPE_CALIBRATE_SEEDS").reduce(into: []) { seeds, entry in
        guard let seed = UInt64(entry) else { preconditionFailure("FRAMESCOPE_CALIBRATE_SEEDS: '\(entry)' is not a seed") }
        if seed != 1 && !seeds.contains(seed) { seeds.append(seed) }
    }

    /// Squared errors in units of the tolerance; inside the tolerance counts little, outside a lot.
    func penalty(fps: Double, stability: Double, of scenario: ThesisScenario) -> Double {
        let fpsError = (fps - scenario.thesisAverageFPS) / (0.05 * scenario.thesisAverageFPS)
        let stabilityError = (stability - scenario.thesisStability) / 0.05
        return fpsError * fpsError + stabilityError * stabilityError
            + 40 * max(0, abs(fpsError) - 0.8) + 40 * max(0, abs(stabilityError) - 0.8)
    }

    func error(_ p: [Double], verbose: Bool = false) -> Double {
        let costs = chain(p)
        var total = 0.0
        for scenario in ThesisScenario.all where scenario.name != "best-case" {
            // FRAMESCOPE_CALIBRATE_FOCUS ("name:weight,…") weighs chosen scenarios more.
            let weight = focus[scenario.name] ?? 1.0
            let first = measure(scenario, costs[scenario.name]!, seed: 1, windows: verbose)
            total += weight * penalty(fps: first.fps, stability: first.stability, of: scenario)
            var line = "RESULT \(scenario.name): fps \(Metric.decimal(first.fps, digits: 1)) (\(scenario.thesisAverageFPS)) stability \(Metric.decimal(first.stability * 100, digits: 1)) (\(scenario.thesisStability * 100)) duration \(Metric.decimal(first.duration, digits: 1)) (\(scenario.thesisDuration))"
            if !extraSeeds.isEmpty {
                let runs = [first] + extraSeeds.map { measure(scenario, costs[scenario.name]!, seed: $0) }
                let meanFPS = runs.map(\.fps).reduce(0, +) / Double(runs.count)
                let meanStability = runs.map(\.stability).reduce(0, +) / Double(runs.count)
                total += weight * penalty(fps: meanFPS, stability: meanStability, of: scenario)
                line += " mean of \(runs.count) seeds: fps \(Metric.decimal(meanFPS, digits: 1)) stability \(Metric.decimal(meanStability * 100, digits: 1))"
            }
            if verbose { print(line) }
        }
        return total
    }

    @Test func search() {
        let env = ProcessInfo.processInfo.environment["FRAMESCOPE_CALIBRATE_START"]
        let c = ThesisCalibration.calibrated
        var p: [Double] = env.map { $0.split(separator: ",").compactMap { Double($0) } }
            ?? [c.worstTextCell, c.worstMediaExtra, c.worstHeight, c.worstRenderPerImage, c.renderPerBubble, c.reuseTextCell,
                c.reuseMediaExtra, c.staticTextCell, c.staticMediaExtra, c.manualHeight, c.imageResize, c.rasterizeNewRow,
                c.rasterizePerGIF, c.drawnBubble, c.drawnBubbleSaving, c.asyncTextNode, c.mainPerFrame, c.renderPerFrame,
                c.perImage, c.mainPerGIF, c.renderPerNewRow, c.heightCacheLookup, c.fullSizeImage]
        precondition(p.count == Self.names.count, "FRAMESCOPE_CALIBRATE_START needs \(Self.names.count) numbers (\(Self.names.joined(separator: ", "))), got \(p.count)")
        var best = error(p)
        var steps = p.map { _ in 0.3 }
        var random = SeededGenerator(seed: 99)
        let rounds = Int(ProcessInfo.processInfo.environment["FRAMESCOPE_CALIBRATE_ROUNDS"] ?? "10") ?? 10
        let frozen = Set((ProcessInfo.processInfo.environment["FRAMESCOPE_CALIBRATE_FROZEN"] ?? "").split(separator: ",").compactMap { Int($0) })
        for round in 0..<rounds {
            for index in p.indices where !frozen.contains(index) {
                var moved = false
                for factor in [1 + steps[index], 1 / (1 + steps[index])] {
                    var candidate = p
                    candidate[index] = max(0.01, candidate[index] * factor)
                    let value = error(candidate)
                    if value < best { best = value; p = candidate; moved = true; break }
                }
                if !moved { steps[index] = max(0.02, steps[index] / 2) } else { steps[index] = min(0.5, steps[index] * 1.3) }
            }
            for trial in 0..<16 {
                let sigma = trial < 8 ? 0.08 : 0.25
                let candidate = p.indices.map { frozen.contains($0) ? p[$0] : p[$0] * Elementary.exp(random.normal(standardDeviation: sigma)) }
                let value = error(candidate)
                if value < best { best = value; p = candidate }
            }
            print("ROUND \(round): error \(best) p \(p.map { Metric.decimal($0, digits: 3) }.joined(separator: ","))")
        }
        _ = error(p, verbose: true)
        print("PARAMETERS \(parameters(p))")
    }
}
