import Foundation
import FramescopeCollector
import FramescopeCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import FramescopeSDK

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A collector stand-in that answers 500 to every batch holding a visit of the screen
/// "Poison" (as a proxy does when the collector behind it crashes on that batch) and 202 to
/// the others; it records each request's screens and status, in order.
final class PoisonCollector: Sendable {
    let seen = Locked<[(screens: [String], batchId: String, status: Int)]>([])

    var application: some ApplicationProtocol {
        let router = Router()
        router.post("/v1/events") { [seen] request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            let batch = try JSONDecoder().decode(EventBatch.self, from: Data(try Gzip.decompress(Array(buffer: body))))
            let screens = batch.events.map(\.screen)
            let poisoned = screens.contains("Poison")
            seen.withLock { $0.append((screens, batch.batchId, poisoned ? 500 : 202)) }
            if poisoned {
                return Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "upstream crashed")))
            }
            let answer = #"{"batchId":"\#(batch.batchId)","accepted":\#(batch.events.count),"duplicate":false,"rejected":[]}"#
            return Response(status: .accepted, body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// How many requests carried the poison batch.
    var poisonAttempts: Int {
        seen.withLock { $0.filter { $0.status == 500 }.count }
    }
}

/// How a verdict sorts an answer, for comparing in tests.
func kind(_ verdict: DeliveryQueue.Verdict) -> String {
    switch verdict {
    case .delivered: "delivered"
    case .refused: "refused"
    case .misconfigured: "misconfigured"
    case let .retry(_, _, countsAgainstBatch): countsAgainstBatch ? "retry, counted" : "retry"
    }
}

/// In the isolated timing process (scripts/test): its retries race a scripted collector over
/// real HTTP, and in the whole parallel run on two cores a connection refused under load
/// added a backoff step the assertions do not expect.
@Suite("Delivery: a wrong configuration keeps the queue; a bad batch cannot block it", .serialized,
       .enabled(if: isolatedTiming, "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --package-path Server --filter DeliveryFailureTests"))
struct DeliveryFailureTests {
    // MARK: - Item 12: which answers delete a batch

