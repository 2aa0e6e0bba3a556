import FramescopeCore
import Testing

@Suite("Frame analyzer: the per-frame definitions")
struct FrameAnalyzerTests {
    @Test("Steady 60 Hz and 120 Hz: nothing dropped, hitch ratio 0", arguments: [60.0, 120.0])
    func steady(hz: Double) {
        let report = analyze(ticks(steadyTimestamps(hz: hz, count: Int(hz) * 10), hz: hz)).whole
        #expect(report.frames == Int(hz) * 10 - 1)  // the first interval is firstFPS only
        #expect(report.firstFrames == 1)
        #expect(report.droppedFrames == 0)
        #expect(report.dropEvents == 0)
        #expect(report.maxDroppedFrames == 0)
        #expect(report.hitchTime == 0)
        #expect(report.hitchRatio == 0)
        #expect(report.hangs == 0 && report.slowFrames == 0 && report.frozenFrames == 0)
        #expect(isClose(report.averageFPS, hz, tolerance: 1e-6))
        #expect(isClose(report.firstFPS, hz, tolerance: 1e-6))
        #expect(report.refreshRates.entries == [Tally.Entry(key: Int(hz), count: Int(hz) * 10 - 1)])
        #expect(report.stability == 1)
        #expect(report.rejectedTicks == 0)
    }

    @Test("A steady stream reports zero drops (the article's off-by-one adds n, not n − 1)")
    func steadyStreamHasNoDrops() {
        var analyzer = FrameAnalyzer()
        for tick in ticks(steadyTimestamps(hz: 60, count: 100), hz: 60) {
            if case let .measured(frame) = analyzer.record(tick) {
                #expect(frame.elapsedRefreshes == 1)
                #expect(frame.droppedFrames == 0)
            }
        }
        #expect(analyzer.report().whole.droppedFrames == 0)
    }

    @Test("One interval of 3 refreshes at 60 Hz: 2 dropped, 1 drop event, 33.3 ms hitch")
    func threeRefreshInterval() {
        let r = 1.0 / 60
        let stamps = [0, r, 2 * r, 3 * r, 6 * r, 7 * r, 8 * r]
        let report = analyze(ticks(stamps, hz: 60)).whole
        #expect(report.frames == 5)
        #expect(report.droppedFrames == 2)
        #expect(report.dropEvents == 1)
        #expect(report.maxDroppedFrames == 2)
        #expect(isClose(report.hitchTime, 2 * r, tolerance: 1e-8))
        #expect(abs(report.hitchTime * 1000 - 33.333) < 0.001)
        #expect(report.slowFrames == 1)
        #expect(report.hangs == 0)
        // duration = 4 frames of r + one of 3r = 7r; hitch ratio = 1000 · 2r / 7r
        #expect(isClose(report.duration, 7 * r, tolerance: 1e-8))
        #expect(isClose(report.hitchRatio, 2000.0 / 7, tolerance: 1e-6))
        #expect(isClose(report.minFPS, 20, tolerance: 1e-6))
        #expect(isClose(report.maxFrameDuration, 3 * r, tolerance: 1e-12))
    }

    @Test("120 Hz, a run at 60 Hz, and back: no drops, frames per refresh rate")
    func variableRefresh() {
        var stamps: [FrameTick] = []
        var t = 0.0
        for _ in 0..<120 { stamps.append(FrameTick(timestamp: t, targetTimestamp: t + 1.0 / 120)); t += 1.0 / 120 }
        // The display switches to 60 Hz: this tick already targets the next 60 Hz refresh.
        stamps.append(FrameTick(timestamp: t, targetTimestamp: t + 1.0 / 60))
        for _ in 0..<60 { t += 1.0 / 60; stamps.append(FrameTick(timestamp: t, targetTimestamp: t + 1.0 / 60)) }
        stamps[stamps.count - 1].targetTimestamp = t + 1.0 / 120
        for _ in 0..<120 { t += 1.0 / 120; stamps.append(FrameTick(timestamp: t, targetTimestamp: t + 1.0 / 120)) }
        let report = analyze(stamps).whole
        #expect(report.droppedFrames == 0)
        #expect(report.hitchTime == 0)
        // 300 intervals; the first (at 120 Hz) is firstFPS only.
        #expect(report.frames == 299)
        #expect(report.refreshRates.count(of: 120) == 239)
        #expect(report.refreshRates.count(of: 60) == 60)
        #expect(isClose(report.averageFPS, 299 / (239.0 / 120 + 60.0 / 60), tolerance: 1e-6))
    }

