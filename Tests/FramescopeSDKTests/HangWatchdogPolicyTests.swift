import FramescopeCore
import Testing
@testable import FramescopeSDK

/// The watchdog's decisions beside the detector's, with made-up times (milliseconds, written
/// as nanoseconds): busy threshold 34 ms, checks every 10 ms with a suspension tolerance of
/// 100 ms (so a ping's run counts up to 110 ms after the latest check), progress at least
/// every 500 ms. No threads, no sleeps.
@Suite("Hang watchdog policy: decisions at given times")
struct HangWatchdogPolicyTests {
    static let ms: UInt64 = 1_000_000
    static let rule = BusySpanRule(threshold: 34 * ms, checkGapTolerance: 110 * ms)

    static func makePolicy(samplesStacks: Bool = true, reportsProgress: Bool = true) -> HangWatchdogPolicy {
        HangWatchdogPolicy(busySpans: rule, samplesStacks: samplesStacks, reportsProgress: reportsProgress,
                           progressInterval: 500 * ms)
    }

    /// The sampler's counts for a hang: `kept` samples, `idle` of them idle.
    static func samples(kept: Int, idle: Int) -> StackSampler.Statistics {
        StackSampler.Statistics(kept: kept, idle: idle)
    }

    static func span(_ start: UInt64, _ end: UInt64) -> BusySpan {
        BusySpan(start: start * ms, end: end * ms)
    }

    // MARK: Busy spans

    @Test("At a check, a ping still waiting is busy from the busy threshold on, unless its wait was found idle")
    func busySpanAtCheck() {
        let rule = Self.rule
        #expect(rule.atCheck(now: 133 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0) == nil)
        #expect(rule.atCheck(now: 134 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0) == Self.span(100, 134))
        #expect(rule.atCheck(now: 400 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0) == Self.span(100, 400))
        #expect(rule.atCheck(now: 400 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 100 * Self.ms) == nil)
        // Another wait marked idle does not hide this one.
        #expect(rule.atCheck(now: 400 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 50 * Self.ms) == Self.span(100, 400))
    }

