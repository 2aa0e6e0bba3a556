/// The hang watchdog's decisions beside ``HangDetector``'s, as a value: what to do with a hang
/// the detector reported while it lasts. Given the times of the checks, the ping's wait and
/// the stack sampler's counts, it says when to publish or withdraw a busy span, when to start
/// and end stack sampling, when to report a hang's progress, and it keeps the sampling
/// counts. It has no threads, queues, clocks or sampler; ``HangWatchdog`` runs it on its own
/// thread and carries out what it returns, and tests drive it with made-up times.
///
/// One check of the watchdog's thread, in order:
/// 1. ``HangDetector/check(now:pingRanAt:)`` gives the hang events and the ping's wait;
/// 2. ``check(now:waitingSince:pingRan:samples:)`` gives the busy span to publish or withdraw;
/// 3. for each event, ``hangBegan(_:at:canSample:)`` or ``hangEnded()`` gives what to do with
///    the sampler (and, after an ended hang's samples are collected, ``collected(isIdle:)``);
/// 4. while the ping still waits, ``progress(now:samples:)`` gives the hang so far to report.
///
/// All times are nanoseconds of one monotonic clock.
struct HangWatchdogPolicy: Sendable {
    /// What to do with the busy spans after a check.
    enum BusySpanAction: Sendable, Equatable {
        /// Nothing.
        case none
        /// Publish this span: the ping has waited at least the busy threshold.
        case publish(BusySpan)
        /// Withdraw the span of the wait that began at `start` (ns): every sample of the hang
        /// so far found the thread parked in its run loop's wait.
        case withdraw(start: UInt64)
    }

    /// What to do with the stack sampler when a hang begins or ends.
    enum SamplerAction: Sendable, Equatable {
        /// Nothing.
        case none
        /// Start sampling the watched thread, from the hang's start.
        case start
        /// End the sampling and attach its stack and idle verdict to the ended hang; then
        /// call ``collected(isIdle:)`` with the verdict, when samples came back.
        case collect
    }

    /// A progress report to make: the hang so far, and whether to attach the samples so far.
    struct Progress: Sendable, Equatable {
        /// The hang from its start to the check (seconds), without a stack.
        var hang: Hang
        /// Whether samples were kept: attach the sampler's snapshot.
        var withSamples: Bool
    }

    /// The hang reported as begun and not yet ended.
    struct HangUnderWay: Sendable, Equatable {
        /// When it began (ns).
        var start: UInt64
        /// Whether its stack is being sampled.
        var isSampled: Bool
        /// The samples it had at the last progress report (or 0 at its beginning).
        var reportedSamples: Int
        /// When progress was last reported, or when it began (ns).
        var reportedAt: UInt64
    }

    /// When a ping's wait is a busy span.
    let busySpans: BusySpanRule
    /// Whether the watchdog samples stacks (it was given a sampler): only then are hangs
    /// counted as sampled or unsampled.
    let samplesStacks: Bool
    /// Whether the watchdog reports progress (it was given a progress handler).
    let reportsProgress: Bool
    /// The longest time between two progress reports while a hang lasts (ns).
    let progressInterval: UInt64

    /// The hang under way, if one was reported as begun and has not ended.
    private(set) var underWay: HangUnderWay?
    /// The ping wait (its start, ns) that the samples of the hang under way found idle so far,
    /// or 0 for none (no reading of the monotonic clock is 0): neither the checks nor the
    /// ping publish a busy span for it.
    private(set) var idleWaitSince: UInt64 = 0
    /// Hangs whose stack was sampled.
    private(set) var sampledHangs = 0
    /// Hangs not sampled although the watchdog samples stacks (the ping last ran on a thread
    /// that cannot be sampled, or had not run yet).
    private(set) var unsampledHangs = 0
    /// Sampled hangs whose every sample found the thread parked in its run loop's wait.
    private(set) var idleHangs = 0

    /// A policy with the busy-span rule `busySpans`, for a watchdog that samples stacks or
    /// not and reports progress or not, at least every `progressInterval` ns.
    init(busySpans: BusySpanRule, samplesStacks: Bool, reportsProgress: Bool, progressInterval: UInt64) {
        self.busySpans = busySpans
        self.samplesStacks = samplesStacks
        self.reportsProgress = reportsProgress
        self.progressInterval = progressInterval
    }

    /// Whether the hang under way is being sampled: only then does a check need the
    /// sampler's counts.
    var isSampling: Bool {
        underWay?.isSampled == true
    }

