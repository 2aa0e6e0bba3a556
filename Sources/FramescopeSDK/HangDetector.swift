/// The hang watchdog's decisions as a value: given the times of its checks and of the
/// pings that ran, it says which hangs began and ended and when to post the next ping.
/// It has no threads, queues or clocks; ``HangWatchdog`` runs it on its own thread, and
/// tests drive it with made-up times.
///
/// All times are nanoseconds of one monotonic clock. At most one ping is in flight: a new
/// one is posted only after the last one was seen to run.
struct HangDetector: Sendable {
    /// What the caller must do after a call.
    struct Action: Sendable, Equatable {
        /// Hang events to report, in order (usually none; an empty array allocates nothing).
        var events: [HangEvent] = []
        /// Whether to post the ping to the watched queue now.
        var postPing = false
    }

    /// The detector's lifecycle.
    enum Phase: Sendable, Equatable {
        case idle, running, paused, stopped
    }

    /// No progress for this long is a hang (ns).
    let threshold: UInt64
    /// The time between checks the caller promises (ns).
    let checkInterval: UInt64
    /// A check later than `checkInterval + suspensionTolerance` after the one before means
    /// the watchdog itself was not running (ns).
    let suspensionTolerance: UInt64

    private(set) var phase = Phase.idle
    /// How many checks ran.
    private(set) var checks = 0
    /// How many times a late check restarted the measurement.
    private(set) var suspensions = 0
    /// How many hangs began.
    private(set) var hangs = 0

    /// When the previous check ran.
    private var lastCheck: UInt64 = 0
    /// For the ping in flight: the time its wait is measured from (when it was posted, or
    /// the latest restart).
    private(set) var pingWaitingSince: UInt64?
    /// Whether the wait of the ping in flight has been reported as a hang.
    private var hangUnderWay = false
    /// When the previous ping ran, if it ran since the last start or restart: the queue was
    /// keeping up then, so a hang seen by the ping in flight began between that moment and
    /// the ping's post. It changes only once the ping in flight has run.
    private var lastPingRanAt: UInt64?

    init(threshold: UInt64, checkInterval: UInt64, suspensionTolerance: UInt64) {
        precondition(threshold > 0 && checkInterval > 0 && suspensionTolerance > 0,
                     "HangDetector: threshold, check interval and suspension tolerance must be positive")
        precondition(checkInterval + suspensionTolerance < threshold,
                     "HangDetector: check interval + suspension tolerance must be less than the threshold")
        self.threshold = threshold
        self.checkInterval = checkInterval
        self.suspensionTolerance = suspensionTolerance
    }

    /// Starts monitoring at `now` (from idle or paused; otherwise does nothing). The first
    /// wait is measured from `now`: time before it is never counted.
    mutating func start(now: UInt64) -> Action {
        guard phase == .idle || phase == .paused else { return Action() }
        phase = .running
        lastCheck = now
        lastPingRanAt = nil
        if pingWaitingSince != nil {
            // A ping posted before the pause may still be queued: measure it afresh.
            pingWaitingSince = now
            return Action()
        }
        pingWaitingSince = now
        return Action(postPing: true)
    }

    /// A periodic check at `now`. `pingRanAt` is when the ping in flight ran, if it has run
    /// since the last call.
    mutating func check(now: UInt64, pingRanAt: UInt64?) -> Action {
        guard phase == .running else { return Action() }
        var action = Action(events: observe(now: now, pingRanAt: pingRanAt))
        if pingWaitingSince == nil {
            pingWaitingSince = now
            action.postPing = true
        }
        return action
    }

    /// Stops checking at `now` without ending monitoring. A hang under way ends here
    /// (``HangEnding/paused``); the time until ``start(now:)`` is not counted.
    mutating func pause(now: UInt64, pingRanAt: UInt64?) -> Action {
        guard phase == .running else { return Action() }
        var events = observe(now: now, pingRanAt: pingRanAt)
        if let hang = endHang(at: now, .paused) { events.append(hang) }
        phase = .paused
        return Action(events: events)
    }

    /// Ends monitoring at `now`. A hang under way ends here (``HangEnding/stopped``).
    mutating func stop(now: UInt64, pingRanAt: UInt64?) -> Action {
        var events: [HangEvent] = []
        if phase == .running {
            events = observe(now: now, pingRanAt: pingRanAt)
            if let hang = endHang(at: now, .stopped) { events.append(hang) }
        }
        phase = .stopped
        return Action(events: events)
    }

    /// Updates the state for a look at `now` and returns the events it causes.
    private mutating func observe(now: UInt64, pingRanAt: UInt64?) -> [HangEvent] {
        checks += 1
        let previousCheck = lastCheck
        lastCheck = now

        if now.minus(previousCheck) > checkInterval + suspensionTolerance {
            // The watchdog itself did not run: the process was stopped or suspended (or
            // starved). The queue could not run either, so the gap says nothing about it.
            // A hang under way ends at the last check before the gap; the ping's wait
            // starts again now.
            suspensions += 1
            var events: [HangEvent] = []
            if let hang = endHang(at: previousCheck, .suspended) { events.append(hang) }
            if pingWaitingSince != nil {
                pingWaitingSince = pingRanAt == nil ? now : nil
            }
            lastPingRanAt = nil
            return events
        }

        guard let since = pingWaitingSince else { return [] }

        if let ranAt = pingRanAt {
            let start = hangStart(waitingSince: since)
            pingWaitingSince = nil
            lastPingRanAt = ranAt
            if hangUnderWay {
                hangUnderWay = false
                return [.ended(Hang(start: start, duration: seconds(ranAt.minus(start))), .recovered)]
            }
            if ranAt.minus(since) >= threshold {
                // The ping ran after the threshold but before a check saw it overdue.
                hangs += 1
                let hang = Hang(start: start, duration: seconds(ranAt.minus(start)))
                return [.began(hang), .ended(hang, .recovered)]
            }
            return []
        }

        // A hang is reported only once the ping itself has waited the threshold: the
        // queue is then surely stuck. Its start is the estimate of `hangStart`.
        if !hangUnderWay && now.minus(since) >= threshold {
            hangUnderWay = true
            hangs += 1
            let start = hangStart(waitingSince: since)
            return [.began(Hang(start: start, duration: seconds(now.minus(start))))]
        }
        return []
    }

    /// Ends the hang under way, if there is one, at `end`, and returns its event. The ping
    /// stays in flight; its next wait starts at the next ``start(now:)`` or late check.
    private mutating func endHang(at end: UInt64, _ ending: HangEnding) -> HangEvent? {
        guard hangUnderWay, let since = pingWaitingSince else { return nil }
        hangUnderWay = false
        let start = hangStart(waitingSince: since)
        return .ended(Hang(start: start, duration: seconds(end.minus(start))), ending)
    }

    /// When the hang seen by the ping in flight began: the queue stopped keeping up between
    /// the previous ping's run and this ping's post, at a moment no check can see, so the
    /// middle of that window is taken (off by at most half of it, half a check interval,
    /// either way). After a start or restart, when no earlier run is known, the wait's own
    /// start.
    private func hangStart(waitingSince since: UInt64) -> UInt64 {
        guard let keptUpAt = lastPingRanAt, keptUpAt < since else { return since }
        return since - (since - keptUpAt) / 2
    }
}