    @Test("A missed refresh at 120 Hz is one dropped frame of 8.3 ms")
    func dropAt120Hz() {
        let r = 1.0 / 120
        let report = analyze(ticks([0, r, 2 * r, 4 * r, 5 * r], hz: 120)).whole
        #expect(report.droppedFrames == 1)
        #expect(isClose(report.hitchTime, r, tolerance: 1e-8))
    }

    @Test("50 Hz: 20 ms frames, a 60 ms interval drops 2")
    func fiftyHertz() {
        let r = 1.0 / 50
        let report = analyze(ticks([0, r, 2 * r, 5 * r, 6 * r], hz: 50)).whole
        #expect(report.frames == 3)
        #expect(report.droppedFrames == 2)
        #expect(isClose(report.hitchTime, 2 * r, tolerance: 1e-8))
        #expect(report.refreshRates.entries == [Tally.Entry(key: 50, count: 3)])
        #expect(isClose(report.averageFPS, 3 / (5 * r), tolerance: 1e-6))
    }

    @Test("A frame shown before its target counts as on time (duration clamped to the target)")
    func earlyFrameIsClamped() {
        let r = 1.0 / 60
        // The third tick comes 0.8 r after the second: before the second's target.
        let report = analyze(ticks([0, r, 2 * r, 2.8 * r, 3.8 * r], hz: 60)).whole
        #expect(report.frames == 3)
        #expect(isClose(report.minFrameDuration, r, tolerance: 1e-9))
        #expect(report.droppedFrames == 0)
        // Durations: r, r (0.8 r clamped to its target), r.
        #expect(isClose(report.duration, 3 * r, tolerance: 1e-8))
        #expect(isClose(report.averageFPS, 60, tolerance: 1e-6))
        #expect(isClose(report.maxFPS, 60, tolerance: 1e-6))
    }

    @Test("Jitter of ±10 % of a refresh counts no hitch")
    func jitterIsNotAHitch() {
        let r = 1.0 / 60
        var t = 0.0
        var stamps: [Double] = [t]
        for index in 0..<600 { t += index.isMultiple(of: 2) ? 1.1 * r : 0.9 * r; stamps.append(t) }
        let report = analyze(ticks(stamps, hz: 60)).whole
        #expect(report.droppedFrames == 0)
        #expect(report.hitchTime == 0)
        #expect(report.hitchRatio == 0)
        #expect(report.slowFrames == 0)
    }

    @Test("A 0.4 s stall is a hang, not frozen; a 0.8 s stall is both")
    func stalls() {
        let r = 1.0 / 60
        let hang = analyze(ticks([0, r, 2 * r, 2 * r + 0.4, 3 * r + 0.4], hz: 60)).whole
        #expect(hang.hangs == 1)
        #expect(isClose(hang.hangTime, 0.4, tolerance: 1e-8))
        #expect(hang.frozenFrames == 0)
        #expect(hang.slowFrames == 1)
        #expect(hang.droppedFrames == 23)  // round(0.4 · 60) = 24 refreshes
        #expect(isClose(hang.hitchTime, 0.4 - r, tolerance: 1e-8))
        #expect(isClose(hang.hangRate, 3600 * 0.4 / (0.4 + 2 * r), tolerance: 1e-6))

        let frozen = analyze(ticks([0, r, 2 * r, 2 * r + 0.8, 3 * r + 0.8], hz: 60)).whole
        #expect(frozen.hangs == 1)
        #expect(frozen.frozenFrames == 1)
        #expect(frozen.slowFrames == 0)  // frozen frames are not also slow
        #expect(isClose(frozen.hangTime, 0.8, tolerance: 1e-8))
    }

