import FramescopeCore
import Testing

@Suite("Segments, motion and budgets")
struct SegmentAndBudgetTests {
    /// 60 Hz recording: idle, then `scrolls`, each a list of intervals in refreshes (1 = on time).
    func recording(scrolls: [[Int]], idleFrames: Int = 30) -> RecordingReport {
        let r = 1.0 / 60
        var analyzer = FrameAnalyzer()
        var t = 0.0
        func tick() { analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r)) }
        tick()
        for _ in 0..<idleFrames { t += r; tick() }
        for (index, scroll) in scrolls.enumerated() {
            analyzer.beginSegment("scroll \(index + 1)")
            for refreshes in scroll { t += Double(refreshes) * r; tick() }
            analyzer.endSegment()
            for _ in 0..<idleFrames { t += r; tick() }
        }
        return analyzer.report()
    }

    func scroll(dropsAt positions: Set<Int>, length: Int = 60) -> [Int] {
        (0..<length).map { positions.contains($0) ? 2 : 1 }
    }

    @Test("Each segment has its own report; an interval belongs to the segment of the tick that ends it")
    func segmentReports() {
        let report = recording(scrolls: [scroll(dropsAt: [5, 20, 40]), scroll(dropsAt: [])])
        #expect(report.segments.map(\.label) == ["scroll 1", "scroll 2"])
        #expect(report.segments[0].report.frames == 60)
        #expect(report.segments[0].report.dropEvents == 3)
        #expect(report.segments[1].report.dropEvents == 0)
        #expect(report.segments[0].report.firstFPS == nil)
        #expect(report.whole.dropEvents == 3)
        #expect(report.whole.frames == 30 + 60 + 30 + 60 + 30 - 1)
    }

    @Test("motion is the merge of the segments")
    func motionIsMergeOfSegments() {
        let report = recording(scrolls: [scroll(dropsAt: [3]), scroll(dropsAt: [10, 11]), scroll(dropsAt: [])])
        let merged = FrameReport.merged(report.segments.map(\.report))
        #expect(report.motion == merged)
        #expect(report.motion?.frames == 180)
        #expect(report.motion?.dropEvents == 3)
        // 3 hitches of one refresh over 180 frames + 3 extra refreshes: hitch ratio in motion.
        let r = 1.0 / 60
        #expect(isClose(report.motion?.hitchRatio, 1000 * 3 * r / (183 * r), tolerance: 1e-6))
        #expect(report.whole.hitchRatio! < report.motion!.hitchRatio!)
    }

    @Test("Without segments there is no motion report")
    func noSegments() {
        let report = recording(scrolls: [])
        #expect(report.motion == nil)
        #expect(report.segments.isEmpty)
    }

    @Test("At most 2 drop events per scroll: 3 in one scroll fail, the same 3 over 3 scrolls pass")
    func segmentBudget() {
        let budget = Budget(eachSegment: [.max(.dropEvents, 2)])
        let concentrated = recording(scrolls: [scroll(dropsAt: [5, 20, 40]), scroll(dropsAt: []), scroll(dropsAt: [])])
        let spread = recording(scrolls: [scroll(dropsAt: [5]), scroll(dropsAt: [20]), scroll(dropsAt: [40])])
        #expect(concentrated.whole.dropEvents == spread.whole.dropEvents)
        let violations = budget.violations(of: concentrated)
        #expect(violations.count == 1)
        #expect(violations.first?.scope == .segment(index: 0, name: "scroll 1"))
        #expect(violations.first?.actual == 3)
        #expect(violations.first?.description == "scroll 1: 3 drop events, budget allows 2")
        #expect(budget.violations(of: spread).isEmpty)
    }

    @Test("Recording, motion and segment limits; messages a developer understands")
    func budgetScopes() {
        let report = recording(scrolls: [scroll(dropsAt: [1, 2, 3, 4]), scroll(dropsAt: [])])
        let budget = Budget(
            recording: [.min(.averageFPS, 59.9), .max(.hangs, 0)],
            motion: [.max(.hitchRatio, 5)],
            eachSegment: [.max(.maxDroppedFrames, 3), .max(.dropEvents, 3)]
        )
        let messages = budget.violations(of: report).map(\.description)
        #expect(messages.count == 3)
        // 209 frames over 213 refreshes: 60 · 209 / 213 = 58.87 FPS.
        #expect(messages[0] == "recording: average 58.9 FPS, budget requires at least 59.9 FPS")
        // 4 late refreshes over 124 refreshes of motion: 1000 · 4 / 124 = 32.3 ms/s.
        #expect(messages[1] == "motion: hitch ratio 32.3 ms/s, budget allows 5.0 ms/s")
        #expect(messages[2] == "scroll 1: 4 drop events, budget allows 3")
    }

    @Test("A recording without segments is one segment for motion and segment limits")
    func unsegmentedBudget() {
        let report = analyze(ticks([0, 1.0 / 60, 2.0 / 60, 4.0 / 60, 5.0 / 60, 7.0 / 60], hz: 60))
        let budget = Budget(motion: [.max(.dropEvents, 1)], eachSegment: [.max(.dropEvents, 1)])
        let violations = budget.violations(of: report)
        #expect(violations.map(\.description) == ["motion: 2 drop events, budget allows 1", "recording: 2 drop events, budget allows 1"])
    }

    @Test("A limit on a metric without data is broken, saying so")
    func noDataIsAViolation() {
        let empty = FrameAnalyzer().report()
        let violations = Budget(recording: [.min(.averageFPS, 30)]).violations(of: empty)
        #expect(violations.map(\.description) == ["recording: no data for average FPS, budget requires at least 30.0 FPS"])
    }

    @Test("Repeated segment labels are told apart by position")
    func repeatedLabels() {
        var analyzer = FrameAnalyzer()
        var t = 0.0
        let r = 1.0 / 60
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
        for drops in [0, 3] {
            analyzer.beginSegment("scroll")
            for index in 0..<10 { t += (index == 5 && drops > 0 ? 4 : 1) * r; analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r)) }
            analyzer.endSegment()
        }
        let violations = Budget(eachSegment: [.max(.maxDroppedFrames, 2)]).violations(of: analyzer.report())
        #expect(violations.map(\.description) == ["scroll #2: 3 frames dropped at once, budget allows 2"])
    }

    @Test("A ratio over less than a second measured is withheld: a budget on it fails saying why; other limits are checked as usual")
    func withheldRatio() throws {
        var report = analyze(ticks(steadyTimestamps(hz: 60, count: 16), hz: 60))
        report.coverage = RecordingCoverage(traceSeconds: 2.27, measuredSeconds: 0.25)
        let budget = Budget(recording: [Budget.Limit(metric: .hitchRatio, bound: .max, value: 1000), Budget.Limit(metric: .droppedFrames, bound: .max, value: 5)])
        let violations = budget.violations(of: report)
        #expect(violations.count == 1)
        #expect(violations.first?.withheld == "only 0.25 s of 2.27 s measured; a ratio needs 1 s")
        #expect(violations.first?.description.hasPrefix("recording: hitch ratio withheld (only 0.25 s") == true, "\(violations)")
        report.coverage = RecordingCoverage(traceSeconds: 2.27, measuredSeconds: 1.5)
        #expect(budget.violations(of: report).isEmpty)
    }
}
