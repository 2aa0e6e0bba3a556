import Dispatch
import Foundation

extension HangWatchdog {
    /// A call to one of the public methods, for the watchdog's thread to carry out.
    enum Command: Sendable {
        case start, pause, resume, stop
    }

    /// A command waiting for the watchdog's thread, and the semaphore its caller waits on.
    private struct Request: Sendable {
        let command: Command
        let done: DispatchSemaphore
    }

    /// Whether the watchdog's thread exists, and the commands waiting for it.
    private struct Mailbox {
        var thread: Thread?
        var exited = false
        var requests: [Request] = []
    }

    /// The watchdog's shell: its thread, which feeds clock readings and the ping's runs to the
    /// two values that decide (``HangDetector`` and ``HangWatchdogPolicy``) and carries out
    /// what they return: posting the ping, publishing and withdrawing busy spans, starting and
    /// ending the stack sampler, calling the handler and the progress handler.
    final class Core: @unchecked Sendable {
        // @unchecked: `detector`, `policy`, `nextCheck` and `exiting` are read and written only
        // on the watchdog's thread (in `loop()` and in the commands carried out there), or by
        // the one caller that stops a watchdog whose thread never started (after which no
        // thread starts); every other stored property is immutable or itself thread-safe.
        private let clock: MonotonicClock
        private let handler: @Sendable (HangEvent) -> Void
        /// Called with the hang so far while it lasts (see ``HangWatchdog``'s initializer).
        private let progress: (@Sendable (Hang) -> Void)?
        /// The ping and the words it shares with the checks.
        private let ping: Ping
        /// Where busy spans are published.
        let busySpans: BusySpanReader
        /// Stack sampling, when the watchdog samples stacks.
        private let stackSampling: HangStackSampling?
        /// The check interval as the thread's sleeps count it.
        private let interval: DispatchTimeInterval
        /// What the thread sleeps on: it times out when a check is due and is signalled
        /// when a command arrives.
        private let wakeup = DispatchSemaphore(value: 0)
        private let mailbox = Locked(Mailbox())
        /// The counters, published after each step for ``HangWatchdog/statistics``.
        let published = Locked(Statistics(checks: 0, suspensions: 0, hangs: 0))
        /// Which hangs began and ended. Only the watchdog's thread touches it.
        private var detector: HangDetector
        /// What to do with a hang while it lasts. Only the watchdog's thread touches it.
        private var policy: HangWatchdogPolicy
        /// When the next check is due; `nil` while not checking (new, paused, stopped).
        /// Only the watchdog's thread touches it.
        private var nextCheck: DispatchTime?
        /// Set on the watchdog's thread by a stop; the thread then exits.
        private var exiting = false

        /// A shell watching `target` with `configuration` (seconds, turned into the
        /// nanoseconds the values decide in), reading `clock`; it has no thread until the
        /// first ``run(_:)`` of `.start`.
        init(target: DispatchQueue, configuration: Configuration, clock: MonotonicClock,
             stackSampling: HangStackSampling?, progress: (@Sendable (Hang) -> Void)?,
             handler: @escaping @Sendable (HangEvent) -> Void) {
            self.clock = clock
            self.handler = handler
            self.progress = progress
            self.stackSampling = stackSampling
            detector = HangDetector(
                threshold: nanoseconds(configuration.threshold),
                checkInterval: nanoseconds(configuration.checkInterval),
                suspensionTolerance: nanoseconds(configuration.suspensionTolerance))
            let rule = BusySpanRule(
                threshold: nanoseconds(configuration.busyThreshold),
                checkGapTolerance: nanoseconds(configuration.checkInterval + configuration.suspensionTolerance))
            policy = HangWatchdogPolicy(busySpans: rule, samplesStacks: stackSampling != nil,
                                        reportsProgress: progress != nil,
                                        progressInterval: nanoseconds(HangWatchdog.progressInterval))
            busySpans = BusySpanReader(epoch: clock.now())
            interval = .nanoseconds(Int(nanoseconds(configuration.checkInterval)))
            ping = Ping(queue: target, clock: clock, busySpans: busySpans, rule: rule,
                        currentThread: stackSampling?.currentThread)
        }

        /// Carries out `command` on the watchdog's thread and returns once it and the
        /// events it causes are handled: in place when called there (from the handler),
        /// otherwise by waking the thread, which `.start` creates on first use.
        func run(_ command: Command) {
            let done = DispatchSemaphore(value: 0)
            enum Route { case inPlace, posted, stopUnstarted, nothingToDo }
            let route: Route = mailbox.withLock { mailbox in
                if let thread = mailbox.thread, thread == Thread.current { return .inPlace }
                if mailbox.exited { return .nothingToDo }
                if mailbox.thread == nil {
                    // No thread yet: only a start needs one; a stop just ends the detector,
                    // and marks the watchdog exited so that later calls do nothing.
                    guard case .start = command else {
                        guard case .stop = command else { return .nothingToDo }
                        mailbox.exited = true
                        return .stopUnstarted
                    }
                    let thread = Thread { [self] in loop() }
                    thread.name = "framescope.hang-watchdog"
                    thread.qualityOfService = .userInitiated
                    mailbox.thread = thread
                    thread.start()
                }
                mailbox.requests.append(Request(command: command, done: done))
                return .posted
            }
            switch route {
            case .inPlace:
                carryOut(command)
            case .posted:
                wakeup.signal()
                done.wait()
            case .stopUnstarted:
                // Never started: the detector has nothing to report; the ping and the
                // sampler are cancelled.
                stop()
            case .nothingToDo:
                break  // stopped already, or not started
            }
        }