    @Test("Blocks of 12 ms between checks are no busy span, at a check or when the ping runs")
    func shortWaitsAreNoSpan() {
        // The decision behind the real-queue test "A block shorter than the busy threshold
        // makes no span": five 12 ms blocks 20 ms apart, each delaying one ping by 12 ms.
        var policy = Self.makePolicy()
        for block in UInt64(0)..<5 {
            let posted = 50 + block * 32
            let ranAt = posted + 12
            #expect(Self.rule.atPingRun(now: ranAt * Self.ms, waitingSince: posted * Self.ms, idleWaitSince: 0,
                                        lastCheckAt: posted * Self.ms) == nil)
            #expect(policy.check(now: (posted + 10) * Self.ms, waitingSince: posted * Self.ms, pingRan: false,
                                 samples: nil) == .none)
            #expect(policy.check(now: (posted + 20) * Self.ms, waitingSince: (posted + 20) * Self.ms, pingRan: true,
                                 samples: nil) == .none)
        }
    }

    @Test("When the ping runs, its wait is busy if it reached the threshold and the watchdog kept checking meanwhile")
    func busySpanAtPingRun() {
        let rule = Self.rule
        // Waited 50 ms, the latest check 5 ms before: a busy span of the whole wait.
        #expect(rule.atPingRun(now: 150 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0,
                               lastCheckAt: 145 * Self.ms) == Self.span(100, 150))
        // Waited 33 ms: too short.
        #expect(rule.atPingRun(now: 133 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0,
                               lastCheckAt: 130 * Self.ms) == nil)
        // Nothing measured (paused or stopped: the wait is published as 0).
        #expect(rule.atPingRun(now: 150 * Self.ms, waitingSince: 0, idleWaitSince: 0, lastCheckAt: 145 * Self.ms) == nil)
        // The wait its samples found idle.
        #expect(rule.atPingRun(now: 150 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 100 * Self.ms,
                               lastCheckAt: 145 * Self.ms) == nil)
        // A latest check exactly the tolerance (110 ms) before still counts; 111 ms does not.
        #expect(rule.atPingRun(now: 250 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0,
                               lastCheckAt: 140 * Self.ms) == Self.span(100, 250))
        #expect(rule.atPingRun(now: 251 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0,
                               lastCheckAt: 140 * Self.ms) == nil)
    }

    @Test("A stopped process (the clock jumps 2 s while a ping waits behind a 20 ms block) is no busy span when the ping runs")
    func stoppedProcessIsNoSpan() {
        // The decision behind the real-queue test of the same name: posted at 100, checked at
        // 100, the process stops at 116 for 2 s, the ping runs at 2120 before any check.
        #expect(Self.rule.atPingRun(now: 2120 * Self.ms, waitingSince: 100 * Self.ms, idleWaitSince: 0,
                                    lastCheckAt: 100 * Self.ms) == nil)
        // The late check then restarts the wait (the detector's part) and makes no span either.
        var policy = Self.makePolicy()
        #expect(policy.check(now: 2125 * Self.ms, waitingSince: 2125 * Self.ms, pingRan: true, samples: nil) == .none)
    }

    @Test("A check publishes the wait so far only while the ping still waits")
    func checkPublishes() {
        var policy = Self.makePolicy()
        #expect(policy.check(now: 120 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false, samples: nil) == .none)
        #expect(policy.check(now: 140 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false, samples: nil)
                == .publish(Self.span(100, 140)))
        // The ping ran (the detector posted a new one at `now`): the ping published its own span.
        #expect(policy.check(now: 150 * Self.ms, waitingSince: 150 * Self.ms, pingRan: true, samples: nil) == .none)
        // Paused or stopped: no wait.
        #expect(policy.check(now: 160 * Self.ms, waitingSince: nil, pingRan: false, samples: nil) == .none)
    }

    // MARK: Idle withdrawal

    @Test("A sampled hang whose every sample is idle withdraws its wait's span once; a busy sample brings it back")
    func idleWithdrawal() {
        var policy = Self.makePolicy()
        #expect(policy.hangBegan(Hang(start: 100 * Self.ms, duration: 0.25), at: 350 * Self.ms, canSample: true) == .start)
        // No sample yet: not idle, so the wait is busy.
        #expect(policy.check(now: 360 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false,
                             samples: Self.samples(kept: 0, idle: 0)) == .publish(Self.span(100, 360)))
        // Two samples, both idle: withdraw, once, and publish nothing while it stays idle.
        #expect(policy.check(now: 370 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false,
                             samples: Self.samples(kept: 2, idle: 2)) == .withdraw(start: 100 * Self.ms))
        #expect(policy.idleWaitSince == 100 * Self.ms)
        #expect(policy.check(now: 380 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false,
                             samples: Self.samples(kept: 3, idle: 3)) == .none)
        // A sample at work: the mark goes and the span is published again.
        #expect(policy.check(now: 390 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false,
                             samples: Self.samples(kept: 4, idle: 3)) == .publish(Self.span(100, 390)))
        #expect(policy.idleWaitSince == 0)
    }

    @Test("The idle mark names the wait: a later wait is not hidden by it")
    func idleMarkNamesTheWait() {
        var policy = Self.makePolicy()
        _ = policy.hangBegan(Hang(start: 100 * Self.ms, duration: 0.25), at: 350 * Self.ms, canSample: true)
        #expect(policy.check(now: 360 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false,
                             samples: Self.samples(kept: 1, idle: 1)) == .withdraw(start: 100 * Self.ms))
        #expect(policy.idleWaitSince == 100 * Self.ms)
        #expect(policy.hangEnded() == .collect)
        // The next ping, posted at 400, waits 50 ms: busy, although the last wait was idle.
        #expect(policy.check(now: 450 * Self.ms, waitingSince: 400 * Self.ms, pingRan: false, samples: nil)
                == .publish(Self.span(400, 450)))
        #expect(Self.rule.atPingRun(now: 460 * Self.ms, waitingSince: 400 * Self.ms, idleWaitSince: policy.idleWaitSince,
                                    lastCheckAt: 450 * Self.ms) == Self.span(400, 460))
    }

    @Test("Samples are not judged for a hang that is not sampled")
    func unsampledHangIsNotJudged() {
        var policy = Self.makePolicy()
        #expect(policy.hangBegan(Hang(start: 100 * Self.ms, duration: 0.25), at: 350 * Self.ms, canSample: false) == .none)
        #expect(!policy.isSampling)
        #expect(policy.check(now: 360 * Self.ms, waitingSince: 100 * Self.ms, pingRan: false,
                             samples: Self.samples(kept: 2, idle: 2)) == .publish(Self.span(100, 360)))
        #expect(policy.idleWaitSince == 0)
    }

    // MARK: Sampling start and stop, and the counts

    @Test("A hang on a thread that can be sampled starts the sampler; its end collects the samples; idle ones are counted")
    func samplingStartAndStop() {
        var policy = Self.makePolicy()
        #expect(policy.hangBegan(Hang(start: 0, duration: 0.25), at: 250 * Self.ms, canSample: true) == .start)
        #expect(policy.isSampling)
        #expect(policy.hangEnded() == .collect)
        #expect(!policy.isSampling && policy.underWay == nil)
        policy.collected(isIdle: true)
        #expect(policy.hangBegan(Hang(start: 1000 * Self.ms, duration: 0.25), at: 1250 * Self.ms, canSample: true) == .start)
        #expect(policy.hangEnded() == .collect)
        policy.collected(isIdle: false)
        #expect(policy.sampledHangs == 2 && policy.unsampledHangs == 0 && policy.idleHangs == 1)
    }

    @Test("A hang on a thread that cannot be sampled is counted unsampled, and its end collects nothing")
    func unsampledHang() {
        var policy = Self.makePolicy()
        #expect(policy.hangBegan(Hang(start: 0, duration: 0.25), at: 250 * Self.ms, canSample: false) == .none)
        #expect(policy.hangEnded() == .none)
        #expect(policy.sampledHangs == 0 && policy.unsampledHangs == 1 && policy.idleHangs == 0)
    }

    @Test("A watchdog that samples no stacks neither samples nor counts")
    func noStackSampling() {
        var policy = Self.makePolicy(samplesStacks: false)
        #expect(policy.hangBegan(Hang(start: 0, duration: 0.25), at: 250 * Self.ms, canSample: true) == .none)
        #expect(policy.hangEnded() == .none)
        #expect(policy.sampledHangs == 0 && policy.unsampledHangs == 0)
    }

    // MARK: Progress cadence

    @Test("Without samples, progress is reported every 500 ms from the hang's report, with the hang so far")
    func progressEveryInterval() {
        var policy = Self.makePolicy(samplesStacks: false)
        #expect(policy.progress(now: 300 * Self.ms, samples: nil) == nil)  // no hang under way
        _ = policy.hangBegan(Hang(start: 0, duration: 0.25), at: 250 * Self.ms, canSample: false)
        #expect(policy.progress(now: 260 * Self.ms, samples: nil) == nil)
        #expect(policy.progress(now: 740 * Self.ms, samples: nil) == nil)
        #expect(policy.progress(now: 750 * Self.ms, samples: nil)
                == HangWatchdogPolicy.Progress(hang: Hang(start: 0, duration: 0.75), withSamples: false))
        #expect(policy.progress(now: 1240 * Self.ms, samples: nil) == nil)
        #expect(policy.progress(now: 1260 * Self.ms, samples: nil)
                == HangWatchdogPolicy.Progress(hang: Hang(start: 0, duration: 1.26), withSamples: false))
        _ = policy.hangEnded()
        #expect(policy.progress(now: 5000 * Self.ms, samples: nil) == nil)
    }

    @Test("A new sample is reported at the next check, with the samples; the same count waits for the interval")
    func progressOnNewSample() {
        var policy = Self.makePolicy()
        _ = policy.hangBegan(Hang(start: 100 * Self.ms, duration: 0.25), at: 350 * Self.ms, canSample: true)
        #expect(policy.progress(now: 360 * Self.ms, samples: 0) == nil)
        #expect(policy.progress(now: 370 * Self.ms, samples: 1)
                == HangWatchdogPolicy.Progress(hang: Hang(start: 100 * Self.ms, duration: 0.27), withSamples: true))
        #expect(policy.progress(now: 380 * Self.ms, samples: 1) == nil)
        #expect(policy.progress(now: 390 * Self.ms, samples: 2)?.withSamples == true)
        // Sampling finished at 2 samples: the next report comes 500 ms after the last.
        #expect(policy.progress(now: 880 * Self.ms, samples: 2) == nil)
        #expect(policy.progress(now: 890 * Self.ms, samples: 2)
                == HangWatchdogPolicy.Progress(hang: Hang(start: 100 * Self.ms, duration: 0.79), withSamples: true))
    }

    @Test("Counts given for a hang that is not sampled are ignored; without a progress handler nothing is reported")
    func progressIgnoresSamplesOfUnsampledHang() {
        var policy = Self.makePolicy()
        _ = policy.hangBegan(Hang(start: 0, duration: 0.25), at: 250 * Self.ms, canSample: false)
        #expect(policy.progress(now: 260 * Self.ms, samples: 3) == nil)
        var silent = Self.makePolicy(reportsProgress: false)
        _ = silent.hangBegan(Hang(start: 0, duration: 0.25), at: 250 * Self.ms, canSample: true)
        #expect(silent.progress(now: 260 * Self.ms, samples: 3) == nil)
        #expect(silent.progress(now: 5000 * Self.ms, samples: 3) == nil)
    }

    // MARK: The path of one hang

    @Test("One idle, sampled hang through the detector and the policy as the watchdog's thread runs them")
    func pathOfOneHang() {
        // Threshold 250 ms, checks every 10 ms, started at 1000 ms. The ping posted then waits
        // until 1400; samples come at 1260, 1280, 1300 (all idle), then the sampler stops at three.
        let base: UInt64 = 1000
        var shell = ShellRecording(detector: HangDetectorTests.makeDetector(), policy: Self.makePolicy())
        shell.start(now: base * Self.ms)
        for t in stride(from: base + 10, through: base + 390, by: 10) {
            let kept = t >= base + 300 ? 3 : t >= base + 280 ? 2 : t >= base + 260 ? 1 : 0
            shell.check(now: t * Self.ms, pingRanAt: nil, samples: Self.samples(kept: kept, idle: kept))
        }
        shell.check(now: (base + 410) * Self.ms, pingRanAt: (base + 400) * Self.ms, samples: Self.samples(kept: 3, idle: 3),
                    idle: true)
        // Busy from 34 ms of waiting (the check at 1040) to the check that reports the hang.
        let busy = stride(from: base + 40, through: base + 250, by: 10).map {
            ShellRecording.Step.publish(Self.span(base, $0))
        }
        let expected: [ShellRecording.Step] = [.post] + busy + [
            .began(start: base * Self.ms), .startSampler,
            .withdraw(start: base * Self.ms), .progress(duration: 0.26, withSamples: true),
            .progress(duration: 0.28, withSamples: true),
            .progress(duration: 0.3, withSamples: true),
            .post, .collect, .ended(duration: 0.4, isIdle: true),
        ]
        #expect(shell.steps == expected)
        #expect(shell.policy.sampledHangs == 1 && shell.policy.idleHangs == 1 && shell.detector.hangs == 1)
    }
}

