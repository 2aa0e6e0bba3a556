import Testing
@testable import FramescopeSDK

/// A clock that stands still until the test moves it: sleepers wake only when
/// ``advance(by:)`` or ``advanceToEarliest()`` passes their deadline, so a test of waits
/// and timeouts runs in no time and asserts the exact wait that was chosen.
///
/// The test learns what the code under test is waiting for with ``sleepers(atLeast:)``,
/// which suspends until that many sleeps are pending (no polling).
final class ManualClock: Clock, Sendable {
    /// A point on this clock: the time since it was made.
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        /// Tests waiting for the number of sleepers to reach a count.
        var watchers: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var released = false
    }

    private let state = Locked(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Seconds since the clock was made.
    var seconds: Double {
        let offset = now.offset.components
        return Double(offset.seconds) + Double(offset.attoseconds) / 1e18
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resumeNow, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Bool, Never>]) in
                    if deadline <= state.now || Task.isCancelled { return (true, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (false, Self.satisfiedWatchers(&state))
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
                for watcher in watchers { watcher.resume(returning: true) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// The sleepers' deadlines, in seconds from now, earliest first.
    var pendingWaits: [Double] {
        state.withLock { state in
            state.sleepers.map { Self.seconds(state.now.duration(to: $0.deadline)) }.sorted()
        }
    }

    /// Suspends until at least `count` sleeps are pending; returns false instead when
    /// ``release()`` is called first (the work the test drives is over).
    func sleepers(atLeast count: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                if state.released { return false }
                if state.sleepers.count >= count { return true }
                state.watchers.append((count, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Ends every ``sleepers(atLeast:)`` wait, now and later, with false.
    func release() {
        let watchers = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.released = true
            defer { state.watchers = [] }
            return state.watchers.map(\.continuation)
        }
        for watcher in watchers { watcher.resume(returning: false) }
    }

    /// Lets ``sleepers(atLeast:)`` wait again after a ``release()``.
    func rearm() {
        state.withLock { $0.released = false }
    }

    /// Moves the clock `seconds` on and wakes every sleeper whose deadline it passes.
    func advance(by seconds: Double) {
        advance(to: now.advanced(by: .seconds(seconds)))
    }

    /// Moves the clock to the earliest sleeper's deadline and wakes it (and any due with it).
    /// - Returns: How far the clock moved, in seconds; nil when nothing sleeps.
    @discardableResult
    func advanceToEarliest() -> Double? {
        let (start, earliest) = state.withLock { ($0.now, $0.sleepers.map(\.deadline).min()) }
        guard let earliest else { return nil }
        advance(to: earliest)
        return Self.seconds(start.duration(to: earliest))
    }

    private func advance(to instant: Instant) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            if state.now < instant { state.now = instant }
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    private static func satisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        let count = state.sleepers.count
        let satisfied = state.watchers.filter { $0.count <= count }.map(\.continuation)
        state.watchers.removeAll { $0.count <= count }
        return satisfied
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Runs `work` (a flush, typically) while stepping `clock`: whenever `work` waits on the
/// clock beside `standing` other sleeps that last through it (a flush's own timeout), the
/// clock moves to the earliest deadline. Returns `work`'s result and each step, in seconds.
func stepping<R: Sendable>(_ clock: ManualClock, besides standing: Int = 1,
                           _ work: @escaping @Sendable () async -> R) async -> (result: R, steps: [Double]) {
    clock.rearm()
    let task = Task {
        let result = await work()
        clock.release()
        return result
    }
    var steps: [Double] = []
    while await clock.sleepers(atLeast: standing + 1) {
        if let step = clock.advanceToEarliest() { steps.append(step) }
    }
    return (await task.value, steps)
}
