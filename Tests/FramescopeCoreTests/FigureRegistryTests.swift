import FramescopeCore
import Testing

@Suite("The vocabulary of figures")
struct FigureRegistryTests {
    /// A report of 120 frames at 60 Hz with one 100 ms frame (five frames late): hitches, a
    /// frozen frame and a known duration.
    func report() -> FrameReport {
        let r = 1.0 / 60
        var analyzer = FrameAnalyzer()
        var t = 0.0
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
        for index in 0..<120 {
            t += index == 60 ? 0.1 : r
            analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
        }
        return analyzer.report().whole
    }

    @Test("Names are unique; every metric is a figure whole and in motion, then frozen frames per thousand")
    func names() {
        let names = Figure.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names == Metric.allCases.map(\.rawValue) + Metric.allCases.map { "motion." + $0.rawValue } + ["frozenFramesPerThousand"])
        #expect(Figure.all.allSatisfy { Figure(name: $0.name) == $0 })
        #expect(Figure(name: "motion.frozenFramesPerThousand") == nil && Figure(name: "") == nil)
    }

    @Test("Figures of a metric take its unit and direction; in motion they say so in the label")
    func derived() {
        for metric in Metric.allCases {
            for figure in [Figure.report(metric), Figure.motion(metric)] {
                #expect(figure.metric == metric && figure.unit == metric.unit.symbol && figure.direction == metric.direction, "\(figure)")
            }
            #expect(Figure.report(metric).label == metric.label)
            #expect(Figure.motion(metric).label == metric.label + " in motion")
        }
        #expect(Figure.hitchRatio.labelWithUnit == "Hitch ratio (ms/s)")
        #expect(Figure.averageFPS.labelWithUnit == "Average FPS")
        #expect(Figure.motionHitchRatio.labelWithUnit == "Hitch ratio in motion (ms/s)")
        #expect(Figure.frozenFramesPerThousand.labelWithUnit == "Frozen per 1000 frames")
        #expect(Figure.frozenFramesPerThousand.direction == .lowerIsBetter)
    }

    @Test("Every metric has a direction stated for it: only frames, duration and rejected ticks are neutral")
    func directions() {
        let neutral = Metric.allCases.filter { $0.direction == .neutral }
        #expect(neutral == [.frames, .duration, .rejectedTicks])
        let higher = Metric.allCases.filter { $0.direction == .higherIsBetter }
        #expect(higher == [.averageFPS, .firstFPS, .minFPS, .maxFPS, .stability])
    }

    @Test("Ratios: storage ids 1–5 in order; each ratio's value is the report's figure")
    func ratios() throws {
        #expect(Figure.withRatio.map(\.name) == ["hitchRatio", "motion.hitchRatio", "hangRate", "averageFPS", "frozenFramesPerThousand"])
        #expect(Figure.withRatio.compactMap(\.ratio?.storageID) == [1, 2, 3, 4, 5])
        let whole = report()
        for figure in Figure.withRatio {
            let parts = try #require(figure.parts(whole: whole, motion: whole))
            let value = try #require(figure.value(whole: whole, motion: whole))
            #expect(abs(parts.numerator / parts.denominator - value) <= 1e-9 * max(1, abs(value)), "\(figure)")
        }
        let frozen = try #require(Figure.frozenFramesPerThousand.value(whole: whole, motion: nil))
        #expect(frozen == Double(whole.frozenFrames) * 1000 / Double(whole.frames))
        #expect(Figure.motionHitchRatio.parts(whole: whole, motion: nil) == nil)
        #expect(Figure.motionHitchRatio.value(whole: whole, motion: nil) == nil)
        #expect(Figure.report(.frames).parts(whole: whole, motion: nil) == nil)
    }

    @Test("Bands: the hitch ratio's are Apple's, whole and in motion, and the metric's thresholds follow them")
    func bands() {
        #expect(Figure.hitchRatio.defaultBands == Figure.Bands(warning: 5, critical: 10))
        #expect(Figure.motionHitchRatio.defaultBands == Figure.Bands(warning: 5, critical: 10))
        #expect(Figure.all.filter { $0.defaultBands != nil }.map(\.name) == ["hitchRatio", "motion.hitchRatio"])
        #expect(Figure.all.filter { $0.bandMaximum != nil }.map(\.name)
                == ["hitchRatio", "hangRate", "frameDuration.p95", "motion.hitchRatio", "frozenFramesPerThousand"])
        #expect(Metric.hitchRatio.bandThresholds?.warning == 5 && Metric.hitchRatio.bandThresholds?.critical == 10)
        #expect(Metric.hangRate.bandThresholds == nil)
        #expect(Figure.hitchRatio.band(of: 4.9) == .good && Figure.hitchRatio.band(of: 10) == .warning && Figure.hitchRatio.band(of: 10.1) == .critical)
    }

    @Test("Format: as the metric writes it, or with the figure's own unit")
    func format() {
        #expect(Figure.hitchRatio.format(12.34) == "12.3 ms/s")
        #expect(Figure.report(.frameDurationP95).format(0.0167) == "16.7 ms")
        #expect(Figure.frozenFramesPerThousand.format(2.5) == "2.5 per 1000 frames")
    }
}
