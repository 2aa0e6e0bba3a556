import FramescopeCore
import Testing
@testable import FramescopeSDK

/// Feeds a tracker 60 Hz ticks on a timeline in seconds, skipping refreshes on request.
struct TickFeeder {
    var time: Double
    let interval = 1.0 / 60

    /// `count` on-time frames.
    mutating func frames(_ count: Int, into tracker: inout ScreenTracker) {
        for _ in 0..<count {
            time += interval
            tracker.tick(timestamp: time, targetTimestamp: time + interval)
        }
    }

    /// One frame that missed `missed` refreshes.
    mutating func late(missing missed: Int, into tracker: inout ScreenTracker) {
        time += interval * Double(missed + 1)
        tracker.tick(timestamp: time, targetTimestamp: time + interval)
    }

    /// Nanoseconds of the current time.
    var now: UInt64 { UInt64(time * 1e9) }
}

private func finished(_ outcome: VisitOutcome?) throws -> ClosedVisit {
    guard case let .finished(visit)? = outcome else {
        Issue.record("expected a finished visit, got \(String(describing: outcome))")
        throw TrackerTestFailure()
    }
    return visit
}

private struct TrackerTestFailure: Error {}

@Suite("ScreenTracker: visits, motion, pauses and the busy-main-thread hint")
struct ScreenTrackerTests {
    let lenient = ScreenTracker.Configuration(minimumVisitDuration: 0, minimumVisitFrames: 1)

    @Test("Entering a screen closes the visit before; each visit has its own report, first interval apart")
    func visitsSplitAtEnter() throws {
        var tracker = ScreenTracker(configuration: lenient)
        var feed = TickFeeder(time: 100)
        #expect(tracker.enter("Feed", now: feed.now, unixTime: 1_800_000_000) == nil)
        feed.frames(121, into: &tracker)     // 1 start tick, 1 first interval, 119 measured
        let first = try finished(tracker.enter("Detail", now: feed.now, unixTime: 1_800_000_002))
        #expect(first.screen == "Feed")
        #expect(first.report.frames == 119)
        #expect(first.report.firstFrames == 1)
        #expect(first.motion == nil)
        #expect(abs(first.duration - 121.0 / 60) < 1e-6)   // entered to closed, on the clock
        #expect(first.event(hangs: [], resources: nil, state: DeviceState()).startedAt == "2027-01-15T08:00:00.000Z")

        feed.frames(61, into: &tracker)
        let second = try finished(tracker.close(now: feed.now))
        #expect(second.screen == "Detail")
        #expect(second.report.frames == 59)
        #expect(second.report.firstFrames == 1)
        #expect(tracker.statistics.visitsFinished == 2)
        #expect(tracker.close(now: feed.now) == nil)
    }

    @Test("Motion cuts the visit: hitches in motion show in the motion report and the whole")
    func motion() throws {
        var tracker = ScreenTracker(configuration: lenient)
        var feed = TickFeeder(time: 10)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(60, into: &tracker)
        tracker.beginMotion()
        feed.frames(30, into: &tracker)
        feed.late(missing: 2, into: &tracker)
        feed.frames(29, into: &tracker)
        tracker.endMotion()
        feed.frames(30, into: &tracker)
        let visit = try finished(tracker.close(now: feed.now))
        let motion = try #require(visit.motion)
        #expect(motion.frames == 60)
        #expect(motion.droppedFrames == 2)
        #expect(visit.report.droppedFrames == 2)
        #expect(visit.report.frames == 58 + 60 + 30)
        #expect(try #require(motion.hitchRatio) > (try #require(visit.report.hitchRatio)))
    }

    @Test("Motion under way when the screen changes continues in the next visit")
    func motionAcrossScreens() throws {
        var tracker = ScreenTracker(configuration: lenient)
        var feed = TickFeeder(time: 10)
        _ = tracker.enter("A", now: feed.now, unixTime: 0)
        tracker.beginMotion()
        feed.frames(20, into: &tracker)
        _ = tracker.enter("B", now: feed.now, unixTime: 0)
        feed.frames(20, into: &tracker)
        tracker.endMotion()
        let visit = try finished(tracker.close(now: feed.now))
        #expect(visit.motion?.frames == 18)
    }

