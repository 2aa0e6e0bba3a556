import Foundation
import Testing
@testable import FramescopeSDK

/// The upload rules as a value, driven with made-up outcomes, jitters and waits (seconds):
/// no HTTP, no files, no clock. Jitter 1 gives the backoff's ceiling.
@Suite("Upload state machine: outcomes in, actions out")
struct UploadStateMachineTests {
    typealias Machine = UploadStateMachine
    typealias Outcome = UploadStateMachine.Outcome

    /// Rules with a backoff of 1 s doubling to 8 s.
    static func rules(movingBackAfter: Int = 3, maximumAttempts: Int = 10,
                      refusals: RefusalRule = .alwaysTheEntrys) -> Machine.Rules {
        var configuration = DeliveryConfiguration(initialRetryDelay: 1, maximumRetryDelay: 8)
        configuration.attemptsBeforeMovingBack = movingBackAfter
        configuration.maximumAttempts = maximumAttempts
        return Machine.Rules(configuration, refusals: refusals)
    }

    /// A machine that has just chosen an entry that had failed `attempts` times.
    static func uploading(attempts: Int, rules: Machine.Rules = rules()) -> Machine {
        var machine = Machine(rules: rules)
        #expect(machine.next(attempts: [attempts]) == .upload(index: 0))
        return machine
    }

    static let network = Outcome.failed(reason: "network: refused", retryAfter: nil, countsAgainstEntry: false)
    static let serverError = Outcome.failed(reason: "HTTP 500", retryAfter: nil, countsAgainstEntry: true)

    @Test("One outcome of an entry that had failed N times (move back at 3, abandon at 10, backoff 1 s after a first failure)",
          arguments: [
            (Outcome.delivered, 0, Machine.Action.delete(.delivered)),
            (.delivered, 9, .delete(.delivered)),
            (.refused(blamesEntry: true), 0, .delete(.refused)),
            (.refused(blamesEntry: false), 0, .moveBack(attempts: 3, after: 1)),
            (.refused(blamesEntry: false), 5, .moveBack(attempts: 5, after: 1)),
            (.misconfigured(reason: "HTTP 401"), 0, .keep(after: 1)),
            (.misconfigured(reason: "HTTP 401"), 9, .keep(after: 1)),
            (network, 9, .retry(after: 1, attempts: nil)),
            (.failed(reason: "HTTP 503", retryAfter: 7, countsAgainstEntry: false), 0, .retry(after: 7, attempts: nil)),
            (.failed(reason: "HTTP 429", retryAfter: 0, countsAgainstEntry: false), 0, .retry(after: 0, attempts: nil)),
            (serverError, 0, .retry(after: 1, attempts: 1)),
            (serverError, 2, .moveBack(attempts: 3, after: 1)),
            (serverError, 3, .retry(after: 1, attempts: 4)),
            (serverError, 8, .retry(after: 1, attempts: 9)),
            (serverError, 9, .abandon(attempts: 10, after: 1)),
            (serverError, 12, .abandon(attempts: 13, after: 1)),
          ])
    func oneOutcome(outcome: Outcome, attempts: Int, expected: Machine.Action) {
        var machine = Self.uploading(attempts: attempts)
        let action = machine.uploaded(outcome, jitter: 1)
        #expect(action == expected)
        #expect(machine.state == (expected.wait.map { .backingOff(seconds: $0) } ?? .ready))
    }

    @Test("Backoff: the n-th failure in a row waits initial × 2^(n−1), capped, times a jitter held to 0.5–1")
    func backoff() {
        let rules = Self.rules()
        #expect((1...7).map { Machine.backoff(afterFailures: $0, rules: rules, jitter: 1) } == [1, 2, 4, 8, 8, 8, 8])
        #expect((1...5).map { Machine.backoff(afterFailures: $0, rules: rules, jitter: 0.5) } == [0.5, 1, 2, 4, 4])
        #expect(Machine.backoff(afterFailures: 2, rules: rules, jitter: 0.1) == 1)
        #expect(Machine.backoff(afterFailures: 2, rules: rules, jitter: 3) == 2)
        #expect(Machine.backoff(afterFailures: 2, rules: rules, jitter: .nan) == 2)
        #expect(Machine.backoff(afterFailures: 10_000, rules: rules, jitter: 1) == 8)

        // Failures in a row grow the wait; a delivery starts it over.
        var machine = Machine(rules: rules)
        var waits: [Double?] = []
        for outcome in [Self.network, Self.network, Self.serverError, .delivered, Self.network] {
            _ = machine.next(attempts: [0])
            waits.append(machine.uploaded(outcome, jitter: 1).wait)
            machine.waitEnded()
        }
        #expect(waits == [1, 2, 4, nil, 1])
    }