    @Test("NaN, duplicate and decreasing timestamps are rejected and counted, never fatal")
    func rejectedTicks() {
        let r = 1.0 / 60
        var analyzer = FrameAnalyzer()
        #expect(analyzer.record(FrameTick(timestamp: 0, targetTimestamp: r)) == .started)
        #expect(analyzer.record(FrameTick(timestamp: .nan, targetTimestamp: r)) == .rejected(.nonFiniteTimestamp))
        #expect(analyzer.record(FrameTick(timestamp: .infinity)) == .rejected(.nonFiniteTimestamp))
        if case .first = analyzer.record(FrameTick(timestamp: r, targetTimestamp: 2 * r)) {} else { Issue.record("expected the first interval") }
        #expect(analyzer.record(FrameTick(timestamp: r, targetTimestamp: 2 * r)) == .rejected(.notIncreasing))
        #expect(analyzer.record(FrameTick(timestamp: 0.5 * r, targetTimestamp: 2 * r)) == .rejected(.notIncreasing))
        #expect(analyzer.record(FrameTick(timestamp: 3 * r, targetTimestamp: 2 * r)) == .rejected(.invalidTarget))
        #expect(analyzer.record(FrameTick(timestamp: 3 * r)) == .rejected(.unknownRefreshInterval))
        if case let .measured(frame) = analyzer.record(FrameTick(timestamp: 2 * r, targetTimestamp: 3 * r)) {
            #expect(frame.droppedFrames == 0)
        } else { Issue.record("expected a measured interval") }
        let report = analyzer.report().whole
        #expect(report.rejectedTicks == 6)
        #expect(report.frames == 1)
    }

    @Test("Ticks without targets use the configured refresh interval")
    func refreshIntervalWithoutTargets() {
        let r = 1.0 / 60
        let stamps = [0, r, 2 * r, 5 * r, 6 * r].map { FrameTick(timestamp: $0) }
        let report = analyze(stamps, configuration: AnalyzerConfiguration(refreshInterval: r)).whole
        #expect(report.frames == 3)
        #expect(report.droppedFrames == 2)
        #expect(report.rejectedTicks == 0)
        let perTick = analyze([0, r, 2 * r, 5 * r].map { FrameTick(timestamp: $0, refreshInterval: r) }).whole
        #expect(perTick.droppedFrames == 2)
        let unknown = analyze(stamps).whole
        #expect(unknown.rejectedTicks == 5)
        #expect(unknown.frames == 0)
        #expect(unknown.averageFPS == nil)
        #expect(unknown.hitchRatio == nil)
    }

    @Test("FPS windows and stability, hand-counted at 16 Hz then 8 Hz")
    func windowsAndStability() {
        // Exact binary fractions avoid rounding at window edges.
        var stamps: [FrameTick] = []
        for i in 0..<48 { stamps.append(FrameTick(timestamp: Double(i) / 16, targetTimestamp: Double(i + 1) / 16)) }
        stamps.append(FrameTick(timestamp: 3, targetTimestamp: 3.125))  // the display drops to 8 Hz
        for j in 1...16 { stamps.append(FrameTick(timestamp: 3 + Double(j) / 8, targetTimestamp: 3 + Double(j + 1) / 8)) }
        let report = analyze(stamps).whole
        // Windows start at 1/16 (after the first interval) and cover (start, start + 1]:
        // 16, 16, 15 frames at 16 Hz, then 8 at 8 Hz; the window still open at 5 s is left out.
        #expect(report.windowFPS.entries == [Tally.Entry(key: 800, count: 1), Tally.Entry(key: 1500, count: 1), Tally.Entry(key: 1600, count: 2)])
        #expect(report.frames == 63)
        #expect(isClose(report.averageFPS, 63 / 4.9375, tolerance: 1e-9))
        // ±20 % of 12.76 FPS is 10.2 … 15.3: only the 15-FPS window is within.
        #expect(report.stability == 0.25)
    }