    @Test("Pausing leaves the background out of the duration and the frames; resuming starts with a first interval")
    func pauseAndResume() throws {
        var tracker = ScreenTracker(configuration: lenient)
        var feed = TickFeeder(time: 50)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(61, into: &tracker)
        tracker.pause(now: feed.now)
        feed.time += 30                       // 30 s in the background
        feed.frames(10, into: &tracker)       // ignored while paused
        tracker.resume(now: feed.now)
        feed.frames(61, into: &tracker)
        let visit = try finished(tracker.close(now: feed.now))
        #expect(visit.report.frames == 59 + 59)
        #expect(visit.report.firstFrames == 2)
        #expect(visit.report.hangs == 0)
        #expect(abs(visit.duration - (61.0 + 61.0) / 60) < 0.01)
    }

    @Test("Short visits are dropped and counted")
    func shortVisitsDropped() {
        var tracker = ScreenTracker(configuration: ScreenTracker.Configuration(minimumVisitDuration: 1, minimumVisitFrames: 10))
        var feed = TickFeeder(time: 1)
        _ = tracker.enter("Flash", now: feed.now, unixTime: 0)
        feed.frames(20, into: &tracker)       // 0.33 s
        guard case .dropped? = tracker.enter("Next", now: feed.now, unixTime: 0) else {
            Issue.record("a 0.33 s visit should be dropped")
            return
        }
        #expect(tracker.statistics.visitsDropped == 1)
        #expect(tracker.statistics.visitsFinished == 0)
    }

    @Test("A short visit is kept when it holds a hang: a watchdog record or a frame past the hang threshold, and a measured frame")
    func shortVisitWithHang() throws {
        var tracker = ScreenTracker(configuration: ScreenTracker.Configuration(minimumVisitDuration: 1, minimumVisitFrames: 10))
        var feed = TickFeeder(time: 1)
        _ = tracker.enter("Flash", now: feed.now, unixTime: 0)
        feed.frames(20, into: &tracker)
        guard case let .dropped(calm)? = tracker.enter("Stuck", now: feed.now, unixTime: 0) else {
            Issue.record("a 0.33 s visit should be dropped")
            return
        }
        let watchdogHang = [HangRecord(offset: 0, duration: 0.4)]
        #expect(!calm.isKeptWhenShort(hangs: []))
        #expect(calm.isKeptWhenShort(hangs: watchdogHang))

        feed.frames(5, into: &tracker)
        feed.late(missing: 20, into: &tracker)   // a 0.35 s frame: a hang in the frames alone
        feed.frames(5, into: &tracker)
        guard case let .dropped(stuck)? = tracker.enter("Blank", now: feed.now, unixTime: 0) else {
            Issue.record("a 0.5 s visit should be dropped")
            return
        }
        #expect(stuck.report.hangs == 1)
        #expect(stuck.isKeptWhenShort(hangs: []))

        guard case let .dropped(blank)? = tracker.close(now: feed.now + 500_000_000) else {
            Issue.record("a visit without ticks should be dropped")
            return
        }
        #expect(blank.report.frames == 0)
        #expect(!blank.isKeptWhenShort(hangs: watchdogHang), "the collector refuses a visit without a measured frame")
    }

    @Test("Names: empty becomes 'unnamed', long ones are cut to 128 characters")
    func names() {
        var tracker = ScreenTracker(configuration: lenient)
        _ = tracker.enter("", now: 0, unixTime: 0)
        #expect(tracker.screen == "unnamed")
        _ = tracker.enter(String(repeating: "x", count: 300), now: 0, unixTime: 0)
        #expect(tracker.screen?.count == 128)
    }

