import FramescopeCore
import FramescopeSimulation
import Testing

@Suite("Merging reports and percentiles")
struct MergeAndHistogramTests {
    /// A random recording: mixed refresh rates, drops, stalls, jitter, invalid ticks and segments.
    struct RandomRecording {
        var events: [Event]
        enum Event { case tick(FrameTick), begin(String), end }

        init(seed: UInt64, ticks count: Int, start: Double) {
            var random = SeededGenerator(seed: seed)
            var t = start
            var hz = [60.0, 120.0, 50.0].randomElement(using: &random)!
            var events: [Event] = []
            var inSegment = false
            var segment = 0
            for _ in 0..<count {
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.02 { hz = [60.0, 120.0, 50.0, 80.0].randomElement(using: &random)! }
                if roll > 0.97 {
                    if inSegment { events.append(.end) } else { segment += 1; events.append(.begin("s\(seed)-\(segment)")) }
                    inSegment.toggle()
                }
                var step = 1.0 / hz
                let kind = Double.random(in: 0..<1, using: &random)
                if kind < 0.05 { step *= Double(Int.random(in: 2...6, using: &random)) }
                else if kind < 0.06 { step = Double.random(in: 0.2...1.2, using: &random) }
                else { step *= Double.random(in: 0.9...1.1, using: &random) }
                if kind > 0.995 {
                    events.append(.tick(FrameTick(timestamp: .nan)))
                    continue
                }
                t += step
                events.append(.tick(FrameTick(timestamp: t, targetTimestamp: t + 1 / hz)))
            }
            if inSegment { events.append(.end) }
            self.events = events
        }

        func play(into analyzer: inout FrameAnalyzer) {
            for event in events {
                switch event {
                case let .tick(tick): analyzer.record(tick)
                case let .begin(label): analyzer.beginSegment(label)
                case .end: analyzer.endSegment()
                }
            }
        }
    }

    @Test("Merging the reports of two recordings gives the report of both", arguments: 0..<40)
    func mergeProperty(seed: Int) {
        let first = RandomRecording(seed: UInt64(seed), ticks: 400 + seed * 37, start: 10)
        let second = RandomRecording(seed: UInt64(seed + 1000), ticks: 300 + seed * 11, start: 5000)

        var a = FrameAnalyzer()
        first.play(into: &a)
        var b = FrameAnalyzer()
        second.play(into: &b)
        var both = FrameAnalyzer()
        first.play(into: &both)
        both.pause()
        second.play(into: &both)

        let merged = a.report().merging(b.report())
        let expected = both.report()
        #expect(merged.whole == expected.whole, "seed \(seed)")
        #expect(merged.motion == expected.motion, "seed \(seed)")
        #expect(merged.segments == expected.segments, "seed \(seed)")
        // Merge is associative and has the empty report as identity.
        let c = RandomRecording(seed: UInt64(seed + 2000), ticks: 200, start: 9000)
        var third = FrameAnalyzer()
        c.play(into: &third)
        let (ra, rb, rc) = (a.report().whole, b.report().whole, third.report().whole)
        #expect(ra.merging(rb).merging(rc) == ra.merging(rb.merging(rc)), "seed \(seed)")
        #expect(FrameReport().merging(ra) == ra, "seed \(seed)")
    }

    @Test("Percentiles lie within 1 % of the exact nearest-rank value", arguments: 0..<20)
    func percentileAccuracy(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var values: [Double] = []
        var histogram = DurationHistogram()
        for _ in 0..<(2000 + seed * 250) {
            // Log-uniform from 1 ms to 2 s, the range frame durations live in.
            let value = 0.001 * pow2(Double.random(in: 0..<11, using: &random))
            values.append(value)
            histogram.record(seconds: value)
        }
        values.sort()
        for q in [0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let rank = max(1, Int((q * Double(values.count)).rounded(.up)))
            let exact = values[rank - 1]
            let estimate = histogram.value(atQuantile: q)!
            #expect(abs(estimate - exact) / exact <= 0.01, "seed \(seed), q \(q): \(estimate) vs \(exact)")
        }
        #expect(histogram.count == values.count)
    }

    @Test("Report percentiles are clamped to the observed minimum and maximum")
    func reportPercentiles() {
        let report = analyze(ticks(steadyTimestamps(hz: 60, count: 100), hz: 60)).whole
        let p50 = report.frameDuration(atQuantile: 0.5)!
        #expect(abs(p50 - 1.0 / 60) / (1.0 / 60) < 0.01)
        #expect(p50 <= report.maxFrameDuration!)
        #expect(report.frameDuration(atQuantile: 1) == report.maxFrameDuration)
    }

    @Test("Histogram merge adds counts bucket by bucket")
    func histogramMerge() throws {
        var a = DurationHistogram()
        var b = DurationHistogram()
        a.record(seconds: 0.016, count: 3)
        a.record(seconds: 0.5)
        b.record(seconds: 0.016)
        b.record(seconds: 0.033, count: 2)
        let merged = a.merging(b)
        #expect(merged.count == 7)
        #expect(merged.buckets.count == 3)
        #expect(merged.buckets.first?.count == 4)
        #expect(throws: HistogramError.self) { try DurationHistogram(buckets: [.init(index: 5, count: 1), .init(index: 5, count: 1)]) }
        #expect(throws: HistogramError.self) { try DurationHistogram(buckets: [.init(index: -1, count: 1)]) }
        #expect(throws: HistogramError.self) { try DurationHistogram(buckets: [.init(index: 1, count: 0)]) }
    }

    @Test("Bucket bounds: every value lies in its bucket, whose midpoint is within 1/128")
    func bucketBounds() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<10_000 {
            let value = pow2(Double.random(in: -19..<15, using: &random))
            let index = DurationHistogram.bucketIndex(forSeconds: value)
            let lower = DurationHistogram.lowerBound(ofBucket: index)
            let upper = index + 1 < DurationHistogram.bucketCount ? DurationHistogram.lowerBound(ofBucket: index + 1) : .infinity
            #expect(lower <= value && value < upper)
            let middle = DurationHistogram.representativeValue(ofBucket: index)
            #expect(abs(middle - value) / value <= DurationHistogram.maximumRelativeError)
        }
    }

    func pow2(_ exponent: Double) -> Double {
        Elementary.exp(exponent * 0.6931471805599453)
    }
}
