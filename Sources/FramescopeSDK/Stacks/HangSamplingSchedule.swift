/// When to sample a hanging thread's stack, and which samples to keep, as a value: given the
/// hang's beginning and end, the sampler's wakeups and the *ping run counter* (a number the
/// watched queue's ping bumps each time it runs), it says when to take a sample and whether a
/// sample just taken belongs to the hang. It has no threads or clocks; ``StackSampler`` runs
/// it on its own thread, and tests drive it with made-up times.
///
/// - The first sample is taken as soon as the hang is reported (`began`), then one every
///   ``interval`` (due times `began + k × interval`; after a late sample, the next one is due
///   one interval after it, never two at once), at most ``maximumSamples`` requests.
/// - The watched thread is hanging only while the ping waits: once the counter differs from
///   its value at `began`, the hang is over. A sample is kept only if the counter had that
///   value both right before the sample was requested and right after it was taken, so a
///   stack taken after the hang ended is never kept; after such a sample, sampling stops.
///
/// All times are nanoseconds of one monotonic clock.
struct HangSamplingSchedule: Sendable {
    /// What the sampler's thread must do next.
    enum Action: Sendable, Equatable {
        /// Take a sample now (read the counter first, then again after it).
        case sample
        /// Sleep until this time (ns), unless woken by the hang's end.
        case sleep(until: UInt64)
        /// Nothing to do until the next hang begins.
        case park
    }

    /// The time between samples, in nanoseconds (default 0.1 s).
    let interval: UInt64
    /// The most samples kept per hang (default 20).
    let maximumSamples: Int

    /// The counter's value when the hang under way began; `nil` while no hang is sampled
    /// (none began, it ended, or sampling stopped).
    private(set) var pingRunsAtBegan: UInt64?
    /// When the next sample is due (ns), while a hang is sampled.
    private(set) var nextDue: UInt64 = 0
    /// Samples kept for the hang under way (or the last one).
    private(set) var kept = 0
    /// Stacks taken for the hang under way (or the last one) and dropped because the counter
    /// moved.
    private(set) var dropped = 0
    /// Requests for the hang under way (or the last one) that brought no stack back.
    private(set) var failed = 0

    /// A schedule sampling every `interval` ns, at most `maximumSamples` times per hang.
    init(interval: UInt64 = 100_000_000, maximumSamples: Int = 20) {
        precondition(interval > 0, "HangSamplingSchedule: the interval must be positive")
        precondition(maximumSamples > 0, "HangSamplingSchedule: at least one sample per hang")
        self.interval = interval
        self.maximumSamples = maximumSamples
    }

    /// A hang was reported at `now`, with the ping run counter at `pingRuns`. A hang still
    /// being sampled is forgotten: the new one starts from no samples.
    mutating func began(at now: UInt64, pingRuns: UInt64) -> Action {
        pingRunsAtBegan = pingRuns
        nextDue = now
        kept = 0
        dropped = 0
        failed = 0
        return .sample
    }

    /// The sampler woke at `now` with the counter at `pingRuns`.
    mutating func tick(now: UInt64, pingRuns: UInt64) -> Action {
        guard let atBegan = pingRunsAtBegan else { return .park }
        guard pingRuns == atBegan else {
            pingRunsAtBegan = nil  // the ping ran: the hang is over
            return .park
        }
        return now >= nextDue ? .sample : .sleep(until: nextDue)
    }

    /// A sample was requested with the counter at `pingRunsBefore` and finished at `now`
    /// with the counter at `pingRunsAfter`; `succeeded` is whether a stack came back (a
    /// thread that did not answer in time gives none). Returns whether to keep it, and what to
    /// do next. Every request counts towards ``maximumSamples``, failed ones too, so a hang
    /// never sends the thread more than that many signals.
    mutating func sampled(now: UInt64, pingRunsBefore: UInt64, pingRunsAfter: UInt64,
                          succeeded: Bool) -> (keep: Bool, next: Action) {
        guard let atBegan = pingRunsAtBegan else {
            if succeeded { dropped += 1 }
            return (false, .park)
        }
        guard pingRunsBefore == atBegan, pingRunsAfter == atBegan else {
            // The ping ran before or while the stack was taken: the stack may show the
            // thread after the hang, doing something else.
            if succeeded { dropped += 1 }
            pingRunsAtBegan = nil
            return (false, .park)
        }
        if succeeded { kept += 1 } else { failed += 1 }
        guard kept + failed < maximumSamples else {
            pingRunsAtBegan = nil
            return (succeeded, .park)
        }
        let due = nextDue + interval
        nextDue = due > now ? due : now + interval
        return (succeeded, .sleep(until: nextDue))
    }

    /// The hang ended (the watchdog saw the ping run, or it paused or stopped): no more
    /// samples for it.
    mutating func ended() -> Action {
        pingRunsAtBegan = nil
        return .park
    }

    /// Whether a hang is being sampled.
    var isSampling: Bool { pingRunsAtBegan != nil }
}
