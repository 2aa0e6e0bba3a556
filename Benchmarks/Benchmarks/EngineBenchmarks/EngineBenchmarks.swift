import Benchmark
import FramescopeCore

/// Per-tick and per-merge costs of the engine. The per-tick benchmarks fail when a
/// tick allocates (threshold: 0 mallocs).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        scalingFactor: .mega,
        maxDuration: .seconds(3),
        maxIterations: 20
    )

    let noAllocations: [BenchmarkMetric: BenchmarkThresholds] = [
        .mallocCountTotal: .init(absolute: [.p100: 0]),
    ]

    // The loop of the per-tick benchmarks without the analyzer: what they spend
    // making ticks. Subtract it to get the analyzer's own cost.
    Benchmark("Baseline: making ticks only (per tick)",
              configuration: .init(thresholds: noAllocations)) { benchmark in
        let interval = 1.0 / 60
        var t = 0.0
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            t += index % 97 == 96 ? 2 * interval : interval
            blackHole(FrameTick(timestamp: t, targetTimestamp: t + interval))
        }
    }

    Benchmark("FrameAnalyzer.record, 60 Hz with drops (per tick)",
              configuration: .init(thresholds: noAllocations, setup: nil)) { benchmark in
        var analyzer = FrameAnalyzer()
        let interval = 1.0 / 60
        var t = 0.0
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + interval))
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            t += index % 97 == 96 ? 2 * interval : interval
            blackHole(analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + interval)))
        }
        benchmark.stopMeasurement()
        blackHole(analyzer.report().whole.frames)
    }

    Benchmark("FrameAnalyzer.record, 120 Hz inside a segment (per tick)",
              configuration: .init(thresholds: noAllocations)) { benchmark in
        var analyzer = FrameAnalyzer()
        let interval = 1.0 / 120
        var t = 0.0
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + interval))
        analyzer.beginSegment("scroll")
        t += interval
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + interval))
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            t += index % 61 == 60 ? 3 * interval : interval
            blackHole(analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + interval)))
        }
        benchmark.stopMeasurement()
        blackHole(analyzer.report().segments.count)
    }

    Benchmark("FrameReport.merge (screen-visit reports)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        let reports = (0..<16).map { seed in visitReport(seed: seed) }
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            var merged = reports[index & 15]
            merged.merge(reports[(index &+ 7) & 15])
            blackHole(merged.frames)
        }
    }

    simulationBenchmarks()

    Benchmark("FrameAnalyzer.report (compaction)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        var analyzer = FrameAnalyzer()
        var t = 0.0
        for index in 0..<3600 {
            t += index % 31 == 0 ? 3.0 / 60 : 1.0 / 60
            analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + 1.0 / 60))
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(analyzer.report())
        }
    }
}

/// A one-minute visit at 60 Hz with a few drops and one hang, varied by `seed`.
func visitReport(seed: Int) -> FrameReport {
    var analyzer = FrameAnalyzer()
    var t = Double(seed) * 1000
    for index in 0..<3600 {
        let refreshes = index % (23 + seed) == 0 ? 2 + seed % 3 : 1
        t += Double(refreshes) / 60 + (index == 1800 ? 0.3 : 0)
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + 1.0 / 60))
    }
    return analyzer.report().whole
}
