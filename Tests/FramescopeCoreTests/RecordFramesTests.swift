import FramescopeCore
import Testing

/// `FrameAnalyzer.recordFrames`: frames known only by their duration (another tool's
/// histogram) count exactly as ticks that far apart would, without windows or segments.
@Suite("Frames known only by duration")
struct RecordFramesTests {
    /// The report of ticks whose intervals are `durations` (after one start tick and one
    /// first interval, which `recordFrames` has no counterpart for and are taken out).
    func fromTicks(_ durations: [Double], interval: Double) -> FrameReport {
        var analyzer = FrameAnalyzer()
        var time = 100.0
        analyzer.recordTick(timestamp: time, targetTimestamp: nil, refreshInterval: interval)
        time += interval
        analyzer.recordTick(timestamp: time, targetTimestamp: nil, refreshInterval: interval)
        for duration in durations {
            time += duration
            analyzer.recordTick(timestamp: time, targetTimestamp: nil, refreshInterval: interval)
        }
        return analyzer.report().whole
    }

    @Test("Counts, drops, hitch time, hangs, slow and frozen frames and the histogram equal the ticks'", arguments: [1 / 60.0, 1 / 120.0, 1 / 50.0])
    func sameAsTicks(interval: Double) {
        let buckets: [(Double, Int)] = [(0.010, 3), (interval, 40), (0.019, 5), (0.034, 4), (0.26, 2), (0.8, 1)]
        var analyzer = FrameAnalyzer()
        for (duration, count) in buckets {
            let accepted = analyzer.recordFrames(duration: duration, count: count, refreshInterval: interval)
            #expect(accepted)
        }
        let histogram = analyzer.report().whole
        let ticks = fromTicks(buckets.flatMap { Array(repeating: $0.0, count: $0.1) }, interval: interval)
        #expect(histogram.frames == ticks.frames)
        #expect(histogram.droppedFrames == ticks.droppedFrames)
        #expect(histogram.dropEvents == ticks.dropEvents)
        #expect(histogram.maxDroppedFrames == ticks.maxDroppedFrames)
        #expect(histogram.slowFrames == ticks.slowFrames && histogram.frozenFrames == ticks.frozenFrames)
        #expect(histogram.hangs == ticks.hangs)
        #expect(histogram.frameDurations == ticks.frameDurations)
        #expect(histogram.refreshRates == ticks.refreshRates)
        // Sums agree to the nanosecond rounding of each tick's timestamp.
        #expect(abs(histogram.duration - ticks.duration) < 1e-6)
        #expect(abs(histogram.hitchTime - ticks.hitchTime) < 1e-6)
        #expect(histogram.windows == 0 && histogram.firstFrames == 0)
    }

    @Test("Values outside physics are refused and record nothing", arguments: [
        (0.0, 1, 1 / 60.0), (-1.0, 1, 1 / 60.0), (.nan, 1, 1 / 60.0), (.infinity, 1, 1 / 60.0), (2e6, 1, 1 / 60.0),
        (0.02, -1, 1 / 60.0), (0.02, 1, 0.0), (0.02, 1, 2.0), (0.02, 1, .nan),
    ] as [(Double, Int, Double)])
    func refused(duration: Double, count: Int, interval: Double) {
        var analyzer = FrameAnalyzer()
        let accepted = analyzer.recordFrames(duration: duration, count: count, refreshInterval: interval)
        #expect(!accepted)
        #expect(analyzer.report().whole.isEmpty)
    }

    @Test("Huge counts saturate instead of trapping")
    func saturation() {
        var analyzer = FrameAnalyzer()
        analyzer.recordFrames(duration: 1000, count: .max, refreshInterval: 1 / 60.0)
        analyzer.recordFrames(duration: 1000, count: .max, refreshInterval: 1 / 60.0)
        let report = analyzer.report().whole
        #expect(report.frames == .max && report.droppedFrames == .max && report.hangs == .max)
        #expect(report.duration > 1e22)
    }
}
