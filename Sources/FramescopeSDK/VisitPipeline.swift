import FramescopeCore

/// What the main actor hands the pipeline.
enum PipelineMessage: Sendable {
    /// A visit closed (nil: none was open) and, if `started`, another began. A visit the
    /// tracker dropped as short comes too: it is sent if it holds a hang.
    case visitChanged(closed: VisitOutcome?, started: Bool)
    /// Deliver everything queued, then resume `done` with whether the queue is empty.
    case flush(timeout: Double, done: CheckedContinuation<Bool, Never>)
}

/// The hangs the watchdog saw, kept until the pipeline assigns them to visits.
final class HangLog: Sendable {
    private let hangs = Locked<[Hang]>([])
    /// Most hangs kept; older ones are dropped first (a visit rarely has more than a few).
    static let capacity = 512

    /// Records a hang once it has ended (its duration is then final).
    func record(_ event: HangEvent) {
        guard case let .ended(hang, _) = event else { return }
        hangs.withLock { hangs in
            if hangs.count >= Self.capacity { hangs.removeFirst(hangs.count - Self.capacity + 1) }
            hangs.append(hang)
        }
    }

    /// The hangs of `visit`, forgetting every hang that ended before the visit did.
    func take(for visit: ClosedVisit) -> [HangRecord] {
        hangs.withLock { hangs in
            let records = visit.hangRecords(from: hangs)
            hangs.removeAll { $0.midpoint < visit.end }
            return records
        }
    }
}

/// Finishes visits off the main thread, in order: CPU and memory windows, hangs, the
/// device's state, the disk queue, then the local hook. A visit the tracker dropped as
/// short is kept when it holds a hang (``ClosedVisit/isKeptWhenShort(hangs:)``), and
/// counted in `shortVisitsKept`.
struct VisitPipeline: Sendable {
    let delivery: DeliveryQueue
    let sampler: ResourceSampler?
    let hangLog: HangLog
    let deviceState: @Sendable () -> DeviceState
    /// How long after a visit's end to wait for the watchdog's verdict on it (ns).
    let settleNanoseconds: UInt64
    /// The clock visits' ends are read on (the tracker's).
    let clock: MonotonicClock
    /// What the settle wait sleeps on: the delivery queue's clock, so a test steps a manual
    /// clock instead of sleeping.
    let sleeper: any Clock<Duration>
    /// Short visits sent because they hold a hang.
    let shortVisitsKept: Locked<Int>
    /// Called with each visit once it is in the disk queue (the facade's ``Framescope/onVisit``).
    var notify: @Sendable (ScreenVisitEvent) async -> Void

    func run(_ messages: AsyncStream<PipelineMessage>) async {
        for await message in messages {
            switch message {
            case let .visitChanged(outcome, started):
                let resources = sampler?.finishWindow()
                if started { sampler?.startWindow() }
                let closed: ClosedVisit
                let isShort: Bool
                switch outcome {
                case nil: continue
                case let .finished(visit)?: (closed, isShort) = (visit, false)
                case let .dropped(visit)?:
                    // Without a measured frame the collector refuses a visit: no hang saves it.
                    guard visit.report.frames > 0 else { continue }
                    (closed, isShort) = (visit, true)
                }
                // A hang that ended just before the visit closed is reported at the
                // watchdog's next check: wait for it.
                let wait = (closed.end &+ settleNanoseconds).minus(clock.now())
                if wait > 0 { try? await sleeper.sleep(for: .nanoseconds(Int64(min(wait, UInt64(Int64.max))))) }
                let hangs = hangLog.take(for: closed)
                if isShort {
                    guard closed.isKeptWhenShort(hangs: hangs) else { continue }
                    shortVisitsKept.withLock { $0 += 1 }
                }
                let event = closed.event(hangs: hangs, resources: resources, state: deviceState())
                do {
                    try await delivery.append(event)
                    await notify(event)
                } catch {
                    // The disk queue is unusable (full disk, removed folder): the visit is lost,
                    // and the delivery's statistics say why.
                    await delivery.recordFailure("\(error)")
                }
            case let .flush(timeout, done):
                done.resume(returning: await delivery.flush(timeout: timeout))
            }
        }
    }
}
