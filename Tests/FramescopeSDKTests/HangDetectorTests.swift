import FramescopeCore
import Testing
@testable import FramescopeSDK

/// The watchdog's decisions with made-up times (milliseconds, written as nanoseconds):
/// threshold 250 ms, a check every 10 ms, suspension tolerance 100 ms.
@Suite("Hang detector: decisions at given times")
struct HangDetectorTests {
    static let ms: UInt64 = 1_000_000

    static func makeDetector() -> HangDetector {
        HangDetector(threshold: 250 * ms, checkInterval: 10 * ms, suspensionTolerance: 100 * ms)
    }

    @Test("A healthy queue: each check finds the ping run and posts it again, no events")
    func healthy() {
        var detector = Self.makeDetector()
        #expect(detector.start(now: 0) == HangDetector.Action(postPing: true))
        for t in stride(from: UInt64(10), through: 1000, by: 10) {
            let action = detector.check(now: t * Self.ms, pingRanAt: (t - 9) * Self.ms)
            #expect(action == HangDetector.Action(postPing: true))
        }
        #expect(detector.hangs == 0 && detector.suspensions == 0 && detector.checks == 100)
    }

    @Test("No progress for the threshold begins a hang, dated from the post; the ping's run ends it")
    func hang() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        #expect(detector.checks(from: 10, to: 240).isEmpty)
        #expect(detector.checks(from: 250, to: 250) == [.began(Hang(start: 0, duration: 0.25))])
        #expect(detector.checks(from: 260, to: 400).isEmpty)
        let end = detector.check(now: 410 * Self.ms, pingRanAt: 403 * Self.ms)
        #expect(end == HangDetector.Action(events: [.ended(Hang(start: 0, duration: 0.403), .recovered)], postPing: true))
        #expect(detector.hangs == 1)
    }

    @Test("A ping that ran after the threshold but before a check saw it overdue is still a hang")
    func lateSeenHang() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 240)
        let action = detector.check(now: 250 * Self.ms, pingRanAt: 249 * Self.ms)
        #expect(action == HangDetector.Action(postPing: true))
        #expect(detector.checks(from: 260, to: 490).isEmpty)
        // Posted at 250 and ran at 505; the next check comes 100 ms late (within the
        // tolerance), at 590, and finds it ran 255 ms after it was posted.
        // The queue last kept up at 249 (the previous ping's run): the hang is dated from
        // the middle of 249…250.
        let late = detector.check(now: 590 * Self.ms, pingRanAt: 505 * Self.ms)
        let hang = Hang(start: 249_500_000, duration: 0.2555)
        #expect(late.events == [.began(hang), .ended(hang, .recovered)])
    }

    @Test("After healthy pings, a hang is reported once the ping waited the threshold, dated from the middle of the last run and the post")
    func hangAfterHealthyPings() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        for t in stride(from: UInt64(10), through: 90, by: 10) {
            _ = detector.check(now: t * Self.ms, pingRanAt: (t - 9) * Self.ms)
        }
        // Posted at 90 after the run at 81; the queue sticks before the next run.
        #expect(detector.check(now: 100 * Self.ms, pingRanAt: 91 * Self.ms) == HangDetector.Action(postPing: true))
        // Still no hang at 349: the ping, posted at 100, has waited 249 ms.
        #expect(detector.checks(from: 110, to: 340).isEmpty)
        #expect(detector.check(now: 349 * Self.ms, pingRanAt: nil).events.isEmpty)
        // At 350 it has waited the threshold; the hang began between 91 and 100: at 95.5.
        #expect(detector.check(now: 350 * Self.ms, pingRanAt: nil).events == [.began(Hang(start: 95_500_000, duration: 0.2545))])
        let end = detector.check(now: 410 * Self.ms, pingRanAt: 400 * Self.ms)
        #expect(end.events == [.ended(Hang(start: 95_500_000, duration: 0.3045), .recovered)])
        // The ping posted at 410 is still queued at a pause and the resume: the resume
        // forgets the run at 400, so a hang now is dated from the resume itself.
        _ = detector.pause(now: 420 * Self.ms, pingRanAt: nil)
        _ = detector.start(now: 500 * Self.ms)
        #expect(detector.checks(from: 510, to: 740).isEmpty)
        #expect(detector.checks(from: 750, to: 750) == [.began(Hang(start: 500 * Self.ms, duration: 0.25))])
    }

    @Test("(a) A check 2 s late restarts the measurement: the gap is no hang")
    func overshoot() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 50)
        // The process was stopped from 55 ms to 2055 ms; the ping (posted at 0) has not run.
        let late = detector.check(now: 2060 * Self.ms, pingRanAt: nil)
        #expect(late == HangDetector.Action())  // the ping stays in flight, measured from 2060
        #expect(detector.suspensions == 1)
        #expect(detector.checks(from: 2070, to: 2300).isEmpty)
        let ran = detector.check(now: 2310 * Self.ms, pingRanAt: 2305 * Self.ms)
        #expect(ran == HangDetector.Action(postPing: true))
        #expect(detector.hangs == 0)
    }

    @Test("(a) A ping that ran during the gap is not judged by its wait")
    func overshootWithRunPing() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        let late = detector.check(now: 2000 * Self.ms, pingRanAt: 1990 * Self.ms)
        #expect(late == HangDetector.Action(postPing: true))
        #expect(detector.hangs == 0 && detector.suspensions == 1)
    }

    @Test("A check late by less than the tolerance is an ordinary check")
    func lateWithinTolerance() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        // 10 ms interval + 100 ms tolerance: a check 110 ms after the last is still trusted.
        #expect(detector.check(now: 110 * Self.ms, pingRanAt: nil).events.isEmpty)
        #expect(detector.check(now: 220 * Self.ms, pingRanAt: nil).events.isEmpty)
        #expect(detector.check(now: 330 * Self.ms, pingRanAt: nil).events == [.began(Hang(start: 0, duration: 0.33))])
        #expect(detector.suspensions == 0)
    }

    @Test("(a)(d) A hang under way when a check is late ends at the last check before the gap")
    func hangThenOvershoot() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 300)  // began at 250
        let late = detector.check(now: 3000 * Self.ms, pingRanAt: nil)
        #expect(late.events == [.ended(Hang(start: 0, duration: 0.3), .suspended)])
        // Still stuck: a new hang counts from the restart at 3000.
        #expect(detector.checks(from: 3010, to: 3240).isEmpty)
        #expect(detector.checks(from: 3250, to: 3250) == [.began(Hang(start: 3000 * Self.ms, duration: 0.25))])
        #expect(detector.hangs == 2)
    }

    @Test("(b)(c) Paused time is not counted, and the first wait after resume is measured from the resume")
    func pauseResume() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 100)
        #expect(detector.pause(now: 105 * Self.ms, pingRanAt: nil) == HangDetector.Action())
        #expect(detector.check(now: 500 * Self.ms, pingRanAt: nil) == HangDetector.Action())  // ignored while paused
        // Resumed 5 s later with the same ping still in flight: no new post, fresh wait.
        #expect(detector.start(now: 5000 * Self.ms) == HangDetector.Action())
        #expect(detector.checks(from: 5010, to: 5240).isEmpty)
        #expect(detector.check(now: 5250 * Self.ms, pingRanAt: 5245 * Self.ms) == HangDetector.Action(postPing: true))
        #expect(detector.hangs == 0 && detector.suspensions == 0)
    }

    @Test("(d) A hang under way at pause ends at the pause, flagged")
    func pauseDuringHang() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 300)
        let pause = detector.pause(now: 305 * Self.ms, pingRanAt: nil)
        #expect(pause.events == [.ended(Hang(start: 0, duration: 0.305), .paused)])
        _ = detector.start(now: 1000 * Self.ms)
        #expect(detector.checks(from: 1010, to: 1100).isEmpty)
    }

    @Test("Pause or stop after the threshold but before a check saw it: begun, then ended")
    func unseenHangAtStop() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 240)
        let stop = detector.stop(now: 245 * Self.ms + 10 * Self.ms, pingRanAt: nil)
        let hang = Hang(start: 0, duration: 0.255)
        #expect(stop.events == [.began(hang), .ended(hang, .stopped)])
        #expect(detector.phase == .stopped)
        #expect(detector.check(now: 300 * Self.ms, pingRanAt: nil) == HangDetector.Action())
        #expect(detector.start(now: 400 * Self.ms) == HangDetector.Action())
        #expect(detector.phase == .stopped)
    }

    @Test("Stop after a process stop: the hang ends at the last check before the gap, not at the stop")
    func stopAfterSuspension() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        _ = detector.checks(from: 10, to: 300)
        let stop = detector.stop(now: 4000 * Self.ms, pingRanAt: nil)
        #expect(stop.events == [.ended(Hang(start: 0, duration: 0.3), .suspended)])
    }

    @Test("Three 300 ms blocks 100 ms apart are three hangs of about 300 ms, each begun and ended once")
    func hangsInARow() {
        var detector = Self.makeDetector()
        _ = detector.start(now: 0)
        var events: [HangEvent] = []
        for block in 0..<3 {
            let start = UInt64(block) * 400
            // The ping posted at `start` runs when the 300 ms block ends; the checks until
            // then find it waiting.
            events += detector.checks(from: start + 10, to: start + 300)
            let end = detector.check(now: (start + 310) * Self.ms, pingRanAt: (start + 301) * Self.ms)
            events += end.events
            #expect(end.postPing)
            // 100 ms of a healthy queue: each check finds the last ping run and posts again.
            for t in stride(from: start + 320, through: start + 400, by: 10) {
                let action = detector.check(now: t * Self.ms, pingRanAt: (t - 9) * Self.ms)
                events += action.events
            }
        }
        let began = events.filter { if case .began = $0 { true } else { false } }
        let ended = events.compactMap { event -> (Hang, HangEnding)? in
            if case let .ended(hang, ending) = event { return (hang, ending) }
            return nil
        }
        #expect(began.count == 3 && ended.count == 3, "\(events)")
        #expect(ended.allSatisfy { $0.1 == .recovered && abs($0.0.duration - 0.3) <= 0.01 }, "\(ended)")
        #expect(detector.hangs == 3)
    }

    @Test("A hang that began before a visit is recorded from the visit's start")
    func record() {
        let hang = Hang(start: 2_000_000_000, duration: 0.5)
        #expect(hang.record(visitStart: 1_000_000_000) == .init(offset: 1, duration: 0.5))
        let inside = hang.record(visitStart: 2_200_000_000)
        #expect(inside.offset == 0 && abs(inside.duration - 0.3) < 1e-12)
        #expect(hang.record(visitStart: 3_000_000_000) == .init(offset: 0, duration: 0))
    }
}

extension HangDetector {
    /// Checks every 10 ms from `from` to `to` ms (inclusive) with the ping not running, and
    /// returns the events.
    mutating func checks(from: UInt64, to: UInt64) -> [HangEvent] {
        var events: [HangEvent] = []
        for t in stride(from: from, through: to, by: 10) {
            let action = check(now: t * HangDetectorTests.ms, pingRanAt: nil)
            #expect(!action.postPing, "a ping is in flight at \(t) ms")
            events += action.events
        }
        return events
    }
}
