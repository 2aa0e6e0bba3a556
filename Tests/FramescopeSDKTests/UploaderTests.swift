import FramescopeCore
import Foundation
import Testing
@testable import FramescopeSDK
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A clock on which every wait of at most `passing` seconds passes at once, moving the clock
/// on by that wait and recording it; a longer one (a flush's timeout) lasts until it is
/// cancelled. An uploader's tests then take no time and see the exact waits it chose.
final class InstantClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Locked((now: Duration.zero, waits: [Double]()))
    private let passing: Duration

    /// A clock on which waits up to `passing` seconds pass at once (an hour by default).
    init(passing: Double = 3600) {
        self.passing = .seconds(passing)
    }

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }
    /// The waits that passed, in seconds, in order.
    var waits: [Double] { state.withLock { $0.waits } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let wait = now.duration(to: deadline)
        guard wait <= passing else {
            // Until cancelled: an AsyncStream's iteration ends when its task is cancelled.
            let (never, continuation) = AsyncStream<Never>.makeStream()
            for await _ in never {}
            continuation.finish()
            throw CancellationError()
        }
        state.withLock { state in
            state.now = max(state.now, deadline.offset)
            state.waits.append(Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
        }
        await Task.yield()
        try Task.checkCancellation()
    }
}

/// A transport that answers as a collector would, from a script of statuses and bodies
/// (then `otherwise`), and records each body it got, decompressed.
final class ScriptedTransport: Sendable {
    let sent = Locked<[String]>([])
    private let script: Locked<[(status: Int, body: String)]>
    private let otherwise: @Sendable (String) -> (status: Int, body: String)

    init(_ script: [(status: Int, body: String)], otherwise: @escaping @Sendable (String) -> (status: Int, body: String)) {
        self.script = Locked(script)
        self.otherwise = otherwise
    }

    struct NoURL: Error {}

    var transport: UploadTransport {
        UploadTransport { [sent, script, otherwise] request, body in
            let text = String(decoding: try Gzip.decompress(Array(body)), as: UTF8.self)
            sent.withLock { $0.append(text) }
            let (status, answer) = script.withLock { $0.isEmpty ? nil : $0.removeFirst() } ?? otherwise(text)
            guard let url = request.url,
                  let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:]) else {
                throw NoURL()
            }
            return (Data(answer.utf8), response)
        }
    }
}

/// The one upload loop (``Uploader``) with each of its queues, its answers given by a
/// function and its waits passing at once: what the real-HTTP suites of the Server package
/// check, without a network, a clock or the isolated timing process.
@Suite("Uploader: the one loop, driven without a network or a clock", .timeLimit(.minutes(1)))
struct UploaderTests {
    static let collector = URL(string: "http://collector.test") ?? URL(fileURLWithPath: "/")
    static let accepted = #"{"accepted":1,"duplicates":0,"withoutFigures":0,"rejected":[]}"#

    static func configuration(movingBackAfter: Int = 5, maximumAttempts: Int = 10) -> DeliveryConfiguration {
        var configuration = DeliveryConfiguration(maximumBatchEvents: 1, initialRetryDelay: 0.05, maximumRetryDelay: 0.2,
                                                  requestTimeout: 5)
        configuration.attemptsBeforeMovingBack = movingBackAfter
        configuration.maximumAttempts = maximumAttempts
        return configuration
    }

    final class Folder: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-uploader-\(UUID().uuidString)")
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// Runs `forwarder`'s loop for the duration of `body`.
    static func running<R>(_ forwarder: MetricKitForwarder, _ body: () async throws -> R) async rethrows -> R {
        let loop = Task { await forwarder.run() }
        let result = try await body()
        await forwarder.stop()
        await loop.value
        return result
    }

