/// The rules of one upload queue as a value: which entry goes next, and what one upload's
/// outcome does to it (delete, keep, retry after a wait, move back, abandon), with the
/// backoff between failures. It has no clocks, files or network; ``Uploader`` runs it and
/// carries out its actions, and tests drive it with made-up outcomes and jitters.
///
/// It has the shape of swift-nio's `NIOAsyncWriter.StateMachine`: one ``State`` enum whose
/// cases carry what that state needs, and one mutating function per event, each returning
/// what the caller must do.
///
/// - **Order**: the oldest entry that has failed fewer than
///   ``Rules/attemptsBeforeMovingBack`` times; when none has, the one with the fewest
///   failures (the oldest of those), so entries moved to the back take turns
///   (``nextIndex(attempts:movingBackAfter:)``).
/// - **Outcomes** (``Outcome``, sorted from the HTTP answer by ``UploadVerdict``):
///   delivered → ``Action/delete(_:)``; refused and the entry's fault (``Rules/refusals``) →
///   ``Action/delete(_:)``; refused but not its fault → ``Action/moveBack(attempts:after:)``
///   without counting toward ``Rules/maximumAttempts``; a wrong configuration →
///   ``Action/keep(after:)``; a failure → ``Action/retry(after:attempts:)``, counted against
///   the entry when it can be its fault, which moves it back at
///   ``Rules/attemptsBeforeMovingBack`` and abandons it at ``Rules/maximumAttempts``.
/// - **Waits**: after the `n`-th failure in a row, `initialRetryDelay × 2^(n − 1)` seconds,
///   capped at `maximumRetryDelay`, times a jitter of 0.5 to 1 the caller draws (so devices
///   that failed together do not retry together); a `Retry-After` instead when the collector
///   gave one. New work ends a wait for work but not a backoff (that would hammer a collector
///   that is down); a flush ends either and starts the backoff over.
struct UploadStateMachine: Sendable {
    /// What one queue's uploads follow; two queues differ only here.
    struct Rules: Sendable, Equatable {
        /// Failed attempts after which an entry moves behind the others.
        var attemptsBeforeMovingBack: Int
        /// Failed attempts after which an entry is deleted (abandoned).
        var maximumAttempts: Int
        /// The wait after the first failure in a row, in seconds.
        var initialRetryDelay: Double
        /// The longest backoff, in seconds.
        var maximumRetryDelay: Double
        /// Which refusals of the collector delete the entry.
        var refusals: RefusalRule

        /// The rules of `configuration`'s retries, with `refusals`.
        init(_ configuration: DeliveryConfiguration, refusals: RefusalRule) {
            attemptsBeforeMovingBack = configuration.attemptsBeforeMovingBack
            maximumAttempts = configuration.maximumAttempts
            initialRetryDelay = configuration.initialRetryDelay
            maximumRetryDelay = configuration.maximumRetryDelay
            self.refusals = refusals
        }
    }

    /// What the uploader is doing.
    enum State: Sendable, Equatable {
        /// About to choose the next entry (at start, after an upload, after a wait).
        case ready
        /// No entry to send: waiting until new work or a flush arrives.
        case waitingForWork
        /// Sending an entry that had failed `attempts` times before.
        case uploading(attempts: Int)
        /// Waiting `seconds` after a failure; only a flush or ``stop()`` ends it sooner.
        case backingOff(seconds: Double)
        /// Stopped; an upload still under way (of an entry that had failed `uploading` times)
        /// is still judged when it ends.
        case stopped(uploading: Int?)
    }

    /// One upload's outcome, as the queue's rules see it.
    enum Outcome: Sendable, Equatable {
        /// The collector stored the entry (or had already).
        case delivered
        /// The collector refused the entry; `blamesEntry`: whether its error says the entry
        /// itself is at fault (``RefusalRule/blamesEntry(code:field:message:)``).
        case refused(blamesEntry: Bool)
        /// The configuration or the path is wrong; `reason` says what to check.
        case misconfigured(reason: String)
        /// The attempt failed and is worth repeating: after `retryAfter` seconds when the
        /// collector said so, else after a backoff. `countsAgainstEntry`: whether the failure
        /// can be the entry's own fault.
        case failed(reason: String, retryAfter: Double?, countsAgainstEntry: Bool)
    }

    /// Why an entry is deleted at once.
    enum Deletion: Sendable, Equatable {
        /// The collector has it.
        case delivered
        /// The collector refused it as its own fault; it can never be accepted.
        case refused
    }