    @Test("Statuses: the collector's 2xx answer delivers, its 400/413/422 refuse the batch, 401/403/404/410 and unreadable 2xx keep it")
    func statusVerdicts() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let collectorError = #"{"error":{"code":"invalid_field","field":"events","message":"a batch needs at least one event"}}"#
        let answer = #"{"batchId":"b1","accepted":3,"duplicate":false,"rejected":[]}"#
        let proxyPage = "<html><body>nginx</body></html>"
        let cases: [(status: Int, body: String, expected: String)] = [
            (202, answer, "delivered"),
            (200, answer, "delivered"),
            (202, #"{"batchId":"another","accepted":3,"duplicate":false,"rejected":[]}"#, "misconfigured"),
            (200, "<html>Welcome to the hotel Wi-Fi</html>", "misconfigured"),
            (204, "", "misconfigured"),
            (400, collectorError, "refused"),
            (413, collectorError, "refused"),
            (422, collectorError, "refused"),
            (400, proxyPage, "retry, counted"),
            (413, proxyPage, "retry, counted"),
            // The envelope (what every batch shares) refused: the SDK's configuration, or a
            // collector older than the SDK (an id-less app, a sample rate); every batch is kept.
            (400, #"{"error":{"code":"invalid_field","field":"app.id","message":"app.id is missing"}}"#, "misconfigured"),
            (400, #"{"error":{"code":"invalid_field","field":"sampleRate","message":"sampleRate must be above 0"}}"#, "misconfigured"),
            (400, #"{"error":{"code":"invalid_field","field":"device.model","message":"device.model has a control character"}}"#,
             "misconfigured"),
            (401, #"{"error":{"code":"unauthorized","field":"Authorization","message":"unknown or revoked key"}}"#, "misconfigured"),
            (403, #"{"error":{"code":"wrong_app","field":"app.id","message":"this ingest key belongs to app 'shop', not 'x'"}}"#,
             "misconfigured"),
            (403, proxyPage, "misconfigured"),
            (404, proxyPage, "misconfigured"),
            (410, "", "misconfigured"),
            (405, proxyPage, "misconfigured"),
            (301, "", "misconfigured"),
            (408, "", "retry, counted"),
            (429, "", "retry"),
            (503, "", "retry"),
            (500, "", "retry, counted"),
            (502, proxyPage, "retry, counted"),
            (504, "", "retry, counted"),
        ]
        for (status, body, expected) in cases {
            let verdict = DeliveryQueue.verdict(status: status, retryAfter: nil, body: Data(body.utf8), batchId: "b1", now: now,
                                                maximumRetryAfter: 3600)
            #expect(kind(verdict) == expected, "HTTP \(status) \(body.prefix(40))")
        }
        let wrongApp = DeliveryQueue.verdict(
            status: 403, retryAfter: nil, body: Data(cases[14].body.utf8), batchId: "b1", now: now, maximumRetryAfter: 3600)
        guard case let .misconfigured(message) = wrongApp else { return }
        #expect(message.contains("HTTP 403") && message.contains("wrong_app") && message.contains("app.id")
                && message.contains("belongs to app 'shop'"), "\(message)")
    }

    @Test("Network failures: a collector out of reach counts against no batch; a timeout or a lost connection does")
    func networkVerdicts() {
        #expect(kind(DeliveryQueue.verdict(for: URLError(.cannotConnectToHost))) == "retry")
        #expect(kind(DeliveryQueue.verdict(for: URLError(.cannotFindHost))) == "retry")
        #expect(kind(DeliveryQueue.verdict(for: URLError(.notConnectedToInternet))) == "retry")
        #expect(kind(DeliveryQueue.verdict(for: URLError(.timedOut))) == "retry, counted")
        #expect(kind(DeliveryQueue.verdict(for: URLError(.networkConnectionLost))) == "retry, counted")
    }

    @Test("A wrong ingest key (401) keeps every batch, sets configurationError and ends a flush early; the right key then delivers all")
    func wrongKeyKeepsTheQueue() async throws {
        let folder = try TestFolder()
        let storeFolder = try TestFolder()
        let store = try SQLiteStore(path: storeFolder.url.appendingPathComponent("c.sqlite").path)
        let credentials = try await store.createApp(name: "Shop", id: "shop")
        let app = Application(router: Collector(store: store).router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let url = URL(string: "http://127.0.0.1:\(try #require(client.port))")!
            let clock = ManualClock()
            let revoked = try DeliveryQueue(configuration: quickDelivery(batchEvents: 2), directory: folder.url, collector: url,
                                            ingestKey: "fsi_revoked", app: testApp, device: testDevice, clock: clock)
            try await withDelivery(revoked) {
                for index in 0..<3 { try await revoked.append(sampleEvent(seed: UInt64(index + 1))) }
                let (delivered, steps) = await stepping(clock) { await revoked.flush(timeout: 20) }
                #expect(delivered == false)
                // The flush ends at the first 401, long before its 20 s on the clock (a step
                // or two of backoff may pass first, when a 401 answered a batch sealed before
                // the flush began).
                #expect(clock.seconds < 1,
                        "a flush should not wait out its timeout when the collector says the configuration is wrong: \(steps)")
            }
            var statistics = await revoked.currentStatistics
            #expect(statistics.configurationError?.contains("HTTP 401") == true, "\(statistics.configurationError ?? "nil")")
            #expect(statistics.configurationError?.contains("revoked key") == true)
            #expect(statistics.batchesRejected == 0 && statistics.batchesAbandoned == 0 && statistics.batchesDelivered == 0)
            #expect(statistics.pendingBatches == 2)
            #expect(folder.batchFiles.count == 2)
            #expect(try await store.rawEventCount(app: "shop") == 0)

            let rotated = try DeliveryQueue(configuration: quickDelivery(batchEvents: 2), directory: folder.url, collector: url,
                                            ingestKey: credentials.ingestKey, app: testApp, device: testDevice)
            await withDelivery(rotated) {
                #expect(await rotated.flush(timeout: 60))
            }
            statistics = await rotated.currentStatistics
            #expect(statistics.eventsAccepted == 3, "\(statistics)")
            #expect(statistics.configurationError == nil)
            #expect(try await store.rawEventCount(app: "shop") == 3)
        }
    }

    @Test("A 2xx whose body is not the collector's answer is not a delivery: the batch stays and is sent again")
    func unreadableSuccessIsNotDelivery() async throws {
        let folder = try TestFolder()
        let collector = ScriptedCollector(answers: [(.ok, nil, "<html>Welcome to the hotel Wi-Fi</html>")])
        try await collector.application.test(.live) { client in
            let port = try #require(client.port)
            let queue = try DeliveryQueue(configuration: quickDelivery(), directory: folder.url,
                                          collector: URL(string: "http://127.0.0.1:\(port)")!, ingestKey: "fsi_test",
                                          app: testApp, device: testDevice)
            try await withDelivery(queue) {
                for index in 0..<2 { try await queue.append(sampleEvent(seed: UInt64(index + 1))) }
                #expect(await queue.flush(timeout: 10) == false)
                let error = await queue.currentStatistics.configurationError
                #expect(error?.contains("not the collector's answer") == true, "\(error ?? "nil")")
                #expect(folder.batchFiles.count == 1)
                #expect(await queue.flush(timeout: 60))
            }
            let seen = collector.seen.withLock { $0 }
            #expect(seen.count == 2)
            #expect(Set(seen.map(\.batchId)).count == 1)
            let statistics = await queue.currentStatistics
            #expect(statistics.batchesDelivered == 1)
            #expect(statistics.eventsAccepted == 2)
            #expect(statistics.configurationError == nil)
            #expect(folder.batchFiles.isEmpty)
        }
    }

    // MARK: - Item 13: a batch that keeps failing

    @Test("A batch the collector keeps failing on moves behind the others after N attempts and is abandoned after M")
    func poisonBatchMovesBackThenIsAbandoned() async throws {
        let folder = try TestFolder()
        let collector = PoisonCollector()
        try await collector.application.test(.live) { client in
            var configuration = quickDelivery(batchEvents: 1)
            configuration.attemptsBeforeMovingBack = 2
            configuration.maximumAttempts = 4
            let clock = ManualClock()
            let queue = try DeliveryQueue(configuration: configuration, directory: folder.url,
                                          collector: URL(string: "http://127.0.0.1:\(try #require(client.port))")!,
                                          ingestKey: "fsi_test", app: testApp, device: testDevice, clock: clock)
            try await withDelivery(queue) {
                for (index, screen) in ["Poison", "Feed", "Search"].enumerated() {
                    try await queue.append(sampleEvent(screen: screen, seed: UInt64(index + 1)))
                }
                let (delivered, steps) = await stepping(clock) { await queue.flush(timeout: 20) }
                #expect(delivered)
                // A backoff after each of the four 500s (the first may be cut short by the
                // flush, if it came first), none longer than maximumRetryDelay.
                #expect((3...4).contains(steps.count) && steps.allSatisfy { $0 <= 0.2 }, "\(steps)")
            }
            let order = collector.seen.withLock { $0.map { $0.screens.first ?? "" } }
            #expect(order == ["Poison", "Poison", "Feed", "Search", "Poison", "Poison"])
            let statistics = await queue.currentStatistics
            #expect(statistics.batchesMovedBack == 1)
            #expect(statistics.batchesAbandoned == 1)
            #expect(statistics.eventsAbandoned == 1)
            #expect(statistics.batchesDelivered == 2)
            #expect(statistics.lastError?.contains("abandoned") == true, "\(statistics.lastError ?? "nil")")
            #expect(folder.batchFiles.isEmpty)
        }
    }

    @Test("Failed attempts survive a restart: the next process abandons the batch after the attempts left")
    func attemptsSurviveRestart() async throws {
        let folder = try TestFolder()
        let collector = PoisonCollector()
        try await collector.application.test(.live) { client in
            let url = URL(string: "http://127.0.0.1:\(try #require(client.port))")!
            var configuration = quickDelivery()
            configuration.maximumAttempts = 1000
            let clock = ManualClock()
            let first = try DeliveryQueue(configuration: configuration, directory: folder.url, collector: url,
                                          ingestKey: "fsi_test", app: testApp, device: testDevice, clock: clock)
            try await withDelivery(first) {
                try await first.append(sampleEvent(screen: "Poison"))
                #expect(await stepping(clock) { await first.flush(timeout: 0.5) } .result == false)
            }
            let attempts = collector.poisonAttempts
            #expect(attempts >= 1)
            #expect(folder.batchFiles.count == 1)
            #expect(folder.batchFiles.first?.contains(".attempts-\(attempts).") == true, "\(folder.batchFiles)")

            configuration.maximumAttempts = attempts + 1
            configuration.attemptsBeforeMovingBack = attempts + 1
            let second = try DeliveryQueue(configuration: configuration, directory: folder.url, collector: url,
                                           ingestKey: "fsi_test", app: testApp, device: testDevice)
            await withDelivery(second) {
                #expect(await second.flush(timeout: 60))
            }
            #expect(collector.poisonAttempts == attempts + 1)
            #expect(await second.currentStatistics.batchesAbandoned == 1)
            #expect(folder.batchFiles.isEmpty)
        }
    }

    @Test("The next batch: oldest first among those under N failures; behind them, the fewest failures first")
    func nextBatchOrder() {
        func batch(_ id: String, _ sequence: Int, attempts: Int) -> DiskQueue.Batch {
            DiskQueue.Batch(url: URL(fileURLWithPath: "/q/\(id)"), batchId: id, first: sequence, last: sequence, bytes: 10,
                            attempts: attempts)
        }
        let batches = [batch("a", 1, attempts: 6), batch("b", 2, attempts: 5), batch("c", 3, attempts: 4), batch("d", 4, attempts: 0)]
        #expect(DeliveryQueue.nextBatch(in: batches, movingBackAfter: 5)?.batchId == "c")
        #expect(DeliveryQueue.nextBatch(in: batches, movingBackAfter: 4)?.batchId == "d")
        #expect(DeliveryQueue.nextBatch(in: Array(batches.prefix(2)), movingBackAfter: 5)?.batchId == "b")
        #expect(DeliveryQueue.nextBatch(in: batches, movingBackAfter: 7)?.batchId == "a")
        #expect(DeliveryQueue.nextBatch(in: [], movingBackAfter: 5) == nil)
    }

    @Test("Failed attempts live in the batch's file name and survive a reopen; counting one syncs the folder after the rename")
    func attemptsInFileName() throws {
        let folder = try TestFolder()
        var disk = DiskQueue(directory: folder.url)
        try disk.open()
        var sealed: [DiskQueue.Batch] = []
        for index in 1...3 {
            _ = try disk.append(Array(#"{"screen":"S\#(index)"}"#.utf8))
            sealed.append(try #require(try disk.seal(batchId: "b\(index)") { _ in Array("[]".utf8) }))
        }
        var first = sealed[0]
        for _ in 0..<2 {
            let syncs = disk.directorySyncs
            first = try disk.recordFailedAttempt(first)
            #expect(disk.directorySyncs == syncs + 1)
        }
        #expect(first.attempts == 2)
        #expect(folder.batchFiles.first == "batch-000000000001-000000000001-b1.attempts-2.json.gz")
        disk.close()

        disk = DiskQueue(directory: folder.url)
        try disk.open()
        #expect(disk.batches.map(\.batchId) == ["b1", "b2", "b3"])
        #expect(disk.batches.map(\.attempts) == [2, 0, 0])
        #expect(try Gzip.decompress(try #require(disk.body(of: disk.batches[0]))) == Array("[]".utf8))
        // Over the bound, the oldest visits go first, whatever their attempts.
        let dropped = disk.dropOldest(toFit: disk.totalBytes - 1, keeping: nil)
        #expect(dropped.map(\.batchId) == ["b1"])
        #expect(folder.batchFiles.count == 2)
    }
}
