/// The uploader's waits, wakes and flushes: every one a sleep on ``Uploader/clock``,
/// cancelled as soon as it is no longer needed. Whether an event ends the loop's wait is the
/// state machine's decision (``UploadStateMachine/newWork()``,
/// ``UploadStateMachine/flushRequested()``); this file only keeps the continuations.
extension Uploader {
    /// Retries at once and waits until every entry is delivered (or refused or abandoned),
    /// `timeout` seconds have passed on the clock, or the collector answers that the
    /// configuration is wrong (waiting would not help then).
    /// - Returns: Whether the queue is empty.
    func flush(timeout: Double) async -> Bool {
        Queue.flushing(self)
        if queue.isEmpty { return true }
        wake(machine.flushRequested())
        let id = nextID
        nextID += 1
        return await withCheckedContinuation { continuation in
            flushWaiters.append((id, continuation, after(seconds: timeout, .flush(id: id))))
        }
    }

    /// New work was queued: ends a wait for work (not a backoff).
    func newWork() {
        wake(machine.newWork())
    }

    /// Stops the loop after its current attempt; what is queued stays on disk.
    func stop() {
        machine.stop()
        if let waiter { endWait(id: waiter.id) }
        answerFlushes()
        Queue.stopping(self)
    }

    /// Answers every waiting flush with whether the queue is empty (only when it is, with
    /// `onlyIfEmpty`). Looks at the queue only when a flush waits.
    func answerFlushes(onlyIfEmpty: Bool = false) {
        guard !flushWaiters.isEmpty else { return }
        let empty = queue.isEmpty
        guard empty || !onlyIfEmpty else { return }
        for waiter in flushWaiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: empty)
        }
        flushWaiters = []
    }

    /// Fires `timer` on this actor `seconds` from now on ``clock``, unless the returned task is
    /// cancelled first or the actor is gone by then.
    func after(seconds: Double, _ timer: UploadTimer) -> Task<Void, Never> {
        UploadTimer.start(timer, after: seconds, on: clock, target: self)
    }

    /// A timer ran its time: ends the loop's wait, answers a flush, or hands it to the queue.
    func fired(_ timer: UploadTimer) {
        switch timer {
        case let .wait(id): endWait(id: id)
        case let .flush(id): finishFlush(id: id)
        case let .queue(value): Queue.fired(self, value)
        }
    }

    /// Waits `seconds` on the clock (for ever with nil) or until woken.
    func wait(seconds: Double?) async {
        guard !machine.isStopped else { return }
        let id = nextID
        nextID += 1
        await withCheckedContinuation { continuation in
            waiter = (id, continuation, seconds.map { after(seconds: $0, .wait(id: id)) })
        }
    }

    private func endWait(id: Int) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        machine.waitEnded()
        waiter.timer?.cancel()
        waiter.continuation.resume()
    }

    private func wake(_ action: UploadStateMachine.WakeAction) {
        guard action == .resume, let waiter else { return }
        endWait(id: waiter.id)
    }

    private func finishFlush(id: Int) {
        guard let index = flushWaiters.firstIndex(where: { $0.id == id }) else { return }
        flushWaiters.remove(at: index).continuation.resume(returning: queue.isEmpty)
    }

}

/// A timer of an ``Uploader``: what to do on the uploader's actor when it fires.
enum UploadTimer: Sendable, Equatable {
    /// End the loop's wait `id` (for work, or a backoff).
    case wait(id: Int)
    /// Answer the flush `id`: its timeout is over.
    case flush(id: Int)
    /// The queue's own timer (``UploadQueue/fired(_:_:)``), with its value.
    case queue(Int)

    /// A task that sleeps `seconds` on `clock`, then fires `timer` on `target`, unless it is
    /// cancelled first or `target` is gone. Not generic, so the task captures no queue type.
    static func start(_ timer: UploadTimer, after seconds: Double, on clock: any Clock<Duration>,
                      target: any UploadTimerTarget) -> Task<Void, Never> {
        let wait = UploadRequest.wait(seconds)
        return Task { [weak target] in
            do { try await clock.sleep(for: wait) } catch { return }
            await target?.fired(timer)
        }
    }
}

/// An actor that ``UploadTimer``s fire on.
protocol UploadTimerTarget: Actor {
    /// `timer` ran its time.
    func fired(_ timer: UploadTimer)
}

extension Uploader: UploadTimerTarget {}