    @Test("A stall longer than a window leaves empty (0 FPS) windows")
    func emptyWindows() {
        let r = 0.0625
        var stamps = (0...32).map { Double($0) * r }  // 2 s at 16 Hz
        stamps.append(2 + 2.5)  // a 2.5 s stall
        stamps.append(contentsOf: (1...40).map { 4.5 + Double($0) * r })
        let report = analyze(ticks(stamps, hz: 16)).whole
        #expect(report.windowFPS.count(of: 0) == 2)
        #expect(report.hangs == 1)
        #expect(report.frozenFrames == 1)
    }

    @Test("The first interval after a pause is firstFPS, and the gap counts nowhere")
    func pause() {
        let r = 1.0 / 60
        var analyzer = FrameAnalyzer()
        for tick in ticks(steadyTimestamps(hz: 60, count: 60), hz: 60) { analyzer.record(tick) }
        analyzer.pause()
        for tick in ticks(steadyTimestamps(hz: 60, count: 60, start: 100), hz: 60) { analyzer.record(tick) }
        let report = analyzer.report().whole
        #expect(report.firstFrames == 2)
        #expect(report.frames == 118)
        #expect(report.hangs == 0)
        #expect(report.droppedFrames == 0)
        #expect(isClose(report.duration, 118 * r, tolerance: 1e-7))
    }

    @Test("The configured thresholds are used")
    func configuredThresholds() {
        let r = 1.0 / 60
        let stamps = ticks([0, r, 2 * r, 2 * r + 0.2, 3 * r + 0.2], hz: 60)
        #expect(analyze(stamps).whole.hangs == 0)
        #expect(analyze(stamps, configuration: AnalyzerConfiguration(hangThreshold: 0.1)).whole.hangs == 1)
        #expect(analyze(stamps, configuration: AnalyzerConfiguration(frozenThreshold: 0.15)).whole.frozenFrames == 1)
        #expect(AnalyzerConfiguration(hangThreshold: -1).problem != nil)
        #expect(AnalyzerConfiguration(stabilityBand: 1.5).problem != nil)
        #expect(AnalyzerConfiguration().problem == nil)
    }

    @Test("Recorded display times: the first interval counts like any other, and a tick early for its vsync counts at its own length")
    func recordedDisplayTimes() {
        // 120 Hz with ±0.3 ms of jitter around each vsync, and one missed refresh first.
        let r = 1.0 / 120
        var stamps = [0.0, 2 * r]
        for index in 3..<243 { stamps.append(Double(index) * r + (index % 2 == 0 ? 0.0003 : -0.0003)) }
        var recorded = FrameAnalyzer(timing: .recordedDisplayTimes)
        var link = FrameAnalyzer()
        for tick in ticks(stamps, hz: 120) {
            recorded.record(tick)
            link.record(tick)
        }
        let jittered = recorded.report().whole
        #expect(jittered.firstFrames == 0 && jittered.frames == stamps.count - 1)
        #expect(jittered.droppedFrames == 1, "the missed refresh of the first interval is counted")
        // Frames over the span: what PresentMon and Chrome call the frame rate.
        // (Durations add up in whole nanoseconds: 1e-4 FPS of rounding over 242 frames.)
        #expect(isClose(jittered.averageFPS, Double(stamps.count - 1) / (stamps.last! - stamps.first!), tolerance: 1e-4))
        let clamped = link.report().whole
        #expect(clamped.firstFrames == 1 && clamped.droppedFrames == 0)
        #expect((clamped.averageFPS ?? 0) < (jittered.averageFPS ?? 0) - 1, "early ticks rounded up to a refresh lower the display link's average")
    }

    @Test("FrameInterval: with clampsEarly false, D is the raw interval; lateness and drops are unchanged")
    func unclampedInterval() {
        let early = FrameInterval(previousTimestamp: 0, previousTarget: 0.01, timestamp: 0.0097, clampsEarly: false)
        #expect(early.duration == 0.0097 && early.droppedFrames == 0 && early.lateness == 0)
        #expect(FrameInterval(previousTimestamp: 0, previousTarget: 0.01, timestamp: 0.0097).duration == 0.01)
        let late = FrameInterval(previousTimestamp: 0, previousTarget: 0.01, timestamp: 0.0302, clampsEarly: false)
        #expect(late == FrameInterval(previousTimestamp: 0, previousTarget: 0.01, timestamp: 0.0302))
    }
}
