import Foundation
import FramescopeCore
import FramescopeSimulation
import Testing

@Suite("Frame-pipeline simulator")
struct SimulatorTests {
    static let displays: [(String, DisplayMode, Bool)] = [
        ("60 Hz", .fixed(hz: 60), false),
        ("120 Hz", .fixed(hz: 120), false),
        ("50 Hz", .fixed(hz: 50), false),
        ("ProMotion 24/120 Hz", .variable(idleHz: 24, motionHz: 120), false),
        ("ProMotion capped by low power", .variable(idleHz: 24, motionHz: 120), true),
    ]

    @Test("The engine finds exactly the drops, hangs and segments the simulator caused",
          arguments: 0..<5, [SyntheticWorkload.Profile.light, .moderate, .heavy])
    func groundTruth(displayIndex: Int, profile: SyntheticWorkload.Profile) {
        let (name, display, lowPower) = Self.displays[displayIndex]
        var hangs = 0
        for seed in UInt64(1)...6 {
            var workload = SyntheticWorkload(profile: profile, duration: 12, stallInterval: 3, stallLength: seed.isMultiple(of: 2) ? 0.4 : 0.9, seed: seed)
            let recording = PipelineSimulator(display: display, lowPower: lowPower, timestampJitter: 0.05, seed: seed).run(&workload, startTime: 1000)
            let truth = recording.groundTruth
            let report = recording.analyze()
            let context = "\(name), seed \(seed)"
            #expect(report.whole.frames == truth.frames, "\(context)")
            #expect(report.whole.droppedFrames == truth.droppedFrames, "\(context)")
            #expect(report.whole.dropEvents == truth.dropEvents, "\(context)")
            #expect(report.whole.maxDroppedFrames == truth.maxDroppedFrames, "\(context)")
            #expect(report.whole.hangs == truth.hangs.count, "\(context)")
            #expect(report.whole.frozenFrames == truth.frozenFrames, "\(context)")
            #expect(abs(report.whole.hitchTime - truth.hitchTime) <= Double(truth.dropEvents) * 0.1 / 60 + 1e-9, "\(context)")
            #expect(report.segments.map(\.label) == truth.segments.map(\.label), "\(context)")
            for (segment, expected) in zip(report.segments, truth.segments) {
                #expect(segment.report.frames == expected.frames, "\(context) \(expected.label)")
                #expect(segment.report.droppedFrames == expected.droppedFrames, "\(context) \(expected.label)")
                #expect(segment.report.dropEvents == expected.dropEvents, "\(context) \(expected.label)")
            }
            hangs += truth.hangs.count
        }
        #expect(hangs >= 6, "\(name): stalls every ~3 s should cause hangs")
    }

    @Test("Refresh rates follow the display: ProMotion rises in motion, low power caps at 60 Hz")
    func refreshRates() {
        var workload = SyntheticWorkload(profile: .light, duration: 10, seed: 3)
        let promotion = PipelineSimulator(display: .variable(idleHz: 24, motionHz: 120)).run(&workload).analyze()
        #expect(promotion.whole.refreshRates.count(of: 120) > 0)
        #expect(promotion.whole.refreshRates.count(of: 24) > 0)
        // The first frame of a scroll still arrives at the idle rate; the rest at 120 Hz.
        let motionRates = promotion.motion?.refreshRates
        #expect((motionRates?.count(of: 120) ?? 0) > 20 * (motionRates?.count(of: 24) ?? 0))
        var capped = SyntheticWorkload(profile: .light, duration: 10, seed: 3)
        let lowPower = PipelineSimulator(display: .variable(idleHz: 24, motionHz: 120), lowPower: true).run(&capped).analyze()
        #expect(lowPower.whole.refreshRates.entries.allSatisfy { $0.key <= 60 })
        #expect((lowPower.motion?.refreshRates.count(of: 60) ?? 0) > 100)
        var fifty = SyntheticWorkload(profile: .light, duration: 5, seed: 3)
        let pal = PipelineSimulator(display: .fixed(hz: 50)).run(&fifty).analyze()
        #expect(pal.whole.refreshRates.entries.map(\.key) == [50])
        #expect(pal.whole.droppedFrames == 0)
    }

    @Test("A frame that takes 2.3 refreshes of main-thread work drops 2 frames")
    func deadlineMiss() {
        struct OneSlowFrame: Workload {
            var count = 0
            mutating func frame(startingAt time: Double, refreshInterval: Double) -> FrameWork {
                count += 1
                return FrameWork(main: count == 30 ? 2.3 * refreshInterval : 0.002, render: 0.002, segment: nil)
            }
            func isFinished(at time: Double) -> Bool { count >= 60 }
        }
        var workload = OneSlowFrame()
        let recording = PipelineSimulator(display: .fixed(hz: 60), timestampJitter: 0).run(&workload)
        #expect(recording.groundTruth.droppedFrames == 2)
        #expect(recording.groundTruth.dropEvents == 1)
        #expect(recording.analyze().whole.droppedFrames == 2)
    }

    @Test("Simulations are deterministic per seed")
    func determinism() {
        func run(_ seed: UInt64) -> [SimulatedTick] {
            var workload = SyntheticWorkload(profile: .heavy, duration: 5, stallInterval: 2, seed: seed)
            return PipelineSimulator(display: .fixed(hz: 60), seed: seed).run(&workload).ticks
        }
        #expect(run(7) == run(7))
        #expect(run(7) != run(8))
    }

    @Test("Elementary functions agree with the C library")
    func elementary() {
        var random = SeededGenerator(seed: 11)
        for _ in 0..<2000 {
            let x = Double.random(in: 1e-12...1e6, using: &random)
            #expect(abs(Elementary.log(x) - Foundation.log(x)) <= 1e-13 * max(1, abs(Foundation.log(x))))
            let y = Double.random(in: -50...50, using: &random)
            #expect(abs(Elementary.exp(y) - Foundation.exp(y)) <= 1e-13 * Foundation.exp(y))
            let z = Double.random(in: -100...100, using: &random)
            #expect(abs(Elementary.cos(z) - Foundation.cos(z)) <= 1e-12)
        }
    }

    @Test("Distributions have their documented mean")
    func distributions() {
        var random = SeededGenerator(seed: 5)
        let n = 200_000
        var sum = 0.0
        var below = 0
        for _ in 0..<n {
            sum += random.exponential(mean: 2)
            if random.logNormal(median: 3, sigma: 0.5) < 3 { below += 1 }
        }
        #expect(abs(sum / Double(n) - 2) < 0.02)
        #expect(abs(Double(below) / Double(n) - 0.5) < 0.01)
    }
}