/// The watchdog's thread as plain code, for the policy tests: feeds the detector and the
/// policy in the order `HangWatchdog.Core` does, and records what it would carry out.
struct ShellRecording {
    enum Step: Equatable {
        case post, publish(BusySpan), withdraw(start: UInt64), began(start: UInt64), startSampler, collect
        case ended(duration: Double, isIdle: Bool), progress(duration: Double, withSamples: Bool)
    }

    var detector: HangDetector
    var policy: HangWatchdogPolicy
    var steps: [Step] = []

    mutating func start(now: UInt64) {
        perform(detector.start(now: now), now: now, idle: false)
    }

    /// A check at `now`; `samples` are the sampler's counts (given to the policy only while it
    /// samples), `idle` the verdict of the samples collected at an end.
    mutating func check(now: UInt64, pingRanAt: UInt64?, samples: StackSampler.Statistics, idle: Bool = false) {
        let action = detector.check(now: now, pingRanAt: pingRanAt)
        switch policy.check(now: now, waitingSince: detector.pingWaitingSince, pingRan: pingRanAt != nil,
                            samples: policy.isSampling ? samples : nil) {
        case .none: break
        case let .publish(span): steps.append(.publish(span))
        case let .withdraw(start): steps.append(.withdraw(start: start))
        }
        perform(action, now: now, idle: idle)
        if pingRanAt == nil, let report = policy.progress(now: now, samples: policy.isSampling ? samples.kept : nil) {
            steps.append(.progress(duration: report.hang.duration, withSamples: report.withSamples))
        }
    }

    private mutating func perform(_ action: HangDetector.Action, now: UInt64, idle: Bool) {
        if action.postPing { steps.append(.post) }
        for event in action.events {
            switch event {
            case let .began(hang):
                steps.append(.began(start: hang.start))
                if policy.hangBegan(hang, at: now, canSample: true) == .start { steps.append(.startSampler) }
            case let .ended(hang, _):
                if policy.hangEnded() == .collect {
                    steps.append(.collect)
                    policy.collected(isIdle: idle)
                }
                steps.append(.ended(duration: hang.duration, isIdle: idle))
            }
        }
    }
}