    @Test("A long gap with the main thread idle is a pause; with it busy, a hang that counts")
    func longGaps() throws {
        let spans = BusySpanReader(epoch: 0)
        var tracker = ScreenTracker(configuration: lenient, busySpans: spans)
        var feed = TickFeeder(time: 100)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(30, into: &tracker)
        feed.time += 2                         // ticks stopped for 2 s, main thread not seen busy
        feed.frames(30, into: &tracker)
        #expect(tracker.statistics.longPauses == 1)
        var visit = try finished(tracker.close(now: feed.now))
        #expect(visit.report.hangs == 0)
        #expect(visit.report.firstFrames == 2)

        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(30, into: &tracker)
        let stallStart = feed.now
        feed.time += 2
        spans.publish(start: stallStart + 5_000_000, end: feed.now - 10_000_000)
        feed.frames(30, into: &tracker)
        visit = try finished(tracker.close(now: feed.now))
        #expect(tracker.statistics.longPauses == 1)
        #expect(visit.report.hangs == 1)
        #expect(visit.mainThreadHitches?.frames == 1)
        #expect(abs((visit.mainThreadHitches?.hitchTime ?? 0) - 2.0) < 0.02)
    }

    @Test("A busy span withdrawn as idle is no busy span: the long gap is a pause, and an earlier span stays")
    func withdrawnSpan() throws {
        let spans = BusySpanReader(epoch: 0)
        var tracker = ScreenTracker(configuration: lenient, busySpans: spans)
        var feed = TickFeeder(time: 100)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(30, into: &tracker)
        let earlier = feed.now
        spans.publish(start: earlier - 200_000_000, end: earlier - 100_000_000)
        feed.frames(2, into: &tracker)
        let stallStart = feed.now
        spans.publish(start: stallStart + 5_000_000, end: stallStart + 300_000_000)  // the wait, while it lasted
        feed.frames(1, into: &tracker)
        spans.retract(start: stallStart + 5_000_000)                                // … found idle
        #expect(spans.latest == nil)
        feed.time += 2
        feed.frames(30, into: &tracker)
        let visit = try finished(tracker.close(now: feed.now))
        #expect(tracker.statistics.longPauses == 1)
        #expect(visit.report.hangs == 0)
        // The withdrawn word replaced the grown span of the same start; the span before it stays.
        #expect(BusySpanReader.isSameSpan(spans.word.load(ordering: .relaxed), ((stallStart + 5_000_000) / 1_000_000) << 32))
    }

    @Test("Late frames that overlap a busy span count as main-thread hitches; others do not")
    func busyHint() throws {
        let spans = BusySpanReader(epoch: 0)
        var tracker = ScreenTracker(configuration: lenient, busySpans: spans)
        var feed = TickFeeder(time: 200)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(10, into: &tracker)
        // Render-side hitch: no busy span.
        feed.late(missing: 3, into: &tracker)
        feed.frames(10, into: &tracker)
        // Main-thread hitch: the ping posted during it waited 60 ms.
        let before = feed.now
        feed.late(missing: 5, into: &tracker)
        spans.publish(start: before + 10_000_000, end: before + 70_000_000)   // the ping ran after the tick
        feed.frames(10, into: &tracker)
        let visit = try finished(tracker.close(now: feed.now))
        #expect(visit.report.dropEvents == 2)
        let hint = try #require(visit.mainThreadHitches)
        #expect(hint.frames == 1)
        #expect(abs(hint.hitchTime - 5.0 / 60) < 0.002)
    }

    @Test("Without a watchdog there is no hint and every gap counts")
    func noWatchdog() throws {
        var tracker = ScreenTracker(configuration: lenient)
        var feed = TickFeeder(time: 1)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        feed.frames(10, into: &tracker)
        feed.time += 2
        feed.frames(10, into: &tracker)
        let visit = try finished(tracker.close(now: feed.now))
        #expect(visit.mainThreadHitches == nil)
        #expect(visit.report.hangs == 1)
    }

