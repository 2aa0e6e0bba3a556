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

/// How a verdict sorts an answer, for comparing in tests.
func kind(_ verdict: DeliveryQueue.Verdict) -> String {
    switch verdict {
    case .delivered: "delivered"
    case .refused: "refused"
    case .misconfigured: "misconfigured"
    case let .retry(_, _, countsAgainstBatch): countsAgainstBatch ? "retry, counted" : "retry"
    }
}

@Suite("Delivery: a wrong configuration keeps the queue", .serialized)
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
            status: 403, retryAfter: nil, body: Data(cases[11].body.utf8), batchId: "b1", now: now, maximumRetryAfter: 3600)
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
        let app = Application(router: makeCollectorRouter(store: store), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let url = URL(string: "http://127.0.0.1:\(try #require(client.port))")!
            let revoked = try DeliveryQueue(configuration: quickDelivery(batchEvents: 2), directory: folder.url, collector: url,
                                            ingestKey: "fsi_revoked", app: testApp, device: testDevice)
            let started = MonotonicClock.system.now()
            try await withDelivery(revoked) {
                for index in 0..<3 { try await revoked.append(sampleEvent(seed: UInt64(index + 1))) }
                #expect(await revoked.flush(timeout: 20) == false)
            }
            #expect(elapsed(from: started, to: MonotonicClock.system.now()) < 10,
                    "a flush should not wait out its timeout when the collector says the configuration is wrong")
            var statistics = await revoked.currentStatistics
            #expect(statistics.configurationError?.contains("HTTP 401") == true, "\(statistics.configurationError ?? "nil")")
            #expect(statistics.configurationError?.contains("revoked key") == true)
            #expect(statistics.batchesRejected == 0 && statistics.batchesDelivered == 0)
            #expect(statistics.pendingBatches == 2)
            #expect(folder.batchFiles.count == 2)
            #expect(try await store.rawEventCount(app: "shop") == 0)

            let rotated = try DeliveryQueue(configuration: quickDelivery(batchEvents: 2), directory: folder.url, collector: url,
                                            ingestKey: credentials.ingestKey, app: testApp, device: testDevice)
            await withDelivery(rotated) {
                #expect(await rotated.flush(timeout: 10))
            }
            statistics = await rotated.currentStatistics
            #expect(statistics.eventsAccepted == 3)
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
                #expect(await queue.flush(timeout: 10))
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
}
