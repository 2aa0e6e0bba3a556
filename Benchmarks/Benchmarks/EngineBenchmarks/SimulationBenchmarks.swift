import Benchmark
import FramescopeCore
import FramescopeSimulation

/// The simulators' own speed: simulated frames (and fleet visits) per second of CPU.
func simulationBenchmarks() {
    Benchmark("PipelineSimulator, moderate workload at 60 Hz (per frame)",
              configuration: .init(metrics: [.wallClock, .cpuTotal, .throughput], scalingFactor: .kilo)) { benchmark in
        // One iteration simulates 1 000 frames (16.7 s at 60 Hz); throughput is in frames/s ÷ 1 000.
        for iteration in benchmark.scaledIterations {
            var workload = SyntheticWorkload(profile: .moderate, duration: 1000.0 / 60, stallInterval: 5, seed: UInt64(iteration))
            let recording = PipelineSimulator(display: .fixed(hz: 60), seed: UInt64(iteration)).run(&workload)
            blackHole(recording.ticks.count)
        }
    }

    Benchmark("Thesis scenario worst-case, whole test",
              configuration: .init(metrics: [.wallClock, .cpuTotal], scalingFactor: .one, maxIterations: 5)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(ThesisScenario.named("worst-case")!.simulate(seed: 1).ticks.count)
        }
    }

    Benchmark("FleetSimulation.demo, 7 days × 50 devices",
              configuration: .init(metrics: [.wallClock, .cpuTotal], scalingFactor: .one, maxIterations: 3)) { benchmark in
        for _ in benchmark.scaledIterations {
            let batches = FleetSimulation.demo(start: 1_790_000_000, days: 7, deviceCount: 50).batches()
            blackHole(batches.reduce(0) { $0 + $1.events.count })
        }
    }
}