    /// What becomes of the entry just sent; every action but ``delete(_:)`` ends in a wait.
    enum Action: Sendable, Equatable {
        /// Delete it and send the next one at once.
        case delete(Deletion)
        /// Keep it and every other entry (the configuration is wrong: answer the waiting
        /// flushes now, waiting would not help), then wait `after` seconds.
        case keep(after: Double)
        /// Keep it and try again after `after` seconds; when `attempts` is not nil, the
        /// failure counts against it and its count becomes `attempts`.
        case retry(after: Double, attempts: Int?)
        /// Move it behind the entries that have not failed: its count becomes `attempts`
        /// (unchanged when it was already behind). Then wait `after` seconds.
        case moveBack(attempts: Int, after: Double)
        /// Delete it after `attempts` failed attempts, then wait `after` seconds.
        case abandon(attempts: Int, after: Double)

        /// The wait that follows, in seconds; nil for ``delete(_:)``.
        var wait: Double? {
            switch self {
            case .delete: nil
            case let .keep(after), let .retry(after, _), let .moveBack(_, after), let .abandon(_, after): after
            }
        }
    }

    /// What to do with the loop's wait after an event.
    enum WakeAction: Sendable, Equatable {
        /// End the wait: choose the next entry now.
        case resume
        /// Leave it.
        case none
    }

    /// What the loop does next, from ``next(attempts:)``.
    enum NextAction: Sendable, Equatable {
        /// Send the entry at this index of the list given.
        case upload(index: Int)
        /// Nothing to send: answer the waiting flushes (the queue is empty) and wait for work.
        case waitForWork
        /// Stopped: end the loop.
        case stop
    }

    /// The rules followed.
    let rules: Rules
    /// What the uploader is doing.
    private(set) var state: State = .ready
    /// Failures in a row (reset by a delivery, a refusal that deletes, or a flush).
    private(set) var failures = 0
    /// What the collector says is wrong with the configuration, until it takes or judges an
    /// entry again.
    private(set) var configurationError: String?

