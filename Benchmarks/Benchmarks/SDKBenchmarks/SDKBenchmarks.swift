import Benchmark
import Foundation
import FramescopeCore
import FramescopeSDK

/// The SDK's cost on the ticking thread: `Framescope.tick` with everything running (hang
/// watchdog on the main queue, resource sampler, pipeline, uploader). Fails when a tick
/// allocates.
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

    Benchmark("Framescope.tick, full SDK running, 60 Hz with drops and motion (per tick)",
              configuration: .init(thresholds: noAllocations)) { benchmark in
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let framescope = try await MainActor.run {
            try Framescope(configuration: Framescope.Configuration(
                collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_bench",
                app: AppInfo(id: "bench", version: "1.0.0", build: "1"),
                device: DeviceInfo(model: "Bench", osName: "Linux", osVersion: "6", maxRefreshRate: 60),
                delivery: DeliveryConfiguration(directory: folder)))
        }
        let iterations = benchmark.scaledIterations
        await MainActor.run {
            framescope.start()
            framescope.screen("Feed")
            framescope.beginMotion()
        }
        benchmark.startMeasurement()
        await MainActor.run {
            let interval = 1.0 / 60
            var t = MonotonicClock.system.nowInSeconds()
            for index in iterations {
                t += index % 97 == 96 ? 2 * interval : interval
                framescope.tick(timestamp: t, targetTimestamp: t + interval)
            }
        }
        benchmark.stopMeasurement()
        await framescope.stop()
    }

    // The same ticks through the engine alone, for comparison in the same run: the
    // shared VM's cores change speed by up to a factor of two from second to second.
    Benchmark("FrameAnalyzer.recordTick alone, same ticks in a segment (per tick)",
              configuration: .init(thresholds: noAllocations)) { benchmark in
        var analyzer = FrameAnalyzer(keepsSegmentReports: false)
        analyzer.beginSegment("motion")
        let interval = 1.0 / 60
        var t = MonotonicClock.system.nowInSeconds()
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            t += index % 97 == 96 ? 2 * interval : interval
            blackHole(analyzer.recordTick(timestamp: t, targetTimestamp: t + interval, refreshInterval: nil))
        }
        benchmark.stopMeasurement()
        blackHole(analyzer.report().whole.frames)
    }

    // What the display-link driver adds per tick on a device with the overlay shown:
    // the overlay's ring of the last second, the motion signal's debounce check, and the
    // overlay's update check (a state only four times a second).
    Benchmark("OverlayModel.tick + update check + MotionSignal.tick, 120 Hz with drops (per tick)",
              configuration: .init(thresholds: noAllocations)) { benchmark in
        var overlay = OverlayModel()
        var motion = MotionSignal()
        _ = motion.began(.trackingMode, at: 0)
        let interval = 1.0 / 120
        var t = 1_000.0
        var shown = 0
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            t += index % 97 == 96 ? 2 * interval : interval
            overlay.tick(timestamp: t, targetTimestamp: t + interval, refreshInterval: interval)
            blackHole(motion.tick(at: t))
            // Every tick asks; a state (no text yet) comes four times a second.
            if overlay.update(at: t, hitchRatio: nil, hangUnderWay: nil, screen: nil) != nil { shown += 1 }
        }
        benchmark.stopMeasurement()
        blackHole(shown)
    }
}