    /// A check at `now` after the detector's: `waitingSince` is the detector's
    /// ``HangDetector/pingWaitingSince`` after the check, `pingRan` whether the check found
    /// the ping run, `samples` the sampler's counts for the hang under way (read only when
    /// ``isSampling``; nil otherwise).
    ///
    /// While a sampled hang's ping still waits, a wait whose every sample so far is idle is
    /// marked (``idleWaitSince``) and its span withdrawn; once a sample shows the thread at
    /// work, the mark goes. A ping still waiting at least the busy threshold, in a wait not
    /// marked idle, is a busy span up to `now`.
    mutating func check(now: UInt64, waitingSince: UInt64?, pingRan: Bool,
                        samples: StackSampler.Statistics?) -> BusySpanAction {
        guard let since = waitingSince, !pingRan else { return .none }
        if isSampling, let samples {
            let idle = samples.kept > 0 && samples.idle == samples.kept
            let marked = idleWaitSince == since
            if idle && !marked {
                idleWaitSince = since
                return .withdraw(start: since)
            } else if !idle && marked {
                idleWaitSince = 0
            }
        }
        return busySpans.atCheck(now: now, waitingSince: since, idleWaitSince: idleWaitSince).map { .publish($0) }
            ?? .none
    }

    /// The detector reported `hang` as begun at `now`; `canSample` is whether the thread the
    /// ping last ran on can be sampled. Returns ``SamplerAction/start`` when the watchdog
    /// samples stacks and the thread can be sampled.
    mutating func hangBegan(_ hang: Hang, at now: UInt64, canSample: Bool) -> SamplerAction {
        let sampled = samplesStacks && canSample
        if samplesStacks {
            if canSample { sampledHangs += 1 } else { unsampledHangs += 1 }
        }
        underWay = HangUnderWay(start: hang.start, isSampled: sampled, reportedSamples: 0, reportedAt: now)
        return sampled ? .start : .none
    }

    /// The detector reported the hang under way as ended. Returns ``SamplerAction/collect``
    /// when it was being sampled.
    mutating func hangEnded() -> SamplerAction {
        defer { underWay = nil }
        return isSampling ? .collect : .none
    }

    /// The samples of the hang that just ended came back, all idle or not: counts it in
    /// ``idleHangs`` when idle.
    mutating func collected(isIdle: Bool) {
        if isIdle { idleHangs += 1 }
    }

    /// A check at `now` that found the ping still waiting, with `samples` kept so far for the
    /// hang under way (read only when ``isSampling``; nil otherwise). Returns the progress to
    /// report: when the watchdog reports progress, a hang is under way, and a new sample came
    /// or ``progressInterval`` passed since the last report (or the hang's beginning).
    mutating func progress(now: UInt64, samples: Int?) -> Progress? {
        guard reportsProgress, let hang = underWay else { return nil }
        let samples = hang.isSampled ? samples ?? 0 : 0
        guard samples != hang.reportedSamples || now.minus(hang.reportedAt) >= progressInterval else { return nil }
        underWay?.reportedSamples = samples
        underWay?.reportedAt = now
        return Progress(hang: Hang(start: hang.start, duration: seconds(now.minus(hang.start))), withSamples: samples > 0)
    }
}

/// When a wait of the watched queue's ping is a busy span (``BusySpan``), as a value: one
/// rule for the watchdog's checks and one for the ping itself, which applies it on the
/// watched queue (a few comparisons: no allocation, no lock).
///
/// All times are nanoseconds of one monotonic clock; 0 stands for "none" where noted.
struct BusySpanRule: Sendable, Equatable {
    /// A ping that waits this long marks the queue as busy (ns).
    let threshold: UInt64
    /// The longest time from the latest check to a ping's run for the wait to count: the check
    /// interval plus the suspension tolerance (ns). Beyond it the watchdog itself was not
    /// running (a stopped process), and the wait means nothing.
    let checkGapTolerance: UInt64

    /// A rule: `threshold` and `checkGapTolerance` in nanoseconds.
    init(threshold: UInt64, checkGapTolerance: UInt64) {
        self.threshold = threshold
        self.checkGapTolerance = checkGapTolerance
    }

    /// At a check at `now` that found the ping still waiting since `waitingSince`: the span so
    /// far, when the wait reached the threshold and is not the wait marked idle
    /// (`idleWaitSince`).
    func atCheck(now: UInt64, waitingSince: UInt64, idleWaitSince: UInt64) -> BusySpan? {
        guard now.minus(waitingSince) >= threshold, waitingSince != idleWaitSince else { return nil }
        return BusySpan(start: waitingSince, end: now)
    }

    /// When the ping runs at `now`, having waited since `waitingSince` (0: the watchdog
    /// measures nothing, paused or stopped): its whole wait, when it reached the threshold, is
    /// not the wait marked idle (`idleWaitSince`), and the latest check (`lastCheckAt`) was at
    /// most ``checkGapTolerance`` before (otherwise the process was stopped meanwhile).
    func atPingRun(now: UInt64, waitingSince: UInt64, idleWaitSince: UInt64, lastCheckAt: UInt64) -> BusySpan? {
        guard waitingSince != 0, now.minus(waitingSince) >= threshold, waitingSince != idleWaitSince,
              now.minus(lastCheckAt) <= checkGapTolerance else { return nil }
        return BusySpan(start: waitingSince, end: now)
    }
}
