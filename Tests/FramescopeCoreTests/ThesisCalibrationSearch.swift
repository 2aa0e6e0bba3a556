@testable import FramescopeCore
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
                        "asdk.textCell", "worst.mainPerFrame", "worst.renderPerFrame", "worst.perImage", "worst.mainPerGIF", "worst.renderNewRow"]

    func chain(_ p: [Double]) -> [String: Costs] {
        let ms = Self.ms
        var worst = ThesisCalibration.worst
        // Media cells cost what text cells cost plus an extra (parameters 1, 6, 8).
        worst.textCell = p[0] * ms; worst.mediaCell = (p[0] + p[1]) * ms; worst.height = p[2] * ms
        worst.renderPerVisibleImage = p[3] * ms; worst.renderPerVisibleBubble = p[4] * ms
        worst.mainPerFrame = p[16] * ms; worst.renderPerFrame = p[17] * ms; worst.perImage = p[18] * ms; worst.mainPerVisibleGIF = p[19] * ms
        worst.renderPerNewRow = p[20] * ms
        var reuse = worst; reuse.textCell = p[5] * ms; reuse.mediaCell = (p[5] + p[6]) * ms
        var fixed = reuse; fixed.textCell = p[7] * ms; fixed.mediaCell = (p[7] + p[8]) * ms
        var manual = fixed; manual.height = p[9] * ms
        var cached = manual; cached.cachesHeights = true
        var resized = cached; resized.imageResize = p[10] * ms; resized.renderPerVisibleImage = ThesisCalibration.resizedImages.renderPerVisibleImage
        var raster = resized; raster.renderPerNewRow = (p[20] + p[11]) * ms; raster.renderPerVisibleGIF = p[12] * ms
        var nooff = resized; nooff.renderPerVisibleBubble = p[13] * ms; nooff.renderPerNewRow = 0
        // One plain view drawing its bubble replaces a masked, bordered layer stack: the
        // cell costs a share p[14] less main-thread time to set up and commit.
        nooff.textCell = fixed.textCell * max(0.1, 1 - p[14]); nooff.mediaCell = fixed.mediaCell * max(0.1, 1 - p[14])
        var asdk = ThesisCalibration.asyncDisplayKit; asdk.textCell = p[15] * ms
        return ["worst-case": worst, "reuse-cells": reuse, "static-layouts": fixed, "manual-heights": manual, "cached-heights": cached,
                "resized-images": resized, "rasterized-layers": raster, "no-offscreen-rendering": nooff, "asyncdisplaykit": asdk]
    }

    func measure(_ scenario: ThesisScenario, _ costs: Costs, seed: UInt64, windows: Bool = false) -> (fps: Double, stability: Double, duration: Double) {
        var variant = scenario
        variant.costs = costs
        var workload = variant.workload(seed: seed)
        let report = PipelineSimulator(display: .fixed(hz: 60), timestampJitter: 0.02, seed: seed).run(&workload).analyze().whole
        if windows { print("WIN \(scenario.name): " + report.windowFPS.entries.map { "\($0.key / 100):\($0.count)" }.joined(separator: " ")) }
        return (report.averageFPS ?? 0, report.stability ?? 0, workload.testDuration ?? 0)
    }

    func error(_ p: [Double], verbose: Bool = false) -> Double {
        let costs = chain(p)
        var total = 0.0
        for scenario in ThesisScenario.all where scenario.name != "best-case" {
            for seed: UInt64 in [1] {
                let result = measure(scenario, costs[scenario.name]!, seed: seed, windows: verbose && seed == 1)
                let fpsError = (result.fps - scenario.thesisAverageFPS) / (0.05 * scenario.thesisAverageFPS)
                let stabilityError = (result.stability - scenario.thesisStability) / 0.05
                // Inside the tolerance counts little; outside, a lot.
                total += fpsError * fpsError + stabilityError * stabilityError
                    + 40 * max(0, abs(fpsError) - 0.8) + 40 * max(0, abs(stabilityError) - 0.8)
                if verbose && seed == 1 {
                    print("RESULT \(scenario.name): fps \(Metric.decimal(result.fps, digits: 1)) (\(scenario.thesisAverageFPS)) stability \(Metric.decimal(result.stability * 100, digits: 1)) (\(scenario.thesisStability * 100)) duration \(Metric.decimal(result.duration, digits: 1)) (\(scenario.thesisDuration))")
                }
            }
        }
        return total
    }

    @Test func search() {
        let env = ProcessInfo.processInfo.environment["FRAMESCOPE_CALIBRATE_START"]
        var p: [Double] = env.map { $0.split(separator: ",").compactMap { Double($0) } }
            ?? [20.8, 12, 6, 2.34, 1.4, 9.5, 8.05, 6, 9, 5.6, 19, 8.55, 0.9, 0.29, 0.26, 4.8, 2, 3, 6, 0.8]
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
        for (name, value) in zip(Self.names, p) { print("PARAM \(name) = \(Metric.decimal(value, digits: 3)) ms") }
    }
}