    /// A machine following `rules`, ready to choose its first entry.
    init(rules: Rules) {
        self.rules = rules
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool {
        if case .stopped = state { return true }
        return false
    }

    /// Chooses the next entry among those queued, given their failed attempts, oldest first.
    mutating func next(attempts: [Int]) -> NextAction {
        switch state {
        case .stopped:
            return .stop
        case .ready, .waitingForWork, .uploading, .backingOff:
            guard let index = Self.nextIndex(attempts: attempts, movingBackAfter: rules.attemptsBeforeMovingBack) else {
                state = .waitingForWork
                return .waitForWork
            }
            state = .uploading(attempts: attempts[index])
            return .upload(index: index)
        }
    }

    /// The entry chosen could not be read (the queue dropped it): choose again.
    mutating func skipped() {
        if case .uploading = state { state = .ready }
    }

    /// The entry sent has its outcome. `jitter` (0.5–1) scales a backoff; the caller draws it
    /// at random, a test gives its own.
    mutating func uploaded(_ outcome: Outcome, jitter: Double) -> Action {
        let attempts: Int
        switch state {
        case let .uploading(count):
            attempts = count
        case let .stopped(count):
            attempts = count ?? 0
            state = .stopped(uploading: nil)
        case .ready, .waitingForWork, .backingOff:
            attempts = 0
        }
        let action = Self.action(for: outcome, attempts: attempts, failures: &failures,
                                 configurationError: &configurationError, rules: rules, jitter: jitter)
        if !isStopped {
            state = action.wait.map { .backingOff(seconds: $0) } ?? .ready
        }
        return action
    }

    /// New work was queued: it ends a wait for work, never a backoff.
    mutating func newWork() -> WakeAction {
        guard state == .waitingForWork else { return .none }
        state = .ready
        return .resume
    }

    /// A flush wants everything sent now: it ends any wait and starts the backoff over.
    mutating func flushRequested() -> WakeAction {
        switch state {
        case .waitingForWork, .backingOff:
            failures = 0
            state = .ready
            return .resume
        case .ready, .uploading, .stopped:
            return .none
        }
    }

    /// The loop's wait ran its time.
    mutating func waitEnded() {
        switch state {
        case .waitingForWork, .backingOff: state = .ready
        case .ready, .uploading, .stopped: break
        }
    }

    /// Stops the loop: any wait ends, and every flush is answered.
    mutating func stop() {
        switch state {
        case let .uploading(attempts): state = .stopped(uploading: attempts)
        case .stopped: break
        case .ready, .waitingForWork, .backingOff: state = .stopped(uploading: nil)
        }
    }

    /// The wait after the `failures`-th failure in a row: `initial × 2^(failures − 1)`,
    /// capped, times `jitter` (clamped to 0.5–1), in seconds.
    static func backoff(afterFailures failures: Int, rules: Rules, jitter: Double) -> Double {
        let exponent = Double(min(max(failures - 1, 0), 30))
        let ceiling = min(rules.maximumRetryDelay, rules.initialRetryDelay * pow2(exponent))
        return ceiling * min(max(jitter.isNaN ? 1 : jitter, 0.5), 1)
    }

    /// The index of the entry to send next, given each entry's failed attempts, oldest
    /// first: the oldest of those that have failed fewer than `attemptsBeforeMovingBack`
    /// times; when none has, the one with the fewest failures (the oldest of those).
    static func nextIndex(attempts: [Int], movingBackAfter attemptsBeforeMovingBack: Int) -> Int? {
        var best: (place: Int, index: Int)?
        for (index, count) in attempts.enumerated() {
            let place = count >= attemptsBeforeMovingBack ? count : 0
            if best.map({ place < $0.place }) ?? true { best = (place, index) }
        }
        return best?.index
    }

    /// The action for `outcome` of an entry that had failed `attempts` times.
    private static func action(for outcome: Outcome, attempts: Int, failures: inout Int, configurationError: inout String?,
                               rules: Rules, jitter: Double) -> Action {
        switch outcome {
        case .delivered, .refused(blamesEntry: true):
            failures = 0
            configurationError = nil
            return .delete(outcome == .delivered ? .delivered : .refused)
        case .refused(blamesEntry: false):
            // The collector judged the entry, so the configuration works; the refusal is the
            // collector's to lift and never counts toward abandoning the entry.
            failures += 1
            configurationError = nil
            return .moveBack(attempts: max(attempts, rules.attemptsBeforeMovingBack),
                             after: backoff(afterFailures: failures, rules: rules, jitter: jitter))
        case let .misconfigured(reason):
            failures += 1
            configurationError = reason
            return .keep(after: backoff(afterFailures: failures, rules: rules, jitter: jitter))
        case let .failed(_, retryAfter, countsAgainstEntry):
            failures += 1
            let wait = retryAfter ?? backoff(afterFailures: failures, rules: rules, jitter: jitter)
            guard countsAgainstEntry else { return .retry(after: wait, attempts: nil) }
            let counted = attempts + 1
            if counted >= rules.maximumAttempts { return .abandon(attempts: counted, after: wait) }
            if counted == rules.attemptsBeforeMovingBack { return .moveBack(attempts: counted, after: wait) }
            return .retry(after: wait, attempts: counted)
        }
    }

    /// 2 to the power `exponent` (0–30), without Foundation.
    private static func pow2(_ exponent: Double) -> Double {
        Double(1 << Int(exponent))
    }
}

/// Which refusals of the collector (400, 413, 422 with its JSON error) delete an entry: the
/// one rule in which the two queues truly differ.
enum RefusalRule: Sendable, Equatable {
    /// Every refusal blames the entry: a batch of visits, which the collector validates field
    /// by field, can never be accepted once refused (the envelope's fields, which every batch
    /// shares, are sorted as a wrong configuration before this).
    case alwaysTheEntrys
    /// Only a refusal saying the bytes are not readable at all (400 `invalid_json` naming
    /// `body`, or no field) blames the entry: a MetricKit payload is what the device
    /// measured, Apple's, and a part the collector names, a limit of its own or a code this
    /// SDK does not know is the collector's to lift. A collector before issue 43 refused a
    /// part nested deeper than 512 (a crash's call-stack tree it never read) as
    /// `invalid_json`, "nested deeper than 512": its limit too, so kept.
    case onlyUnreadableBytes

    /// Whether the collector's error `code` (naming `field`, saying `message`) blames the entry.
    func blamesEntry(code: String, field: String?, message: String) -> Bool {
        switch self {
        case .alwaysTheEntrys:
            true
        case .onlyUnreadableBytes:
            code == "invalid_json" && (field ?? "body") == "body" && !message.contains("nested deeper than")
        }
    }
}
