import Foundation
import FramescopeCore
import FramescopeScroll
import FramescopeScrollRunner
import FramescopeSimulation
import Testing

/// The files a device's scroll runs leave for `framescope compare`: numbered on across
/// invocations, the report as JSON, read back whole.
@Suite("Scroll run series")
struct ScrollRunSeriesTests {
    /// A report of a scripted scroll over simulated ticks.
    static func report(seed: UInt64) -> RecordingReport {
        var run = ScrollTestRun(script: .steady(SteadyScroll(pointsPerFrame: 8, passes: 2)),
                                geometry: ScrollGeometry(contentHeight: 3_000, viewportHeight: 800))
        var t = 100.0
        var generator = SeededGenerator(seed: seed)
        while run.step(timestamp: t, targetTimestamp: t + 1.0 / 60, refreshInterval: 1.0 / 60) != nil {
            t += Double.random(in: 0..<1, using: &generator) < 0.05 ? 2.0 / 60 : 1.0 / 60
        }
        return run.report()
    }

    @Test("Runs are written as <build>-<n>.json, numbered on across invocations, and read back as the same report")
    func writesRuns() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-runs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let series = ScrollRunSeries(folder: folder, build: "feature/fast feed")
        #expect(series.build == "feature_fast_feed")
        let first = try series.write(Self.report(seed: 1))
        let again = ScrollRunSeries(folder: folder, build: "feature/fast feed")  // the next test invocation
        let second = try again.write(Self.report(seed: 2))
        #expect(first.lastPathComponent == "feature_fast_feed-1.json" && second.lastPathComponent == "feature_fast_feed-2.json")
        let read = try JSONDecoder().decode(RecordingReport.self, from: Data(contentsOf: second))
        #expect(read == Self.report(seed: 2))
        #expect(read.motion != nil, "the script's passes are segments: motion to compare")
    }

    @Test("The environment names the series; without FRAMESCOPE_RUNS_DIR there is none")
    func environment() {
        let series = ScrollRunSeries.fromEnvironment(["FRAMESCOPE_RUNS_DIR": "/tmp/runs", "FRAMESCOPE_BUILD": "base"])
        #expect(series?.url(run: 3).path == "/tmp/runs/base-3.json")
        #expect(ScrollRunSeries.fromEnvironment(["FRAMESCOPE_RUNS_DIR": "/tmp/runs"])?.build == "build")
        #expect(ScrollRunSeries.fromEnvironment([:]) == nil)
    }
}