    @Test("The next entry: oldest first among those under N failures; behind them, the fewest failures first")
    func order() {
        #expect(Machine.nextIndex(attempts: [6, 5, 4, 0], movingBackAfter: 5) == 2)
        #expect(Machine.nextIndex(attempts: [6, 5, 4, 0], movingBackAfter: 4) == 3)
        #expect(Machine.nextIndex(attempts: [6, 5], movingBackAfter: 5) == 1)
        #expect(Machine.nextIndex(attempts: [6, 5, 4, 0], movingBackAfter: 7) == 0)
        #expect(Machine.nextIndex(attempts: [3, 3, 3], movingBackAfter: 3) == 0)
        #expect(Machine.nextIndex(attempts: [], movingBackAfter: 5) == nil)
        var machine = Machine(rules: Self.rules())
        #expect(machine.next(attempts: []) == .waitForWork)
        #expect(machine.state == .waitingForWork)
    }

    @Test("New work ends a wait for work but never a backoff; a flush ends either and starts the backoff over")
    func waking() {
        var machine = Machine(rules: Self.rules())
        _ = machine.next(attempts: [])
        #expect(machine.newWork() == .resume)
        #expect(machine.state == .ready)
        #expect(machine.newWork() == .none, "nothing waits")

        _ = machine.next(attempts: [0])
        #expect(machine.flushRequested() == .none, "an upload under way is not a wait")
        _ = machine.uploaded(Self.network, jitter: 1)
        _ = machine.next(attempts: [0])
        _ = machine.uploaded(Self.network, jitter: 1)
        #expect(machine.state == .backingOff(seconds: 2) && machine.failures == 2)
        #expect(machine.newWork() == .none)
        #expect(machine.state == .backingOff(seconds: 2))
        #expect(machine.flushRequested() == .resume)
        #expect(machine.state == .ready && machine.failures == 0)
        _ = machine.next(attempts: [0])
        #expect(machine.uploaded(Self.network, jitter: 1) == .retry(after: 1, attempts: nil), "the backoff starts over")
    }

    @Test("A wrong configuration is kept until the collector takes or judges an entry; a network error leaves it as it is")
    func configurationError() {
        var machine = Machine(rules: Self.rules(refusals: .onlyUnreadableBytes))
        func send(_ outcome: Outcome) -> Machine.Action {
            _ = machine.next(attempts: [0])
            defer { machine.waitEnded() }
            return machine.uploaded(outcome, jitter: 1)
        }
        _ = send(.misconfigured(reason: "HTTP 401: check `ingestKey`"))
        #expect(machine.configurationError == "HTTP 401: check `ingestKey`")
        _ = send(Self.network)
        #expect(machine.configurationError == "HTTP 401: check `ingestKey`")
        _ = send(.misconfigured(reason: "HTTP 404"))
        #expect(machine.configurationError == "HTTP 404")
        _ = send(.refused(blamesEntry: false))
        #expect(machine.configurationError == nil, "a refusal is a judgement: the key and the path work")
        _ = send(.misconfigured(reason: "HTTP 403"))
        _ = send(.delivered)
        #expect(machine.configurationError == nil)
    }

    @Test("Data a device measured is never deleted for a wrong configuration or an error that is not its own, however long it lasts")
    func neverDeletedForConfigurationOrNetwork() {
        var machine = Machine(rules: Self.rules(movingBackAfter: 1, maximumAttempts: 2))
        let outcomes: [Outcome] = [.misconfigured(reason: "HTTP 401"), Self.network,
                                   .failed(reason: "HTTP 429", retryAfter: 30, countsAgainstEntry: false)]
        for round in 0..<3_000 {
            _ = machine.next(attempts: [0, 1])
            let action = machine.uploaded(outcomes[round % outcomes.count], jitter: 1)
            switch action {
            case .keep, .retry(_, nil): break
            default: Issue.record("round \(round): \(action)")
            }
            machine.waitEnded()
        }
        #expect(machine.failures == 3_000)
    }

    @Test("Stopped during an upload: its outcome is still carried out, then the loop ends; nothing wakes it")
    func stopDuringUpload() {
        var machine = Self.uploading(attempts: 2)
        machine.stop()
        #expect(machine.state == .stopped(uploading: 2))
        #expect(machine.uploaded(Self.serverError, jitter: 1) == .moveBack(attempts: 3, after: 1))
        #expect(machine.state == .stopped(uploading: nil))
        #expect(machine.next(attempts: [0]) == .stop)
        #expect(machine.newWork() == .none && machine.flushRequested() == .none)
        machine.waitEnded()
        #expect(machine.isStopped)
    }
}
