import Atomics
import Dispatch

extension HangWatchdog {
    /// The ping, and the words it shares with the watchdog's checks.
    ///
    /// The ping is a user-data dispatch source whose handler runs on the watched queue: each
    /// ``post()`` (`add(data:)`) enqueues it there, behind the work already queued. When it
    /// runs it records the time (taken by the next check, ``takeRun()``), bumps ``runs`` and
    /// records its thread (for stack sampling), and publishes its wait as a busy span when
    /// ``BusySpanRule/atPingRun(now:waitingSince:idleWaitSince:lastCheckAt:)`` says so, from
    /// the words the checks publish (``publish(lastCheckAt:waitingSince:)``,
    /// ``markIdle(waitingSince:)``). The handler allocates nothing and takes one uncontended
    /// lock (the run time's).
    final class Ping: Sendable {
        /// The dispatch source.
        private let source: SendableDispatchSource<DispatchSourceUserDataAdd>
        /// When the ping in flight ran, once it has; taken by the next check.
        private let ranAt: Locked<UInt64?>
        /// The detector's `pingWaitingSince` (0: no ping waiting, or the watchdog measures
        /// nothing), for the ping to read on the watched queue (ns).
        private let waitingSince: ManagedAtomic<UInt64>
        /// When the latest check (or start) ran, so the ping can tell a stopped process from a
        /// busy queue (ns).
        private let lastCheckAt: ManagedAtomic<UInt64>
        /// The wait the samples of the hang under way found idle (``HangWatchdogPolicy/idleWaitSince``),
        /// or 0 (ns).
        private let idleWaitSince: ManagedAtomic<UInt64>
        /// Bumped each time the ping runs, when the watchdog samples stacks: the sampler stops
        /// once it moves.
        let runs: PingRunCounter
        /// The identity of the thread the ping last ran on (0: none yet, or no stack sampling).
        private let thread: ManagedAtomic<UInt64>

        /// Creates the ping on `queue` and activates it; it runs only once posted. Its run
        /// times come from `clock`; its busy spans go to `busySpans` by `rule`, and
        /// `currentThread` (when stacks are sampled) names the thread it runs on.
        init(queue: DispatchQueue, clock: MonotonicClock, busySpans: BusySpanReader, rule: BusySpanRule,
             currentThread: (@Sendable () -> UInt64)?) {
            let ranAt = Locked<UInt64?>(nil)
            let waitingSince = ManagedAtomic<UInt64>(0)
            let lastCheckAt = ManagedAtomic<UInt64>(busySpans.epoch)
            let idleWaitSince = ManagedAtomic<UInt64>(0)
            let runs = PingRunCounter()
            let thread = ManagedAtomic<UInt64>(0)
            let source = DispatchSource.makeUserDataAddSource(queue: queue)
            // Captures the words, not `self`: the source holds the handler, and `self` the source.
            source.setEventHandler { [clock, ranAt, waitingSince, lastCheckAt, idleWaitSince, runs, thread, busySpans, rule] in
                let now = clock.now()
                if let currentThread {
                    thread.store(currentThread(), ordering: .relaxed)
                    runs.bump()
                }
                ranAt.withLock { $0 = now }
                // A long wait is a busy span only if the watchdog kept checking meanwhile;
                // otherwise the whole process was stopped and the wait means nothing. A wait
                // its samples found idle is none either.
                if let span = rule.atPingRun(now: now, waitingSince: waitingSince.load(ordering: .acquiring),
                                             idleWaitSince: idleWaitSince.load(ordering: .relaxed),
                                             lastCheckAt: lastCheckAt.load(ordering: .relaxed)) {
                    busySpans.publish(start: span.start, end: span.end)
                }
            }
            source.activate()
            self.source = SendableDispatchSource(source)
            self.ranAt = ranAt
            self.waitingSince = waitingSince
            self.lastCheckAt = lastCheckAt
            self.idleWaitSince = idleWaitSince
            self.runs = runs
            self.thread = thread
        }

        /// Enqueues the ping on the watched queue.
        func post() {
            source.source.add(data: 1)
        }

        /// When the ping ran since the last call, if it did; clears it.
        func takeRun() -> UInt64? {
            ranAt.withLock { ranAt in
                defer { ranAt = nil }
                return ranAt
            }
        }

        /// Publishes a check (or start, pause, stop) at `lastCheckAt` and the detector's wait
        /// after it (`waitingSince`, nil when a ping that runs now measures nothing), ns.
        func publish(lastCheckAt now: UInt64, waitingSince since: UInt64?) {
            lastCheckAt.store(now, ordering: .relaxed)
            waitingSince.store(since ?? 0, ordering: .releasing)
        }

        /// Publishes the wait found idle (``HangWatchdogPolicy/idleWaitSince``, 0 for none), ns.
        func markIdle(waitingSince since: UInt64) {
            idleWaitSince.store(since, ordering: .relaxed)
        }

        /// The identity of the thread the ping last ran on (0: none yet).
        var lastThread: UInt64 {
            thread.load(ordering: .relaxed)
        }

        /// Cancels the source: the ping never runs again.
        func cancel() {
            source.source.cancel()
        }
    }
}
