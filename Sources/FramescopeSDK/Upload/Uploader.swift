import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads the entries of one queue on disk to the collector, one at a time, for as long as
/// it runs: the one upload loop of the SDK. The visits' batches (``DeliveryQueue``, an
/// uploader of ``VisitBatchQueue``) and MetricKit's payloads (``MetricKitForwarder``'s, an
/// uploader of ``MetricKitQueue``) are the two queues it serves, each with an uploader of
/// its own, so that one queue's backoff never holds up the other.
///
/// The decisions are the ``UploadStateMachine``'s (which entry next; what an outcome does to
/// the entry; how long to wait). This actor carries them out:
/// - **Sending**: it asks the queue for the entry's body and request, sends it
///   (``UploadVerdict/send(_:body:via:what:answer:)``), sorts the answer with the queue's
///   ``RefusalRule``, and has the queue delete, keep, count or abandon the entry.
/// - **Waiting**: for work, or after a failure, as a sleep on the injected ``clock``,
///   cancelled as soon as it is no longer needed, so tests step a manual clock instead of
///   sleeping and a waiting uploader holds no sleeping task it does not need.
/// - **Waking**: new work ends a wait for work, not a backoff; ``flush(timeout:)`` ends
///   either.
/// - **Flushing**: ``flush(timeout:)`` waits until the queue is empty, `timeout` seconds
///   have passed on the clock, or the collector answers that the configuration is wrong
///   (waiting would not help then).
/// - **Logging**: one line for each problem a person should see: a wrong configuration
///   (when it appears or changes, and when it is over), an entry refused, moved back or
///   abandoned.
///
/// Data a device measured is never deleted for a wrong configuration or a network error:
/// only a delivery, a refusal that blames the entry (``RefusalRule``),
/// ``DeliveryConfiguration/maximumAttempts`` failures that can be its fault, or the queue's
/// own bound on disk delete it.
actor Uploader<Queue: UploadQueue> {
    /// The queue served. Its own work (a batch sealed, the journal closed) runs on this actor.
    var queue: Queue
    /// The decisions: the state, the failures in a row, the configuration error.
    var machine: UploadStateMachine
    private let transport: UploadTransport
    /// Receives each line a person should see.
    let log: (@Sendable (String) -> Void)?
    /// What every wait sleeps on (the system's continuous clock unless a test steps its own).
    nonisolated let clock: any Clock<Duration>
    /// The entry being sent, which the queue's bound must not delete under the upload.
    private(set) var inFlight: Queue.Entry?

    /// The loop's wait (for work, or a backoff), ended early by ``newWork()``, a flush or
    /// ``stop()``.
    var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>?)?
    /// Flushes waiting for the queue to empty.
    var flushWaiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>, timer: Task<Void, Never>?)] = []
    var nextID = 0

    /// An uploader of `queue`, sending on a session whose requests time out after
    /// `configuration`'s ``DeliveryConfiguration/requestTimeout`` (seconds).
    /// - Parameter log: Receives one line for each upload problem a person should see.
    /// - Parameter clock: What every wait sleeps on.
    /// - Parameter transport: How requests travel (that session unless a test answers them).
    init(queue: Queue, configuration: DeliveryConfiguration, log: (@Sendable (String) -> Void)?, clock: any Clock<Duration>,
         transport: UploadTransport? = nil) {
        self.queue = queue
        machine = UploadStateMachine(rules: queue.rules)
        self.transport = transport ?? .session(UploadRequest.session(configuration))
        self.log = log
        self.clock = clock
    }

    /// What the queue has done so far, with what it holds now.
    var currentStatistics: Queue.Statistics {
        queue.currentStatistics
    }

    /// Uploads entries until ``stop()``: as the state machine chooses, waiting when there
    /// are none and backing off after failures.
    func run() async {
        Queue.running(self)
        while true {
            let entries = queue.entries()
            switch machine.next(attempts: entries.map(\.attempts)) {
            case .stop:
                return
            case .waitForWork:
                answerFlushes()
                await wait(seconds: nil)
            case let .upload(index):
                await upload(entries[index])
                answerFlushes(onlyIfEmpty: true)
            }
        }
    }

    /// Sends `entry`, carries out the machine's action, and waits as it says.
    private func upload(_ entry: Queue.Entry) async {
        guard let body = queue.body(of: entry) else {
            machine.skipped()
            return
        }
        let (request, what, answer) = queue.request(for: entry)
        inFlight = entry
        let verdict = await UploadVerdict.send(request, body: body, via: transport, what: what, answer: answer)
        inFlight = nil
        queue.statistics.uploadAttempts += 1
        let configurationError = machine.configurationError
        let action = machine.uploaded(outcome(of: verdict), jitter: .random(in: 0.5...1))
        carryOut(action, on: entry, after: verdict)
        configurationChanged(from: configurationError)
        if case .keep = action {
            // The flushes learn now that waiting would not help.
            answerFlushes()
        }
        if let seconds = action.wait { await wait(seconds: seconds) }
    }

    /// The verdict as the machine sees it: a refusal sorted by the queue's rule.
    private func outcome(of verdict: UploadVerdict<Queue.Answer>) -> UploadStateMachine.Outcome {
        switch verdict {
        case .delivered:
            .delivered
        case let .refused(_, error):
            .refused(blamesEntry: queue.rules.refusals.blamesEntry(code: error.error.code, field: error.error.field,
                                                                   message: error.error.message))
        case let .misconfigured(reason):
            .misconfigured(reason: reason)
        case let .retry(reason, retryAfter, countsAgainstBatch):
            .failed(reason: reason, retryAfter: retryAfter, countsAgainstEntry: countsAgainstBatch)
        }
    }

    /// Has the queue do what `action` says to `entry`, and counts it.
    private func carryOut(_ action: UploadStateMachine.Action, on entry: Queue.Entry, after verdict: UploadVerdict<Queue.Answer>) {
        if action.wait != nil { queue.statistics.retries += 1 }
        switch (action, verdict) {
        case let (.delete, .delivered(answer)):
            queue.delivered(entry, answer: answer)
        case let (.delete, .refused(status, error)):
            report(queue.refused(entry, status: status, error: "\(error)"))
        case let (.moveBack(attempts, _), .refused(status, error)):
            report(queue.keep(entry, attempts: attempts, status: status, error: "\(error)"))
        case let (.keep, .misconfigured(reason)):
            queue.statistics.lastError = reason
        case let (.retry(_, attempts), .retry(reason, _, _)):
            queue.statistics.lastError = reason
            if let attempts, let line = queue.record(attempts: attempts, against: entry, movedBack: false, reason: reason) {
                log?(line)
            }
        case let (.moveBack(attempts, _), .retry(reason, _, _)):
            queue.statistics.lastError = reason
            if let line = queue.record(attempts: attempts, against: entry, movedBack: true, reason: reason) { log?(line) }
        case let (.abandon(attempts, _), .retry(reason, _, _)):
            queue.statistics.lastError = reason
            report(queue.abandon(entry, attempts: attempts, reason: reason))
        case (.delete, _), (.keep, _), (.retry, _), (.moveBack, _), (.abandon, _):
            // The machine answers each verdict with one kind of action: nothing else occurs.
            assertionFailure("Uploader: \(action) does not answer \(verdict)")
        }
    }

    /// Logs a configuration error that appeared or changed, or ended.
    private func configurationChanged(from before: String?) {
        let now = machine.configurationError
        queue.statistics.configurationError = now
        guard now != before else { return }
        if let now {
            log?("\(now) (\(queue.wording.everyEntry) is kept and retried with backoff)")
        } else {
            log?(queue.wording.acceptsAgain)
        }
    }

    /// Records `message` as the latest error and logs it.
    func report(_ message: String) {
        queue.statistics.lastError = message
        log?(message)
    }
}