    @Test("MetricKit: a payload that is not one is deleted; a 500 is retried after one backoff; the rest arrive in order")
    func metricKitRefusalAndRetry() async throws {
        let folder = Folder()
        let refusal = #"{"error":{"code":"invalid_json","field":"body","message":"line 1: not JSON"}}"#
        let answers = ScriptedTransport([(400, refusal), (500, "")]) { _ in (202, Self.accepted) }
        let clock = InstantClock()
        let lines = Locked<[String]>([])
        let forwarder = try MetricKitForwarder(directory: folder.url, collector: Self.collector, ingestKey: "fsi_mk",
                                               configuration: Self.configuration(), log: { line in lines.withLock { $0.append(line) } },
                                               clock: clock, transport: answers.transport)
        for name in ["a", "b", "c"] { try forwarder.enqueue(Data(#"{"payload":"\#(name)"}"#.utf8)) }
        let emptied = await Self.running(forwarder) { await forwarder.flush(timeout: 86_400) }
        #expect(emptied)
        #expect(answers.sent.withLock { $0 } == [#"{"payload":"a"}"#, #"{"payload":"b"}"#, #"{"payload":"b"}"#, #"{"payload":"c"}"#])
        let statistics = await forwarder.currentStatistics
        #expect(statistics.payloadsRefused == 1 && statistics.payloadsDelivered == 2 && statistics.retries == 1)
        #expect(statistics.uploadAttempts == 4 && statistics.pendingPayloads == 0 && statistics.configurationError == nil)
        #expect(clock.waits.count == 1 && clock.waits.allSatisfy { $0 >= 0.025 && $0 <= 0.05 }, "\(clock.waits)")
        let logged = lines.withLock { $0 }
        #expect(logged.count == 1 && logged.first?.hasPrefix("HTTP 400: the collector refused MetricKit payload ") == true
                && logged.first?.hasSuffix("; it is deleted: invalid_json (body): line 1: not JSON") == true, "\(logged)")
    }

    @Test("MetricKit: a 401 keeps every payload and ends the flush at once; the right answer then delivers them and says so")
    func metricKitWrongKey() async throws {
        let folder = Folder()
        let unauthorized = #"{"error":{"code":"unauthorized","field":"Authorization","message":"unknown or revoked key"}}"#
        let answers = ScriptedTransport([(401, unauthorized)]) { _ in (202, Self.accepted) }
        let lines = Locked<[String]>([])
        // No wait passes by itself: the backoff after the 401 lasts until the next flush.
        let forwarder = try MetricKitForwarder(directory: folder.url, collector: Self.collector, ingestKey: "fsi_mk",
                                               configuration: Self.configuration(), log: { line in lines.withLock { $0.append(line) } },
                                               clock: InstantClock(passing: 0), transport: answers.transport)
        try forwarder.enqueue(Data(#"{"payload":"a"}"#.utf8))
        try forwarder.enqueue(Data(#"{"payload":"b"}"#.utf8))
        await Self.running(forwarder) {
            #expect(await forwarder.flush(timeout: 86_400) == false)
            let kept = await forwarder.currentStatistics
            #expect(kept.pendingPayloads == 2 && kept.payloadsRefused == 0 && kept.payloadsAbandoned == 0)
            #expect(kept.configurationError?.hasPrefix("HTTP 401: unauthorized (Authorization): unknown or revoked key") == true,
                    "\(kept.configurationError ?? "nil")")
            #expect(await forwarder.flush(timeout: 86_400))
            let delivered = await forwarder.currentStatistics
            #expect(delivered.payloadsDelivered == 2 && delivered.pendingPayloads == 0 && delivered.configurationError == nil)
            #expect(MetricKitForwarder.entries(in: forwarder.folder).isEmpty)
        }
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2, "\(logged)")
        #expect(logged.first?.hasSuffix("(every MetricKit payload is kept and retried with backoff)") == true)
        #expect(logged.last == "the collector accepts MetricKit payloads again")
    }

    @Test("MetricKit: a refusal naming a part keeps the payload, moved back in its file name, and sends it again")
    func metricKitRefusalKept() async throws {
        let folder = Folder()
        let namesPart = #"{"error":{"code":"invalid_field","field":"hangDiagnostics[0].callStackTree","message":"too deep"}}"#
        let folderName = folder.url.appendingPathComponent(MetricKitForwarder.folderName)
        // What the payload's file name said when it was sent again.
        let attemptsWhenResent = Locked<[[Int]]>([])
        let answers = ScriptedTransport([(400, namesPart)]) { _ in
            attemptsWhenResent.withLock { $0.append(MetricKitForwarder.entries(in: folderName).map(\.attempts)) }
            return (202, Self.accepted)
        }
        let forwarder = try MetricKitForwarder(directory: folder.url, collector: Self.collector, ingestKey: "fsi_mk",
                                               configuration: Self.configuration(movingBackAfter: 2, maximumAttempts: 2),
                                               clock: InstantClock(), transport: answers.transport)
        try forwarder.enqueue(Data(#"{"payload":"a"}"#.utf8))
        let emptied = await Self.running(forwarder) { await forwarder.flush(timeout: 86_400) }
        #expect(emptied)
        #expect(attemptsWhenResent.withLock { $0 } == [[2]], "moved behind the others: its count is attemptsBeforeMovingBack, no more")
        let statistics = await forwarder.currentStatistics
        #expect(statistics.refusalsKept == 1 && statistics.payloadsDelivered == 1)
        #expect(statistics.payloadsRefused == 0 && statistics.payloadsAbandoned == 0 && statistics.pendingPayloads == 0)
        #expect(answers.sent.withLock { $0.count } == 2)
    }

    @Test("Batches: one the collector keeps failing on moves behind the others after 2 attempts and is abandoned after 4")
    func poisonBatch() async throws {
        let folder = Folder()
        struct Probe: Decodable {
            var batchId: String
            var events: [Event]
            struct Event: Decodable { var screen: String }
        }
        let answers = ScriptedTransport([]) { text in
            guard let batch = try? JSONDecoder().decode(Probe.self, from: Data(text.utf8)) else { return (400, "") }
            if batch.events.contains(where: { $0.screen == "Poison" }) { return (500, "upstream crashed") }
            return (202, #"{"batchId":"\#(batch.batchId)","accepted":\#(batch.events.count),"duplicate":false,"rejected":[]}"#)
        }
        let lines = Locked<[String]>([])
        let queue = try DeliveryQueue(configuration: Self.configuration(movingBackAfter: 2, maximumAttempts: 4), directory: folder.url,
                                      collector: Self.collector, ingestKey: "fsi_test",
                                      app: AppInfo(id: "shop", version: "1.0.0", build: "1"),
                                      device: DeviceInfo(model: "TestDevice", osName: "Linux", osVersion: "6.1", maxRefreshRate: 60),
                                      log: { line in lines.withLock { $0.append(line) } }, clock: InstantClock(),
                                      transport: answers.transport)
        for screen in ["Poison", "Feed", "Search"] {
            try await queue.append(ScreenVisitEvent(screen: screen, startedAt: "2026-11-29T05:00:00Z", duration: 2,
                                                    context: VisitContext(network: .wifi, lowPowerMode: false),
                                                    report: FrameReport(), motion: nil))
        }
        let loop = Task { await queue.run() }
        #expect(await queue.flush(timeout: 86_400))
        await queue.stop()
        await loop.value
        let order = answers.sent.withLock { $0 }.map { text in
            (try? JSONDecoder().decode(Probe.self, from: Data(text.utf8)))?.events.first?.screen ?? "?"
        }
        #expect(order == ["Poison", "Poison", "Feed", "Search", "Poison", "Poison"])
        let statistics = await queue.currentStatistics
        #expect(statistics.batchesMovedBack == 1 && statistics.batchesAbandoned == 1 && statistics.eventsAbandoned == 1)
        #expect(statistics.batchesDelivered == 2 && statistics.eventsAccepted == 2 && statistics.pendingBatches == 0)
        #expect(statistics.retries == 4 && statistics.uploadAttempts == 6)
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2, "\(logged)")
        #expect(logged.first?.contains("moved to the back of the queue after 2 failed attempts (the latest: HTTP 500") == true)
        #expect(logged.last?.contains("abandoned after 4 failed attempts") == true && logged.last?.hasSuffix("its 1 visits are deleted") == true)
    }
}
