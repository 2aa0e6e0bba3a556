import CompressNIO
import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Collector routes")
struct CollectorRouteTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!
    static let adminToken = "admin-token-for-tests-0123456789"

    /// A collector on a fresh store with two apps; runs `body` with its test client.
    func withCollector(configure: (inout IngestLimits) -> Void = { _ in },
                       _ body: @escaping @Sendable (any TestClientProtocol, AppCredentials, AppCredentials) async throws -> Void) async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: nil)
        let other = try await temporary.store.createApp(name: "Other", id: nil)
        var limits = IngestLimits()
        limits.maximumBodyBytes = 1 << 20
        configure(&limits)
        // A body here arrives at once; the pace's grace is an hour so that a test process
        // whose two cooperative threads are busy for seconds (CI runs every suite at once
        // on two cores) still reads it before the 408 timer wins the race
        // (SlowClientTests holds the pace itself to its rule).
        let router = Collector(store: temporary.store, limits: limits, pace: BodyPace(grace: 3_600, maximumSeconds: 3_600),
                               clock: { Self.now }, adminToken: Self.adminToken).router
        let app = Application(router: router)
        try await app.test(.router) { client in try await body(client, shop, other) }
        _ = temporary
    }

    func error(_ response: TestResponse) throws -> ErrorBody.Detail {
        try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body)).error
    }

    @Test("A valid batch is accepted (202) and shows up in the screens query")
    func ingestThenQuery() async throws {
        try await withCollector { client, shop, _ in
            let batch = makeBatch(id: "batch-1", start: Self.now - 3600)
            let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                    body: ByteBuffer(data: try jsonData(batch)))
            #expect(response.status == .accepted)
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            #expect(answer == IngestResponse(batchId: "batch-1", accepted: 3, duplicate: false, rejected: []))

            let again = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                 body: ByteBuffer(data: try jsonData(batch)))
            #expect(try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: again.body)).duplicate)

            let query = try await client.execute(uri: "/v1/apps/shop/screens?from=2026-11-19&to=2026-11-21", method: .get,
                                                 headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(query.status == .ok)
            let screens = try JSONDecoder().decode(ScreensResponse.self, from: Data(buffer: query.body)).screens
            #expect(screens.map(\.screen) == ["Feed"])
            #expect(screens.first?.visits == 3)
            #expect(screens.first?.report == FrameReport.merged(batch.events.map(\.report)))
        }
    }

    @Test("Valid events are stored even when others are invalid; each rejection names its field")
    func partialBatch() async throws {
        try await withCollector { client, shop, _ in
            var batch = makeBatch(id: "mixed", count: 3, start: Self.now - 600)
            batch.events[1].screen = ""
            var json = try #require(JSONSerialization.jsonObject(with: try jsonData(batch)) as? [String: Any])
            var events = try #require(json["events"] as? [[String: Any]])
            var report = try #require(events[2]["report"] as? [String: Any])
            report["dropEvents"] = 1_000_000
            events[2]["report"] = report
            events.append(["screen": "NoReport"])
            json["events"] = events
            let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                    body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
            #expect(response.status == .accepted)
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            #expect(answer.accepted == 1)
            #expect(answer.rejected.map(\.index) == [1, 2, 3])
            #expect(answer.rejected.map(\.field) == ["events[1].screen", "events[2].report.dropEvents", "events[3].kind"])
        }
    }

    @Test("The auth matrix: each key kind on each route, own app and other app")
    func authMatrix() async throws {
        try await withCollector { client, shop, other in
            let body = ByteBuffer(data: try jsonData(makeBatch(id: "auth", start: Self.now - 600)))
            for (key, expected) in [(shop.ingestKey, HTTPResponse.Status.accepted), (shop.readKey, .forbidden), (other.ingestKey, .forbidden), ("fsi_unknown", .unauthorized)] {
                let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(key)"], body: body)
                #expect(response.status == expected, "POST with \(key.prefix(4)): \(response.status)")
                if expected != .accepted { #expect(try error(response).field != nil) }
            }
            let missing = try await client.execute(uri: "/v1/events", method: .post, body: body)
            #expect(missing.status == .unauthorized)
            #expect(try error(missing).code == "unauthorized")
            let readRoutes = ["screens", "timeseries", "compare?baseline=1.0&candidate=1.1", "worst", "percentiles", "metrickit", "events", "alerts", "tags"]
            for route in readRoutes {
                for (key, expected) in [(shop.readKey, HTTPResponse.Status.ok), (shop.ingestKey, .forbidden), (other.readKey, .forbidden), ("fsr_unknown", .unauthorized)] {
                    let response = try await client.execute(uri: "/v1/apps/shop/\(route)", method: .get, headers: [.authorization: "Bearer \(key)"])
                    #expect(response.status == expected, "GET \(route) with \(key.prefix(4)): \(response.status)")
                    if expected != .ok { #expect(try error(response).field != nil) }
                }
                let missing = try await client.execute(uri: "/v1/apps/shop/\(route)", method: .get)
                #expect(missing.status == .unauthorized)
                // The other app's read key is refused on this app's path, and this app's on the other's.
                let crossed = try await client.execute(uri: "/v1/apps/\(other.app)/\(route)", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"])
                #expect(crossed.status == .forbidden)
                // The admin key manages settings only: it reads no data (least privilege).
                let admin = try await client.execute(uri: "/v1/apps/shop/\(route)", method: .get, headers: [.authorization: "Bearer \(shop.adminKey)"])
                #expect(admin.status == .forbidden, "GET \(route) with the admin key")
                #expect(try error(admin).code == "wrong_key_kind")
            }
            let adminSends = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.adminKey)"], body: body)
            #expect(adminSends.status == .forbidden)
            // Thresholds: read key or admin key may look; only the admin key may change them.
            let settings = ByteBuffer(string: #"{"bands": {"hangRate": {"goodBelow": 10, "criticalAbove": 60}}}"#)
            for (key, get, put) in [(shop.adminKey, HTTPResponse.Status.ok, HTTPResponse.Status.ok), (shop.readKey, .ok, .forbidden),
                                    (shop.ingestKey, .forbidden, .forbidden), (other.adminKey, .forbidden, .forbidden),
                                    (other.readKey, .forbidden, .forbidden), ("fsa_unknown", .unauthorized, .unauthorized)] {
                let headers: HTTPFields = [.authorization: "Bearer \(key)"]
                let read = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .get, headers: headers)
                #expect(read.status == get, "GET thresholds with \(key.prefix(4)): \(read.status)")
                let write = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: headers, body: settings)
                #expect(write.status == put, "PUT thresholds with \(key.prefix(4)): \(write.status)")
                if put != .ok { #expect(try error(write).field != nil) }
            }
            let readKeyWrites = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: [.authorization: "Bearer \(shop.readKey)"], body: settings)
            #expect(try error(readKeyWrites).message == "a read key cannot change the app's settings; use the app's admin key")
            #expect(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, body: settings).status == .unauthorized)
        }
    }

    @Test("Unreadable requests get the proper 4xx with a JSON error naming the problem")
    func badRequests() async throws {
        try await withCollector { client, shop, _ in
            let auth: HTTPFields = [.authorization: "Bearer \(shop.ingestKey)"]
            let notJSON = try await client.execute(uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(string: "{nope"))
            #expect(notJSON.status == .badRequest)
            #expect(try error(notJSON).code == "invalid_json")

            let missingField = try await client.execute(uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(string: #"{"batchId": "x", "events": []}"#))
            #expect(missingField.status == .badRequest)
            #expect(try error(missingField).field == "app")

            var badId = makeBatch(id: "has spaces", start: Self.now - 60)
            let badIdResponse = try await client.execute(uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(data: try jsonData(badId)))
            #expect(try error(badIdResponse).field == "batchId")
            badId.batchId = "old"
            badId.events = [badId.events[0]]
            badId.events[0].startedAt = "2026-01-01T00:00:00Z"
            let old = try await client.execute(uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(data: try jsonData(badId)))
            #expect(try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: old.body)).rejected.map(\.field) == ["events[0].startedAt"])

            let huge = try await client.execute(uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(repeating: 0x20, count: 2 << 20))
            #expect(huge.status == .contentTooLarge)
            #expect(try error(huge).code == "body_too_large")

            var gzipHeaders = auth
            gzipHeaders[.contentEncoding] = "br"
            let encoded = try await client.execute(uri: "/v1/events", method: .post, headers: gzipHeaders, body: ByteBuffer(string: "{}"))
            #expect(encoded.status == .unsupportedMediaType)

            let badQuery = try await client.execute(uri: "/v1/apps/shop/screens?from=yesterday", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(badQuery.status == .badRequest)
            #expect(try error(badQuery).field == "from")

            let wrongMethod = try await client.execute(uri: "/v1/events", method: .put, headers: auth, body: ByteBuffer(string: "{}"))
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "POST")

            let unknown = try await client.execute(uri: "/nowhere", method: .get)
            #expect(unknown.status == .notFound)
            #expect(try error(unknown).code == "not_found")

            let health = try await client.execute(uri: "/health", method: .get)
            #expect(String(buffer: health.body).contains("ok"))
        }
    }

    @Test("gzip bodies are accepted; a gzip bomb is refused with 413 and damaged gzip with 400")
    func gzip() async throws {
        try await withCollector(configure: { $0.maximumDecompressedBytes = 4 << 20 }) { client, shop, _ in
            var headers: HTTPFields = [.authorization: "Bearer \(shop.ingestKey)", .contentEncoding: "gzip"]
            var plain = ByteBuffer(data: try jsonData(makeBatch(id: "zipped", start: Self.now - 600)))
            let zipped = try plain.compress(with: .gzip())
            let accepted = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: zipped)
            #expect(accepted.status == .accepted)
            #expect(try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: accepted.body)).accepted == 3)

            // 64 MiB of spaces compress to about 64 KiB: under the body limit, far over the decompressed limit.
            var spaces = ByteBuffer(repeating: 0x20, count: 64 << 20)
            let bomb = try spaces.compress(with: .gzip())
            #expect(bomb.readableBytes < 1 << 20)
            let refused = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: bomb)
            #expect(refused.status == .contentTooLarge)
            #expect(try error(refused).code == "decompressed_too_large")

            let damaged = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(string: "not gzip at all"))
            #expect(damaged.status == .badRequest)
            #expect(try error(damaged).code == "invalid_gzip")
            // A stream cut short inflates to part of the JSON: its trailer gives it away.
            let truncated = ByteBuffer(bytes: Array(zipped.readableBytesView.prefix(zipped.readableBytes / 2)))
            let cut = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: truncated)
            #expect(cut.status == .badRequest)
            #expect(try error(cut).code == "invalid_gzip")
            headers[.contentEncoding] = "identity"
            // Not JSON: the message says where the parser stopped.
            let notJSON = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(string: #"{"batchId": NaN}"#))
            #expect(try error(notJSON).code == "invalid_json")
            #expect(try error(notJSON).message.hasPrefix("the body is not valid JSON: "))
            #expect(try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(data: try jsonData(makeBatch(id: "plain", start: Self.now - 600)))).status == .accepted)
        }
    }

    @Test("Read routes: an unknown network is refused by name, and another method on a parameterised path is 405 with Allow")
    func readRouteParameters() async throws {
        try await withCollector { client, shop, _ in
            let bad = try await client.execute(uri: "/v1/apps/shop/screens?network=AAA", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(bad.status == .badRequest)
            #expect(try error(bad).field == "network")
            let good = try await client.execute(uri: "/v1/apps/shop/screens?network=wifi", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(good.status == .ok)
            let trace = try await client.execute(uri: "/v1/apps/shop/compare", method: .delete, headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(trace.status == .methodNotAllowed)
            #expect(trace.headers[.allow] == "GET")
        }
    }

    @Test("Over its rate limit a key gets 429 with Retry-After; other keys are unaffected")
    func rateLimit() async throws {
        try await withCollector(configure: { $0.requestsPerSecond = 0.5; $0.burst = 2 }) { client, shop, other in
            let body = ByteBuffer(data: try jsonData(makeBatch(id: "r", count: 1, start: Self.now - 600)))
            for _ in 0..<2 {
                #expect(try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: body).status == .accepted)
            }
            let limited = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: body)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "2")
            #expect(try error(limited).code == "rate_limited")
            var otherBatch = makeBatch(id: "r", app: "other", count: 1, start: Self.now - 600)
            otherBatch.batchId = "o"
            #expect(try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(other.ingestKey)"],
                                             body: ByteBuffer(data: try jsonData(otherBatch))).status == .accepted)
        }
    }

    @Test("/metrics counts requests by route and status, and ingested and rejected events")
    func metrics() async throws {
        try await withCollector { client, shop, _ in
            var batch = makeBatch(id: "m", count: 3, start: Self.now - 600)
            batch.events[0].screen = ""
            _ = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: ByteBuffer(data: try jsonData(batch)))
            _ = try await client.execute(uri: "/v1/events", method: .post, body: ByteBuffer(string: "{}"))
            // Only the admin token opens /metrics: no key, an app's keys and a wrong token are refused.
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            for key in [shop.ingestKey, shop.readKey, Self.adminToken + "x"] {
                #expect(try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(key)"]).status == .unauthorized)
            }
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]).body)
            #expect(text.contains(#"framescope_ingested_events_total{app="shop"} 2"#))
            #expect(text.contains(#"framescope_rejected_events_total{app="shop"} 1"#))
            #expect(text.contains(#"framescope_http_requests_total{method="POST",route="/v1/events",status="202"} 1"#))
            #expect(text.contains(#"framescope_http_requests_total{method="POST",route="/v1/events",status="401"} 1"#))
            #expect(text.contains("framescope_http_request_duration_seconds_bucket"))
        }
    }

    @Test("/openapi.json documents every route, and its example batch is accepted as it stands")
    func openAPI() async throws {
        let temporary = try TemporaryStore()
        let demo = try await temporary.store.createApp(name: "Demo", id: "demo")
        let store = temporary.store
        let router = Collector(store: store, clock: { Self.now }).router
        let routes = router.routes.map { (method: $0.method, path: $0.path.description) }
        let app = Application(router: router)
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            let document = try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
            // The routes the router serves: every registered method and path that does not answer 405.
            var served: Set<String> = []
            for route in routes {
                let path = route.path.split(separator: "/").map { $0.hasPrefix(":") ? "x" : String($0) }.reduce("") { $0 + "/" + $1 }
                let answer = try await client.execute(uri: path, method: route.method)
                if answer.status == .methodNotAllowed {
                    #expect(answer.headers[.allow] != nil, "\(route.method) \(path)")
                } else {
                    served.insert("\(route.method.rawValue) " + route.path.split(separator: "/")
                        .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.reduce("") { $0 + "/" + $1 })
                }
            }
            #expect(documented == served)
            #expect(served.contains("GET /v1/apps/{app}/compare") && served.count >= 9)
            for (route, expected) in [("/health", HTTPResponse.Status.ok), ("/metrics", .forbidden), ("/openapi.json", .ok), ("/v1/apps/demo/screens", .unauthorized)] {
                #expect(try await client.execute(uri: route, method: .get).status == expected, "\(route)")
            }

            let post = try #require(paths["/v1/events"]?["post"] as? [String: Any])
            let body = try #require(((post["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any])
            let example = try JSONSerialization.data(withJSONObject: try #require(body["example"]))
            let accepted = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(demo.ingestKey)"], body: ByteBuffer(data: example))
            #expect(accepted.status == .accepted)
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: accepted.body))
            #expect(answer.accepted == 1)
            #expect(answer.rejected.isEmpty)

            // The thresholds example is a body the admin key can PUT as it stands.
            let put = try #require(paths["/v1/apps/{app}/thresholds"]?["put"] as? [String: Any])
            let putBody = try #require(((put["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any])
            let settings = try JSONSerialization.data(withJSONObject: try #require(putBody["example"]))
            let stored = try await client.execute(uri: "/v1/apps/demo/thresholds", method: .put, headers: [.authorization: "Bearer \(demo.adminKey)"], body: ByteBuffer(data: settings))
            #expect(stored.status == .ok)
            #expect(try await store.thresholds(app: "demo") == (try JSONDecoder().decode(AppThresholds.self, from: settings)))
        }
    }
}
