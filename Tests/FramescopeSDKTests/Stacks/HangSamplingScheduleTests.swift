import Testing
@testable import FramescopeSDK

/// The sampling schedule's decisions at made-up times (milliseconds written as nanoseconds):
/// a sample every 100 ms, at most 20; the ping run counter stands at 7 while the hang lasts.
@Suite("Hang sampling schedule: decisions at given times")
struct HangSamplingScheduleTests {
    static let ms: UInt64 = 1_000_000

    /// Samples a hang that began at `began` and never ends, waking exactly when told, each
    /// sample taking `cost` ms; returns the request times (ms).
    static func run(_ schedule: inout HangSamplingSchedule, began: UInt64, cost: UInt64 = 1,
                    until end: UInt64 = 10_000) -> [UInt64] {
        var times: [UInt64] = []
        var now = began * ms
        var action = schedule.began(at: now, pingRuns: 7)
        while now <= end * ms {
            switch action {
            case .park:
                return times
            case .sleep(let until):
                #expect(until > now, "never asked to sleep into the past")
                now = until
                action = schedule.tick(now: now, pingRuns: 7)
            case .sample:
                times.append(now / ms)
                now += cost * ms
                action = schedule.sampled(now: now, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: true).next
            }
        }
        return times
    }

    @Test("A long hang: a sample at once, then every 100 ms, 20 in all, then park")
    func longHang() {
        var schedule = HangSamplingSchedule()
        let times = Self.run(&schedule, began: 300)
        #expect(times == (0..<20).map { 300 + $0 * 100 })
        #expect(schedule.kept == 20 && schedule.dropped == 0 && schedule.failed == 0)
        #expect(!schedule.isSampling)
        #expect(schedule.tick(now: 5_000 * Self.ms, pingRuns: 7) == .park)
    }

    @Test("The interval and the bound are configurable", arguments: [(10, 5), (50, 1), (250, 3), (100, 50)] as [(UInt64, Int)])
    func configured(interval: UInt64, maximum: Int) {
        var schedule = HangSamplingSchedule(interval: interval * Self.ms, maximumSamples: maximum)
        let times = Self.run(&schedule, began: 1_000, until: 100_000)
        #expect(times == (0..<UInt64(maximum)).map { 1_000 + $0 * interval })
    }

    @Test("Samples keep their due times when each takes a while; one later than its interval pushes the next one interval after it")
    func lateSamples() {
        var schedule = HangSamplingSchedule()
        // 30 ms per sample: still on the 100 ms grid.
        #expect(Self.run(&schedule, began: 0, cost: 30).prefix(4) == [0, 100, 200, 300])
        // 130 ms per sample: each finishes after the next was due; the next comes 100 ms
        // after that finish, never two at once.
        var slow = HangSamplingSchedule(maximumSamples: 4)
        #expect(Self.run(&slow, began: 0, cost: 130) == [0, 230, 460, 690])
    }

    @Test("A wakeup before the due time sleeps again until it")
    func earlyWakeup() {
        var schedule = HangSamplingSchedule()
        #expect(schedule.began(at: 0, pingRuns: 7) == .sample)
        #expect(schedule.sampled(now: Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: true) == (true, .sleep(until: 100 * Self.ms)))
        #expect(schedule.tick(now: 40 * Self.ms, pingRuns: 7) == .sleep(until: 100 * Self.ms))
        #expect(schedule.tick(now: 100 * Self.ms, pingRuns: 7) == .sample)
    }

    @Test("The ping ran while the stack was taken: the sample is dropped and sampling stops")
    func counterMovedDuringSample() {
        var schedule = HangSamplingSchedule()
        _ = schedule.began(at: 0, pingRuns: 7)
        _ = schedule.sampled(now: Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: true)
        #expect(schedule.tick(now: 100 * Self.ms, pingRuns: 7) == .sample)
        let verdict = schedule.sampled(now: 101 * Self.ms, pingRunsBefore: 7, pingRunsAfter: 8, succeeded: true)
        #expect(verdict == (false, .park))
        #expect(schedule.kept == 1 && schedule.dropped == 1 && !schedule.isSampling)
        #expect(schedule.tick(now: 200 * Self.ms, pingRuns: 8) == .park)
    }

