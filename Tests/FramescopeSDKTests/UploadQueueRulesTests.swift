import Foundation
import Testing
@testable import FramescopeSDK

/// The two queues' rules replayed on the state machine: each scenario the real-HTTP suites
/// (DeliveryFailureTests, MetricKitForwarderTests in the Server package) play against a
/// scripted collector, here with made-up outcomes and no waits, so a rule can be changed and
/// checked without a network or a clock.
@Suite("Upload rules of the visits' batches and MetricKit's payloads, replayed without HTTP")
struct UploadQueueRulesTests {
    /// A queue of named entries, oldest first, each with its failed attempts, uploaded by the
    /// machine until it waits for work. `script` answers each upload of an entry in turn
    /// (delivered once an entry's answers run out). Returns the names in the order sent.
    struct Replay {
        var machine: UploadStateMachine
        var entries: [(name: String, attempts: Int)]
        var script: [String: [UploadStateMachine.Outcome]]
        var sent: [String] = []
        var waits: [Double] = []
        var delivered: [String] = []
        var refused: [String] = []
        var abandoned: [String] = []
        var movedBack: [String] = []

        init(_ names: [String], rules: UploadStateMachine.Rules, script: [String: [UploadStateMachine.Outcome]]) {
            machine = UploadStateMachine(rules: rules)
            entries = names.map { ($0, 0) }
            self.script = script
        }

        mutating func run() {
            while case let .upload(index) = machine.next(attempts: entries.map(\.attempts)) {
                let name = entries[index].name
                sent.append(name)
                let outcome = script[name]?.isEmpty == false ? script[name]!.removeFirst() : .delivered
                let action = machine.uploaded(outcome, jitter: 1)
                switch action {
                case .delete(.delivered): delivered.append(name)
                case .delete(.refused): refused.append(name)
                case .keep, .retry(_, nil): break
                case let .retry(_, attempts?): entries[index].attempts = attempts
                case let .moveBack(attempts, _):
                    entries[index].attempts = attempts
                    movedBack.append(name)
                case .abandon: abandoned.append(name)
                }
                switch action {
                case .delete(.delivered), .delete(.refused), .abandon: entries.remove(at: index)
                default: break
                }
                if let wait = action.wait {
                    waits.append(wait)
                    machine.waitEnded()
                }
                guard sent.count < 1_000 else { return }
            }
        }
    }

    static func rules(movingBackAfter: Int, maximumAttempts: Int, refusals: RefusalRule) -> UploadStateMachine.Rules {
        var configuration = DeliveryConfiguration(initialRetryDelay: 0.05, maximumRetryDelay: 0.2)
        configuration.attemptsBeforeMovingBack = movingBackAfter
        configuration.maximumAttempts = maximumAttempts
        return UploadStateMachine.Rules(configuration, refusals: refusals)
    }

    static let serverError = UploadStateMachine.Outcome.failed(reason: "HTTP 500", retryAfter: nil, countsAgainstEntry: true)

    static func refusal(_ code: String, _ field: String?, _ message: String, _ rule: RefusalRule) -> UploadStateMachine.Outcome {
        .refused(blamesEntry: rule.blamesEntry(code: code, field: field, message: message))
    }

    @Test("Batches: a batch the collector keeps failing on moves behind the others after 2 attempts and is abandoned after 4")
    func poisonBatch() {
        var replay = Replay(["Poison", "Feed", "Search"],
                            rules: Self.rules(movingBackAfter: 2, maximumAttempts: 4, refusals: .alwaysTheEntrys),
                            script: ["Poison": Array(repeating: Self.serverError, count: 10)])
        replay.run()
        #expect(replay.sent == ["Poison", "Poison", "Feed", "Search", "Poison", "Poison"])
        #expect(replay.movedBack == ["Poison"] && replay.abandoned == ["Poison"] && replay.delivered == ["Feed", "Search"])
        #expect(replay.waits == [0.05, 0.1, 0.05, 0.1], "a backoff after each failure, doubling in a row; the deliveries start it over")
    }