    @Test("Hangs go to the visit holding their midpoint, cut to the visit's end")
    func hangAssignment() {
        let visit = ClosedVisit(screen: "A", unixStart: 0, start: 10_000_000_000, end: 20_000_000_000, duration: 10,
                                report: FrameReport(), motion: nil, tags: [:], mainThreadHitches: nil)
        let hangs = [
            Hang(start: 9_900_000_000, duration: 0.4),    // began 0.1 s before the visit: midpoint inside
            Hang(start: 9_000_000_000, duration: 0.3),    // before the visit
            Hang(start: 15_000_000_000, duration: 0.5),   // inside
            Hang(start: 19_800_000_000, duration: 0.3),   // midpoint 19.95 s: inside, cut to 0.2 s
            Hang(start: 19_900_000_000, duration: 0.4),   // midpoint after the end: the next visit's
        ]
        let records = visit.hangRecords(from: hangs)
        #expect(records.count == 3)
        #expect(records[0].offset == 0 && abs(records[0].duration - 0.3) < 1e-9)
        #expect(abs(records[1].offset - 5) < 1e-9 && abs(records[1].duration - 0.5) < 1e-9)
        #expect(abs(records[2].offset - 9.8) < 1e-9 && abs(records[2].duration - 0.2) < 1e-9)
    }

    @Test("At most 32 hangs of a visit keep their stacks, the longest; a hang cut by the visit keeps the samples inside it")
    func stackedHangs() throws {
        let visit = ClosedVisit(screen: "A", unixStart: 0, start: 10_000_000_000, end: 100_000_000_000, duration: 90,
                                report: FrameReport(), motion: nil, tags: [:], mainThreadHitches: nil)
        let stack = HangStack(images: [HangStack.Image(id: String(repeating: "ab", count: 16), name: "App", size: 4096, app: true)],
                              frames: [HangStack.Frame(image: 0, offset: 16)],
                              samples: [0.0, 0.1, 0.2, 0.3].map { HangStack.Sample(at: $0, frames: [0]) })
        // 40 stacked hangs of 0.30 … 0.69 s, one every 2 s.
        let hangs = (0..<40).map { index in
            Hang(start: 11_000_000_000 + UInt64(index) * 2_000_000_000, duration: 0.3 + Double(index) / 100, stack: stack)
        }
        let records = visit.hangRecords(from: hangs.shuffled())
        #expect(records.count == 40)
        let stacked = records.filter { $0.stack != nil }
        #expect(stacked.count == HangStack.maximumStackedHangsPerVisit)
        #expect(stacked.map(\.duration).min()! > records.filter { $0.stack == nil }.map(\.duration).max()!)

        // Began 0.15 s before the visit: samples at 0.2 and 0.3 s remain, at 0.05 and 0.15 s.
        let early = visit.hangRecords(from: [Hang(start: 9_850_000_000, duration: 0.4, stack: stack, isIdle: true)])
        let cut = try #require(early.first)
        #expect(cut.idle == true)
        #expect(try #require(cut.stack).samples.map(\.at).map { ($0 * 1000).rounded() } == [50, 150])
        // Cut by the visit's end 0.15 s into the hang: samples at 0 and 0.1 s remain.
        let late = visit.hangRecords(from: [Hang(start: 99_850_000_000, duration: 0.2, stack: stack)])
        #expect(try #require(late.first?.stack).samples.map(\.at) == [0.0, 0.1])
        #expect(late.first?.idle == nil)
    }

    @Test("Busy spans pack to the millisecond and unpack")
    func busySpanPacking() throws {
        let reader = BusySpanReader(epoch: 5_000_000_000)
        #expect(reader.latest == nil)
        reader.publish(start: 6_250_400_000, end: 6_400_000_000)
        let span = try #require(reader.latest)
        #expect(span.start == 6_250_000_000)
        #expect(span.end == 6_400_000_000)
        #expect(span.overlaps(from: 6_300_000_000, to: 7_000_000_000))
        #expect(!span.overlaps(from: 6_400_000_000, to: 7_000_000_000))
    }

    @Test("Tags ride with every visit that closes after they are set")
    func tags() throws {
        var tracker = ScreenTracker(configuration: lenient)
        var feed = TickFeeder(time: 1)
        _ = tracker.enter("Feed", now: feed.now, unixTime: 0)
        tracker.tags["experiment"] = "B"
        feed.frames(10, into: &tracker)
        let visit = try finished(tracker.close(now: feed.now))
        #expect(visit.tags == ["experiment": "B"])
        #expect(visit.event(hangs: [], resources: nil, state: DeviceState(network: .wifi)).context.tags == ["experiment": "B"])
    }
}
