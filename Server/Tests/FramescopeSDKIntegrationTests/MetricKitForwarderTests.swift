import Foundation
import FramescopeCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import FramescopeSDK

/// A MetricKit endpoint on loopback that answers from a script of statuses and bodies (then
/// the collector's 202) and records each payload it got, decompressed.
final class ScriptedMetricKitCollector: Sendable {
    let payloads = Locked<[String]>([])
    private let script: Locked<[(status: HTTPResponse.Status, body: String)]>

    init(_ script: [(status: HTTPResponse.Status, body: String)]) {
        self.script = Locked(script)
    }

    var application: some ApplicationProtocol {
        let router = Router()
        router.post("/v1/metrickit") { [payloads, script] request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            let text = String(decoding: try Gzip.decompress(Array(buffer: body)), as: UTF8.self)
            payloads.withLock { $0.append(text) }
            let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            let (status, answer) = next ?? (.accepted, #"{"accepted":1,"duplicates":0,"withoutFigures":0,"rejected":[],"skipped":[]}"#)
            return Response(status: status, body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }
}

/// In the isolated timing process, as the visits' delivery tests: retries race a scripted
/// collector over real HTTP.
@Suite("MetricKit forwarding: the visits' rules for Apple's payloads", .serialized,
       .enabled(if: isolatedTiming, "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --package-path Server --filter MetricKitForwarderTests"))
struct MetricKitForwarderTests {
    static let refusal = #"{"error":{"code":"invalid_json","field":"body","message":"line 1: not JSON"}}"#

    func forwarder(_ folder: TestFolder, port: Int, configuration: DeliveryConfiguration = quickDelivery(),
                   clock: ManualClock) throws -> MetricKitForwarder {
        try MetricKitForwarder(directory: folder.url, collector: URL(string: "http://127.0.0.1:\(port)")!, ingestKey: "fsi_mk",
                               configuration: configuration, clock: clock)
    }

    @Test("The collector's refusal deletes that payload alone; a 500 is retried, counted in the file name; the rest arrive in order")
    func refusalAndRetry() async throws {
        let folder = try TestFolder()
        let collector = ScriptedMetricKitCollector([(.badRequest, Self.refusal), (.internalServerError, "")])
        try await collector.application.test(.live) { client in
            let port = try #require(client.port)
            let clock = ManualClock()
            let forwarder = try forwarder(folder, port: port, clock: clock)
            for name in ["a", "b", "c"] { try forwarder.enqueue(Data(#"{"payload":"\#(name)"}"#.utf8)) }
            let loop = Task { await forwarder.run() }
            let (emptied, _) = await stepping(clock) { await forwarder.flush(timeout: 20) }
            #expect(emptied)
            let statistics = await forwarder.currentStatistics
            await forwarder.stop()
            await loop.value
            // a refused; b failed once (500) and then went; c went.
            #expect(collector.payloads.withLock { $0 } == [#"{"payload":"a"}"#, #"{"payload":"b"}"#, #"{"payload":"b"}"#,
                                                          #"{"payload":"c"}"#])
            #expect(statistics.payloadsRefused == 1 && statistics.payloadsDelivered == 2 && statistics.retries == 1)
            #expect(statistics.pendingPayloads == 0 && statistics.configurationError == nil)
        }
    }

    @Test("401 and 403 keep every payload and say what to check; the right key then delivers them")
    func wrongKeyKeepsEverything() async throws {
        let folder = try TestFolder()
        let unauthorized = #"{"error":{"code":"unauthorized","field":"Authorization","message":"unknown or revoked key"}}"#
        let collector = ScriptedMetricKitCollector([(.unauthorized, unauthorized), (.forbidden, unauthorized)])
        try await collector.application.test(.live) { client in
            let port = try #require(client.port)
            let clock = ManualClock()
            let forwarder = try forwarder(folder, port: port, clock: clock)
            try forwarder.enqueue(Data(#"{"payload":"a"}"#.utf8))
            try forwarder.enqueue(Data(#"{"payload":"b"}"#.utf8))
            let loop = Task { await forwarder.run() }
            // The flush ends at once on the wrong configuration, with both payloads kept.
            let (first, _) = await stepping(clock) { await forwarder.flush(timeout: 20) }
            #expect(!first)
            var statistics = await forwarder.currentStatistics
            #expect(statistics.pendingPayloads == 2 && statistics.payloadsRefused == 0)
            #expect(statistics.configurationError?.contains("HTTP 401") == true, "\(statistics.configurationError ?? "")")
            // The next tries (a 403, then the script's end: 202s) deliver both.
            let (second, _) = await stepping(clock) { await forwarder.flush(timeout: 20) }
            statistics = await forwarder.currentStatistics
            if !second {   // the 403 ended this flush too
                let (third, _) = await stepping(clock) { await forwarder.flush(timeout: 20) }
                #expect(third)
                statistics = await forwarder.currentStatistics
            }
            await forwarder.stop()
            await loop.value
            #expect(statistics.pendingPayloads == 0 && statistics.payloadsDelivered == 2 && statistics.configurationError == nil)
            #expect(collector.payloads.withLock { $0 }.suffix(2) == [#"{"payload":"a"}"#, #"{"payload":"b"}"#])
        }
    }

    @Test("A refusal that names a part, or a limit of the collector, keeps the payload: it moves behind the others, is sent again and delivered; never deleted for it")
    func refusalNotThePayloadsKeepsIt() async throws {
        let folder = try TestFolder()
        let namesPart = #"{"error":{"code":"invalid_field","field":"hangDiagnostics[0].callStackTree","message":"deeper than this collector reads"}}"#
        let oldCollectorDepth = #"{"error":{"code":"invalid_json","field":"body","message":"line 1: nested deeper than 512"}}"#
        let collector = ScriptedMetricKitCollector([(.badRequest, namesPart), (.badRequest, oldCollectorDepth)])
        try await collector.application.test(.live) { client in
            let port = try #require(client.port)
            let clock = ManualClock()
            var configuration = quickDelivery()
            configuration.attemptsBeforeMovingBack = 2
            configuration.maximumAttempts = 2
            let forwarder = try forwarder(folder, port: port, configuration: configuration, clock: clock)
            try forwarder.enqueue(Data(#"{"payload":"a"}"#.utf8))
            try forwarder.enqueue(Data(#"{"payload":"b"}"#.utf8))
            let loop = Task { await forwarder.run() }
            let (emptied, _) = await stepping(clock) { await forwarder.flush(timeout: 20) }
            let statistics = await forwarder.currentStatistics
            await forwarder.stop()
            await loop.value
            #expect(emptied)
            // a is refused for a part (kept, moved back); b is refused by an older collector's
            // nesting limit (kept); both are sent again, a first (oldest of equals), and
            // delivered. maximumAttempts is 2: counted failures would have deleted them.
            #expect(collector.payloads.withLock { $0 } == [#"{"payload":"a"}"#, #"{"payload":"b"}"#, #"{"payload":"a"}"#,
                                                          #"{"payload":"b"}"#])
            #expect(statistics.refusalsKept == 2 && statistics.payloadsDelivered == 2)
            #expect(statistics.payloadsRefused == 0 && statistics.payloadsAbandoned == 0 && statistics.pendingPayloads == 0)
        }
    }

    @Test("A payload that keeps failing moves behind the others, and goes after maximumAttempts")
    func failingPayloadMovesBack() async throws {
        let folder = try TestFolder()
        let collector = ScriptedMetricKitCollector(Array(repeating: (.internalServerError, ""), count: 1)
                                                   + [(.accepted, #"{"accepted":1,"duplicates":0,"withoutFigures":0,"rejected":[]}"#)]
                                                   + Array(repeating: (.internalServerError, ""), count: 2))
        try await collector.application.test(.live) { client in
            let port = try #require(client.port)
            let clock = ManualClock()
            var configuration = quickDelivery()
            configuration.attemptsBeforeMovingBack = 1
            configuration.maximumAttempts = 3
            let forwarder = try forwarder(folder, port: port, configuration: configuration, clock: clock)
            try forwarder.enqueue(Data(#"{"payload":"a"}"#.utf8))
            try forwarder.enqueue(Data(#"{"payload":"b"}"#.utf8))
            let loop = Task { await forwarder.run() }
            let (emptied, _) = await stepping(clock) { await forwarder.flush(timeout: 20) }
            let statistics = await forwarder.currentStatistics
            await forwarder.stop()
            await loop.value
            #expect(emptied)
            // a fails (500) and moves back; b goes; a fails twice more: 3 attempts, abandoned.
            #expect(collector.payloads.withLock { $0 } == [#"{"payload":"a"}"#, #"{"payload":"b"}"#, #"{"payload":"a"}"#,
                                                          #"{"payload":"a"}"#])
            #expect(statistics.payloadsDelivered == 1 && statistics.payloadsAbandoned == 1)
        }
    }
}

/// Which refusals of the collector delete a MetricKit payload (issue 43, item 4).
@Suite("MetricKit forwarding: a payload is deleted only when its bytes are not a payload")
struct MetricKitRefusalRuleTests {
    static func verdict(_ status: Int, _ body: String) -> UploadVerdict<MetricKitForwarder.Answer> {
        UploadVerdict.judge(status: status, retryAfter: nil, body: Data(body.utf8), now: Date(), maximumRetryAfter: 3600,
                            what: "an answer") { _ in nil }
    }

    static func error(_ code: String, _ field: String?, _ message: String) -> String {
        #"{"error":{"code":"\#(code)","field":\#(field.map { "\"\($0)\"" } ?? "null"),"message":"\#(message)"}}"#
    }

    @Test("invalid_json naming the body deletes; a part named, a limit, an unknown code or an older collector's nesting limit keeps",
          arguments: [
            (400, error("invalid_json", "body", "line 3: expected ',' or '}', found ']'"), true),
            (400, error("invalid_json", nil, "the body is not valid JSON"), true),
            (400, error("invalid_json", "body", "line 1: nested deeper than 512"), false),
            (400, error("invalid_field", "hangDiagnostics[0].callStackTree", "too deep"), false),
            (400, error("too_many_payloads", "body", "more than 1000 payloads in one request"), false),
            (413, error("decompressed_too_large", "Content-Encoding", "the body decompresses to more than 16 MiB"), false),
            (422, error("unreadable_part", "crashDiagnostics[0]", "a newer collector's code"), false),
          ])
    func rule(status: Int, body: String, deletes: Bool) {
        guard case let .refused(refusedStatus, error) = Self.verdict(status, body) else {
            Issue.record("HTTP \(status) with the collector's error should be a refusal")
            return
        }
        #expect(refusedStatus == status)
        #expect(MetricKitForwarder.isPayloadsFault(error) == deletes, "\(error)")
    }
}

@Suite("Delivery: visits a killed process left go out under its envelope")
struct EnvelopeRecoveryTests {
    @Test("Visits measured under version 1.0.0 at rate 0.5 and left in the journal are sealed as such by the next launch, whatever its own")
    func recoveredUnderTheirEnvelope() async throws {
        let folder = try TestFolder()
        let before = try DeliveryQueue(configuration: quickDelivery(), directory: folder.url,
                                       collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_x",
                                       app: testApp, device: testDevice, sampleRate: 0.5)
        try await before.append(sampleEvent(seed: 1))
        try await before.append(sampleEvent(seed: 2))
        await before.stop()   // as if killed: the two visits stay in the journal
        #expect(folder.batchFiles.isEmpty)

        let newer = AppInfo(version: "2.0.0", build: "2")
        let after = try DeliveryQueue(configuration: quickDelivery(), directory: folder.url,
                                      collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_x",
                                      app: newer, device: testDevice, sampleRate: 0.25)
        let name = try #require(folder.batchFiles.first)
        let body = try Gzip.decompress(Array(try Data(contentsOf: folder.url.appendingPathComponent(name))))
        let batch = try JSONDecoder().decode(EventBatch.self, from: Data(body))
        #expect(batch.app == testApp && batch.sampleRate == 0.5 && batch.events.count == 2)
        // This launch's visits go out under this launch's envelope.
        try await after.append(sampleEvent(seed: 3))
        try await after.seal()
        let second = try #require(folder.batchFiles.last)
        let secondBatch = try JSONDecoder().decode(EventBatch.self, from: Data(
            try Gzip.decompress(Array(try Data(contentsOf: folder.url.appendingPathComponent(second))))))
        #expect(secondBatch.app == newer && secondBatch.sampleRate == 0.25 && secondBatch.events.count == 1)
        await after.stop()
    }
}