    @Test("Batches: every refusal of the collector deletes the batch, whatever it names")
    func batchRefusals() {
        let rule = RefusalRule.alwaysTheEntrys
        var replay = Replay(["a", "b", "c"], rules: Self.rules(movingBackAfter: 5, maximumAttempts: 10, refusals: rule),
                            script: ["a": [Self.refusal("invalid_field", "events[0].screen", "too long", rule)],
                                     "b": [Self.refusal("too_many_events", "events", "at most 1000", rule)]])
        replay.run()
        #expect(replay.sent == ["a", "b", "c"] && replay.refused == ["a", "b"] && replay.delivered == ["c"])
        #expect(replay.waits.isEmpty)
    }

    @Test("MetricKit: a payload that is not one is deleted; a 500 is retried, counted; the rest arrive in order")
    func metricKitRefusalAndRetry() {
        let rule = RefusalRule.onlyUnreadableBytes
        var replay = Replay(["a", "b", "c"], rules: Self.rules(movingBackAfter: 5, maximumAttempts: 10, refusals: rule),
                            script: ["a": [Self.refusal("invalid_json", "body", "line 1: not JSON", rule)],
                                     "b": [Self.serverError]])
        replay.run()
        #expect(replay.sent == ["a", "b", "b", "c"])
        #expect(replay.refused == ["a"] && replay.delivered == ["b", "c"] && replay.waits == [0.05])
    }

    @Test("MetricKit: a refusal naming a part, or an older collector's nesting limit, keeps the payload and moves it back; never counted toward abandoning it")
    func metricKitRefusalKept() {
        let rule = RefusalRule.onlyUnreadableBytes
        let rules = Self.rules(movingBackAfter: 2, maximumAttempts: 2, refusals: rule)
        let namesPart = Self.refusal("invalid_field", "hangDiagnostics[0].callStackTree", "deeper than this collector reads", rule)
        var replay = Replay(["a", "b"], rules: rules,
                            script: ["a": [namesPart], "b": [Self.refusal("invalid_json", "body", "line 1: nested deeper than 512", rule)]])
        replay.run()
        #expect(replay.sent == ["a", "b", "a", "b"])
        #expect(replay.movedBack == ["a", "b"] && replay.delivered == ["a", "b"])
        #expect(replay.refused.isEmpty && replay.abandoned.isEmpty)

        // Refused fifty times: still kept (maximumAttempts is 2), then delivered.
        var stubborn = Replay(["a"], rules: rules, script: ["a": Array(repeating: namesPart, count: 50)])
        stubborn.run()
        #expect(stubborn.sent.count == 51 && stubborn.delivered == ["a"] && stubborn.abandoned.isEmpty)
    }

    @Test("MetricKit: a payload that keeps failing moves behind the others after 1 attempt, and goes after 3")
    func metricKitFailingPayload() {
        var replay = Replay(["a", "b"], rules: Self.rules(movingBackAfter: 1, maximumAttempts: 3, refusals: .onlyUnreadableBytes),
                            script: ["a": Array(repeating: Self.serverError, count: 3)])
        replay.run()
        #expect(replay.sent == ["a", "b", "a", "a"])
        #expect(replay.delivered == ["b"] && replay.abandoned == ["a"])
    }

    @Test("Which refusals blame the entry: every one for a batch; for a MetricKit payload only bytes that are not a payload",
          arguments: [
            ("invalid_json", "body", "line 3: expected ',' or '}', found ']'", true),
            ("invalid_json", nil, "the body is not valid JSON", true),
            ("invalid_json", "body", "line 1: nested deeper than 512", false),
            ("invalid_field", "hangDiagnostics[0].callStackTree", "too deep", false),
            ("too_many_payloads", "body", "more than 1000 payloads in one request", false),
            ("decompressed_too_large", "Content-Encoding", "the body decompresses to more than 16 MiB", false),
            ("unreadable_part", "crashDiagnostics[0]", "a newer collector's code", false),
          ] as [(String, String?, String, Bool)])
    func refusalRules(code: String, field: String?, message: String, metricKitDeletes: Bool) {
        #expect(RefusalRule.alwaysTheEntrys.blamesEntry(code: code, field: field, message: message))
        #expect(RefusalRule.onlyUnreadableBytes.blamesEntry(code: code, field: field, message: message) == metricKitDeletes)
    }
}
