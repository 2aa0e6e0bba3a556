import Crypto
import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import Logging
import Testing

/// Webhook delivery against a real receiver: a Hummingbird server on 127.0.0.1, port 0.
/// Its attempts race real timeouts of 1 to 5 s on a receiver in this process, so it runs in
/// the isolated timing process (scripts/test runs it after the main run with
/// `FRAMESCOPE_ISOLATED_TIMING=1`; beside the whole run the cooperative pool is starved).
@Suite("Webhook delivery", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_ISOLATED_TIMING"] != nil,
                "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --package-path Server --filter WebhookDeliveryTests"))
struct WebhookDeliveryTests {
    /// What the receiver got: each request's headers and body.
    actor Received {
        var requests: [(signature: String?, delivery: String?, contentType: String?, body: [UInt8])] = []
        var status: HTTPResponse.Status
        /// Requests answered 503 before `status` applies.
        var failFirst: Int
        init(status: HTTPResponse.Status, failFirst: Int = 0) {
            self.status = status
            self.failFirst = failFirst
        }
        /// The answer to the request just added.
        func answer() -> HTTPResponse.Status { requests.count <= failFirst ? .serviceUnavailable : status }
        func add(signature: String?, delivery: String?, contentType: String?, body: [UInt8]) {
            requests.append((signature, delivery, contentType, body))
        }
        func respond(with status: HTTPResponse.Status) { self.status = status }
    }

    actor Port {
        var value = 0
        func set(_ port: Int) { value = port }
    }