    @Test("The ping ran between the tick and the request: the sample is dropped")
    func counterMovedBeforeSample() {
        var schedule = HangSamplingSchedule()
        _ = schedule.began(at: 0, pingRuns: 7)
        let verdict = schedule.sampled(now: Self.ms, pingRunsBefore: 8, pingRunsAfter: 8, succeeded: true)
        #expect(verdict == (false, .park))
        #expect(schedule.kept == 0 && schedule.dropped == 1)
    }

    @Test("The ping ran while the sampler slept: the next tick parks without sampling")
    func counterMovedWhileAsleep() {
        var schedule = HangSamplingSchedule()
        _ = schedule.began(at: 0, pingRuns: 7)
        _ = schedule.sampled(now: Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: true)
        #expect(schedule.tick(now: 100 * Self.ms, pingRuns: 9) == .park)
        #expect(schedule.kept == 1 && schedule.dropped == 0 && !schedule.isSampling)
    }

    @Test("A counter that wrapped around to another value is still a move")
    func counterWrapped() {
        var schedule = HangSamplingSchedule()
        _ = schedule.began(at: 0, pingRuns: .max)
        #expect(schedule.sampled(now: Self.ms, pingRunsBefore: .max, pingRunsAfter: 0, succeeded: true) == (false, .park))
    }

    @Test("Failed requests count towards the bound but keep nothing")
    func failures() {
        var schedule = HangSamplingSchedule(maximumSamples: 3)
        _ = schedule.began(at: 0, pingRuns: 7)
        #expect(schedule.sampled(now: Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: false) == (false, .sleep(until: 100 * Self.ms)))
        _ = schedule.tick(now: 100 * Self.ms, pingRuns: 7)
        #expect(schedule.sampled(now: 101 * Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: true) == (true, .sleep(until: 200 * Self.ms)))
        _ = schedule.tick(now: 200 * Self.ms, pingRuns: 7)
        #expect(schedule.sampled(now: 201 * Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: false) == (false, .park))
        #expect(schedule.kept == 1 && schedule.failed == 2 && schedule.dropped == 0)
    }

    @Test("The hang's end stops sampling; a sample finishing after it is dropped")
    func ended() {
        var schedule = HangSamplingSchedule()
        _ = schedule.began(at: 0, pingRuns: 7)
        #expect(schedule.ended() == .park)
        #expect(schedule.tick(now: 100 * Self.ms, pingRuns: 7) == .park)
        #expect(schedule.sampled(now: Self.ms, pingRunsBefore: 7, pingRunsAfter: 7, succeeded: true) == (false, .park))
        #expect(schedule.kept == 0 && schedule.dropped == 1)
    }

    @Test("Without a hang, nothing is sampled")
    func idle() {
        var schedule = HangSamplingSchedule()
        #expect(schedule.tick(now: 0, pingRuns: 0) == .park)
        #expect(schedule.ended() == .park)
        #expect(!schedule.isSampling)
    }

    @Test("A new hang starts afresh: counts reset, the new counter value, a sample at once")
    func nextHang() {
        var schedule = HangSamplingSchedule(maximumSamples: 2)
        #expect(Self.run(&schedule, began: 0) == [0, 100])
        _ = schedule.ended()
        #expect(schedule.began(at: 5_000 * Self.ms, pingRuns: 12) == .sample)
        #expect(schedule.kept == 0)
        #expect(schedule.sampled(now: 5_001 * Self.ms, pingRunsBefore: 12, pingRunsAfter: 12, succeeded: true) == (true, .sleep(until: 5_100 * Self.ms)))
        // The old value no longer counts as "still hanging".
        #expect(schedule.tick(now: 5_100 * Self.ms, pingRuns: 7) == .park)
    }

    @Test("Every stop of the counter, swept: a sample is kept exactly when the counter stood still before and after it",
          arguments: 0..<4, 0..<4)
    func sweep(moveBefore: Int, moveAfter: Int) {
        var schedule = HangSamplingSchedule()
        let base: UInt64 = 100
        _ = schedule.began(at: 0, pingRuns: base)
        let before = base + UInt64(moveBefore)
        let after = before + UInt64(moveAfter)
        let (keep, next) = schedule.sampled(now: Self.ms, pingRunsBefore: before, pingRunsAfter: after, succeeded: true)
        let still = moveBefore == 0 && moveAfter == 0
        #expect(keep == still)
        #expect(next == (still ? .sleep(until: 100 * Self.ms) : .park))
    }
}