        /// The watchdog's thread: sleeps until a check is due or a command arrives.
        private func loop() {
            while !exiting {
                let signalled: Bool
                if let due = nextCheck {
                    signalled = wakeup.wait(timeout: due) == .success
                } else {
                    wakeup.wait()
                    signalled = true
                }
                if signalled {
                    let requests = mailbox.withLock { mailbox in
                        defer { mailbox.requests.removeAll() }
                        return mailbox.requests
                    }
                    for request in requests {
                        carryOut(request.command)
                        request.done.signal()
                    }
                } else if let due = nextCheck {
                    check()
                    // The next check is one interval after this one was due; after a late
                    // wakeup (a stop of the process), one interval from now.
                    let next = due + interval
                    let now = DispatchTime.now()
                    if nextCheck != nil { nextCheck = next > now ? next : now + interval }
                }
            }
            // Answer whoever posted a command after the stop was taken.
            let late = mailbox.withLock { mailbox in
                mailbox.exited = true
                defer { mailbox.requests.removeAll() }
                return mailbox.requests
            }
            for request in late { request.done.signal() }
        }

        /// Carries out `command` on the watchdog's thread.
        private func carryOut(_ command: Command) {
            switch command {
            case .start, .resume:
                let from: HangDetector.Phase = command == .start ? .idle : .paused
                guard detector.phase == from else { return }
                begin()
                nextCheck = DispatchTime.now() + interval
            case .pause:
                guard detector.phase == .running else { return }
                pause()
                nextCheck = nil
            case .stop:
                stop()
                nextCheck = nil
                exiting = true
            }
        }

        /// A periodic check, on the watchdog's thread.
        private func check() {
            let now = clock.now()
            let ranAt = ping.takeRun()
            let action = detector.check(now: now, pingRanAt: ranAt)
            let since = detector.pingWaitingSince
            let spans = policy.check(now: now, waitingSince: since, pingRan: ranAt != nil, samples: samplesSoFar())
            ping.markIdle(waitingSince: policy.idleWaitSince)
            switch spans {
            case .none: break
            case let .publish(span): busySpans.publish(start: span.start, end: span.end)
            case let .withdraw(start): busySpans.retract(start: start)
            }
            perform(action, now: now, waitingSince: since)
            if ranAt == nil, let report = policy.progress(now: now, samples: samplesSoFar()?.kept) {
                reportProgress(report)
            }
        }

        private func begin() {
            let now = clock.now()
            let action = detector.start(now: now)
            perform(action, now: now, waitingSince: detector.pingWaitingSince)
        }

        private func pause() {
            let now = clock.now()
            let action = detector.pause(now: now, pingRanAt: ping.takeRun())
            perform(action, now: now, waitingSince: nil)
        }

        private func stop() {
            let now = clock.now()
            let action = detector.stop(now: now, pingRanAt: ping.takeRun())
            perform(action, now: now, waitingSince: nil)
            ping.cancel()
            stackSampling?.sampler.stop()
        }

        /// The sampler's counts for the hang under way, when it is sampled.
        private func samplesSoFar() -> StackSampler.Statistics? {
            policy.isSampling ? stackSampling?.sampler.statistics : nil
        }

        /// Publishes the detector's state for the ping, then posts it and reports the events.
        /// `waitingSince` nil (paused, stopped) means a ping that runs now measures nothing.
        private func perform(_ action: HangDetector.Action, now: UInt64, waitingSince: UInt64?) {
            ping.publish(lastCheckAt: now, waitingSince: waitingSince)
            if action.postPing {
                ping.post()
            }
            for event in action.events {
                let event = sampled(event, now: now)
                publishStatistics()
                handler(event)
            }
            publishStatistics()
        }

        /// Starts or ends the stack sampling of a hang as the policy says, and returns the
        /// event to report: an ended hang gets its stack and idle verdict.
        private func sampled(_ event: HangEvent, now: UInt64) -> HangEvent {
            switch event {
            case let .began(hang):
                let source = stackSampling?.source(ping.lastThread)
                if policy.hangBegan(hang, at: now, canSample: source != nil) == .start, let stackSampling, let source {
                    stackSampling.sampler.hangBegan(at: hang.start, source: source, pingRuns: ping.runs)
                }
                return event
            case .ended(var hang, let ending):
                guard policy.hangEnded() == .collect, let result = stackSampling?.sampler.hangEnded() else { return event }
                hang.stack = result.stack
                hang.isIdle = result.isIdle
                policy.collected(isIdle: result.isIdle)
                return .ended(hang, ending)
            }
        }

        /// Calls the progress handler with the hang so far, and its samples so far when the
        /// policy says there are some.
        private func reportProgress(_ report: HangWatchdogPolicy.Progress) {
            var hang = report.hang
            if report.withSamples, let sampled = stackSampling?.sampler.snapshot() {
                hang.stack = sampled.stack
                hang.isIdle = sampled.isIdle
            }
            progress?(hang)
        }

        /// Publishes the counters of the detector and the policy for
        /// ``HangWatchdog/statistics``.
        private func publishStatistics() {
            let statistics = Statistics(checks: detector.checks, suspensions: detector.suspensions, hangs: detector.hangs,
                                        sampledHangs: policy.sampledHangs, unsampledHangs: policy.unsampledHangs,
                                        idleHangs: policy.idleHangs)
            published.withLock { $0 = statistics }
        }
    }
}