    /// Runs a receiver answering `received.status` at `http://127.0.0.1:PORT/hook` while `body` runs.
    func withReceiver(_ received: Received, _ body: @escaping @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            await received.add(signature: request.headers[HTTPField.Name("X-Framescope-Signature")!],
                               delivery: request.headers[HTTPField.Name("X-Framescope-Delivery")!],
                               contentType: request.headers[.contentType], body: Array(buffer: bytes))
            return Response(status: await received.answer())
        }
        // A head, one byte of a 10-byte body, then silence.
        router.post("/stall") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 1 << 20)
            await received.add(signature: nil, delivery: nil, contentType: nil, body: [])
            return Response(status: .ok, headers: [.contentLength: "10"], body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "x"))
                // Nothing more until the receiver shuts down: the stream never yields (its
                // continuation is held below) and ends when the task is cancelled.
                let (silence, continuation) = AsyncStream<Never>.makeStream()
                for await _ in silence {}
                continuation.finish()
                try await writer.finish(nil)
            })
        }
        let port = Port()
        var logger = Logger(label: "receiver")
        logger.logLevel = .error
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in await port.set(channel.localAddress?.port ?? 0) }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            var bound = 0
            for _ in 0..<400 where bound == 0 {
                try await Task.sleep(for: .milliseconds(25))
                bound = await port.value
            }
            try #require(bound != 0)
            defer { group.cancelAll() }
            try await body("http://127.0.0.1:\(bound)/hook")
        }
    }

    /// Sleeps recorded, never waited.
    actor Sleeps {
        var all: [Duration] = []
        func add(_ duration: Duration) { all.append(duration) }
    }

    /// Runs `body` with a transport of its own, shut down however `body` ends (a client
    /// left running traps when it is freed, which would take the whole test run with it).
    func withTransport<T>(_ body: (HTTPWebhookTransport) async throws -> T) async throws -> T {
        let transport = HTTPWebhookTransport()
        do {
            let result = try await body(transport)
            try await transport.shutdown()
            return result
        } catch {
            try? await transport.shutdown()
            throw error
        }
    }

    func delivery(_ store: any CollectorStore, transport: HTTPWebhookTransport, sleeps: Sleeps, attempts: Int = 5,
                  timeout: Duration = .seconds(5)) -> WebhookDelivery {
        WebhookDelivery(store: store, transport: transport, publicURL: "https://collector.example.com", maximumAttempts: attempts,
                        initialBackoff: .seconds(1), timeout: timeout, sleep: { await sleeps.add($0) }, clock: { AlertTests.now })
    }

    @Test("The demo's regression reaches the receiver once per regressed figure, signed; the fix and a second pass send nothing")
    func signedDelivery() async throws {
        let (temporary, _) = try await AlertTests.demoStore()
        let store = temporary.store
        let received = Received(status: .noContent)
        try await withReceiver(received) { url in
            let hook = try #require(try await store.addWebhook(app: "demo", url: url, now: AlertTests.now))
            try await withTransport { (transport: HTTPWebhookTransport) async throws in
                let sleeps = Sleeps()
                // A receiver that answers at once; the long timeout keeps a loaded machine
                // (CI's two cores) from retrying a delivery that was merely slow.
                let deliverer = delivery(store, transport: transport, sleeps: sleeps, timeout: .seconds(30))
                let evaluator = AlertEvaluator(store: store)
                let first = try await AlertService.pass(evaluator: evaluator, delivery: deliverer, now: AlertTests.now, logger: Logger(label: "test"))
                let second = try await AlertService.pass(evaluator: evaluator, delivery: deliverer, now: AlertTests.now + 3600, logger: Logger(label: "test"))
                #expect(first.delivered == first.raised.count && first.undelivered == 0 && !first.raised.isEmpty)
                #expect(second.raised.isEmpty && second.delivered == 0)
                #expect(await sleeps.all.isEmpty)

                let requests = await received.requests
                #expect(requests.count == first.raised.count)
                var seen: Set<String> = []
                for request in requests {
                    // The signature is the HMAC-SHA256 of the body with the webhook's secret.
                    let mac = HMAC<SHA256>.authenticationCode(for: request.body, using: SymmetricKey(data: Data(hook.secret.utf8)))
                    #expect(request.signature == "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
                    #expect(request.contentType == "application/json")
                    let payload = try JSONDecoder().decode(WebhookPayload.self, from: Data(request.body))
                    #expect(payload.app == "demo" && payload.screen == "Feed" && payload.baseline == "3.0.0" && payload.candidate == "3.1.0")
                    #expect(payload.verdict == .regressed && payload.figures.verdict == .regressed && payload.event == "regression")
                    #expect(payload.links.dashboard == "https://collector.example.com/dashboard/apps/demo/compare?days=30&baseline=3.0.0&candidate=3.1.0&screen=Feed")
                    #expect(payload.links.api.hasPrefix("https://collector.example.com/v1/apps/demo/compare?from="))
                    #expect(request.delivery == "\(payload.alert)-\(hook.id)")
                    #expect(seen.insert(payload.metric).inserted, "one alert per figure")
                }
                #expect(seen.contains("hitchRatio"))
                let alerts = try await store.alerts(app: "demo", limit: 100)
                #expect(alerts.allSatisfy { $0.deliveries == [AlertDelivery(webhook: hook.id, state: .delivered, attempts: 1, lastError: nil)] })
            }
        }
    }

    @Test("A receiver answering 500 gets every attempt with exponential backoff between; then the alert is undelivered for it")
    func failingReceiver() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        _ = try await store.createApp(name: "Shop", id: nil)
        let received = Received(status: .internalServerError)
        try await withReceiver(received) { url in
            let hook = try #require(try await store.addWebhook(app: "shop", url: url, now: AlertTests.now))
            let raised = try await store.raiseAlerts([AlertStoreContractTests().alert()], now: AlertTests.now)
            try await withTransport { (transport: HTTPWebhookTransport) async throws in
                let sleeps = Sleeps()
                let outcome = try await delivery(store, transport: transport, sleeps: sleeps, attempts: 4).deliverPending()
                #expect(outcome.delivered == 0 && outcome.undelivered == 1)
                #expect(await received.requests.count == 4)
                #expect(await sleeps.all == [.seconds(1), .seconds(2), .seconds(4)])
                let alert = try #require(try await store.alerts(app: "shop", limit: 1).first)
                #expect(alert.id == raised.first?.id)
                #expect(alert.deliveries == [AlertDelivery(webhook: hook.id, state: .undelivered, attempts: 4, lastError: "HTTP 500")])
                // Given up: a later pass sends nothing more, even once the receiver works again.
                await received.respond(with: .ok)
                #expect(try await delivery(store, transport: transport, sleeps: sleeps, attempts: 4).deliverPending() == (0, 0))
                #expect(await received.requests.count == 4)
            }
        }
    }

    @Test("A receiver that recovers: the failed attempts are counted, then the delivery is delivered")
    func recovery() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        _ = try await store.createApp(name: "Shop", id: nil)
        let received = Received(status: .accepted, failFirst: 2)
        try await withReceiver(received) { url in
            let hook = try #require(try await store.addWebhook(app: "shop", url: url, now: AlertTests.now))
            _ = try await store.raiseAlerts([AlertStoreContractTests().alert()], now: AlertTests.now)
            try await withTransport { (transport: HTTPWebhookTransport) async throws in
                let sleeps = Sleeps()
                #expect(try await delivery(store, transport: transport, sleeps: sleeps).deliverPending() == (1, 0))
                #expect(await received.requests.count == 3)
                #expect(await sleeps.all == [.seconds(1), .seconds(2)])
                #expect(try await store.alerts(app: "shop", limit: 1).first?.deliveries == [AlertDelivery(webhook: hook.id, state: .delivered, attempts: 3, lastError: nil)])
            }
        }
    }

    @Test("A closed port is a failed attempt with no response, not a crash")
    func closedPort() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        _ = try await store.createApp(name: "Shop", id: nil)
        // A port nothing listens on: connection refused on every attempt.
        let closed = try #require(try await store.addWebhook(app: "shop", url: "http://127.0.0.1:9/hook", now: AlertTests.now))
        _ = try await store.raiseAlerts([AlertStoreContractTests().alert()], now: AlertTests.now)
        try await withTransport { (transport: HTTPWebhookTransport) async throws in
            let sleeps = Sleeps()
            #expect(try await delivery(store, transport: transport, sleeps: sleeps, attempts: 2, timeout: .seconds(1)).deliverPending() == (0, 1))
            let refused = try #require(try await store.alerts(app: "shop", limit: 1).first?.deliveries.first)
            #expect(refused.webhook == closed.id && refused.state == .undelivered && refused.attempts == 2)
            #expect(refused.lastError?.hasPrefix("no response") == true)
        }
    }

    @Test("A receiver that sends a head and stalls its body: the attempt ends at the timeout with the head's status (it once hung the alert service)")
    func stalledBody() async throws {
        let received = Received(status: .ok)
        try await withReceiver(received) { url in
            try await withTransport { (transport: HTTPWebhookTransport) async throws in
                let stall = url.replacingOccurrences(of: "/hook", with: "/stall")
                // Guarded: without the deadline this never returns, so the guard fails the test instead of hanging it.
                let status = try await withThrowingTaskGroup(of: Int?.self) { group in
                    // 3 s: room for the head on a loaded machine (500 ms once ran out on CI before it came).
                    group.addTask { try await transport.post(url: stall, body: Array("{}".utf8), headers: [], timeout: .seconds(3)) }
                    group.addTask {
                        try await Task.sleep(for: .seconds(30))
                        return nil
                    }
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
                #expect(status == 200, "the head's status, once the body's read is cut at the deadline")
                #expect(await received.requests.count == 1)
            }
        }
    }

    @Test("A dead receiver gets its attempts once per pass, not once per alert; a webhook removed during a pass gets no more POSTs")
    func deadReceiverAndRemoval() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        _ = try await store.createApp(name: "Shop", id: nil)
        let received = Received(status: .internalServerError)
        try await withReceiver(received) { url in
            _ = try #require(try await store.addWebhook(app: "shop", url: url, now: AlertTests.now))
            let contract = AlertStoreContractTests()
            _ = try await store.raiseAlerts([contract.alert(screen: "Feed"), contract.alert(screen: "Search"), contract.alert(screen: "Chat")],
                                            now: AlertTests.now)
            try await withTransport { (transport: HTTPWebhookTransport) async throws in
                let sleeps = Sleeps()
                #expect(try await delivery(store, transport: transport, sleeps: sleeps, attempts: 2).deliverPending() == (0, 1))
                #expect(await received.requests.count == 2, "two attempts for the first alert, none for the two behind it")
                #expect(try await store.pendingDeliveries(limit: 10).count == 2, "the others wait for the next pass")
                // Removed mid-pass: a delivery read before the removal is not sent.
                let pending = try #require(try await store.pendingDeliveries(limit: 10).first)
                let webhooks = try #require(try await store.webhooks(app: "shop"))
                #expect(try await store.removeWebhook(app: "shop", id: try #require(webhooks.first).id))
                await received.respond(with: .ok)
                #expect(try await delivery(store, transport: transport, sleeps: sleeps).deliver(pending) == .pending)
                #expect(await received.requests.count == 2)
            }
        }
    }
}
