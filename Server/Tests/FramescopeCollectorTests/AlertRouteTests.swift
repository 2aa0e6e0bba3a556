import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Alert routes: alerts and webhooks")
struct AlertRouteTests {
    /// A collector on a fresh store with the apps `shop` and `other`, `shop` holding one alert.
    func withCollector(_ body: @escaping @Sendable (any TestClientProtocol, AppCredentials, AppCredentials, SQLiteStore, RegressionAlert) async throws -> Void) async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: nil)
        let other = try await temporary.store.createApp(name: "Other", id: nil)
        let store = temporary.store
        let alert = try #require(try await store.raiseAlerts([AlertStoreContractTests().alert()], now: CollectorRouteTests.now).first)
        let router = Collector(store: store, clock: { CollectorRouteTests.now }).router
        try await Application(router: router).test(.router) { client in try await body(client, shop, other, store, alert) }
        _ = temporary
    }

    func error(_ response: TestResponse) throws -> ErrorBody.Detail {
        try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body)).error
    }

    func bearer(_ key: String) -> HTTPFields { [.authorization: "Bearer \(key)", .contentType: "application/json"] }

    @Test("Who may do what: alerts with the read key; acknowledging and webhooks with the admin key only; every other key refused")
    func authMatrix() async throws {
        try await withCollector { client, shop, other, _, alert in
            let hook = ByteBuffer(string: #"{"url": "https://hooks.example.com/x"}"#)
            let routes: [(String, HTTPRequest.Method, ByteBuffer?, Set<String>)] = [
                ("/v1/apps/shop/alerts", .get, nil, [shop.readKey]),
                ("/v1/apps/shop/alerts/\(alert.id)/acknowledge", .post, nil, [shop.adminKey]),
                ("/v1/apps/shop/webhooks", .get, nil, [shop.adminKey]),
                ("/v1/apps/shop/webhooks", .post, hook, [shop.adminKey]),
            ]
            for (uri, method, body, allowed) in routes {
                for key in [shop.readKey, shop.adminKey, shop.ingestKey, other.readKey, other.adminKey, "fsa_unknown"] {
                    let response = try await client.execute(uri: uri, method: method, headers: bearer(key), body: body)
                    let expected: HTTPResponse.Status = allowed.contains(key) ? (method == .post && uri.hasSuffix("webhooks") ? .created : .ok)
                        : key == "fsa_unknown" ? .unauthorized : .forbidden
                    #expect(response.status == expected, "\(method) \(uri) with \(key.prefix(4)) of \(key.contains(other.app) ? "other" : "shop"): \(response.status)")
                    if !allowed.contains(key) { #expect(try error(response).field != nil) }
                }
                #expect(try await client.execute(uri: uri, method: method, body: body).status == .unauthorized)
            }
            let readKeyAcknowledges = try await client.execute(uri: "/v1/apps/shop/alerts/\(alert.id)/acknowledge", method: .post, headers: bearer(shop.readKey))
            #expect(try error(readKeyAcknowledges).message == "a read key cannot change the app's settings; use the app's admin key")
            // DELETE: the other app's admin key cannot remove this app's webhook.
            let webhooks = try JSONDecoder().decode(WebhooksResponse.self, from: Data(buffer: try await client.execute(uri: "/v1/apps/shop/webhooks", method: .get, headers: bearer(shop.adminKey)).body))
            let id = try #require(webhooks.webhooks.first?.id)
            for key in [shop.readKey, shop.ingestKey, other.adminKey] {
                #expect(try await client.execute(uri: "/v1/apps/shop/webhooks/\(id)", method: .delete, headers: bearer(key)).status == .forbidden)
            }
            #expect(try await client.execute(uri: "/v1/apps/other/webhooks/\(id)", method: .delete, headers: bearer(other.adminKey)).status == .notFound)
            #expect(try await client.execute(uri: "/v1/apps/shop/webhooks/\(id)", method: .delete, headers: bearer(shop.adminKey)).status == .noContent)
            #expect(try await client.execute(uri: "/v1/apps/shop/webhooks/\(id)", method: .delete, headers: bearer(shop.adminKey)).status == .notFound)
        }
    }

    @Test("Alerts are listed with their figures; acknowledging sets the time once; unknown or malformed ids are 404 or 400 naming id")
    func listAndAcknowledge() async throws {
        try await withCollector { client, shop, _, store, alert in
            let listed = try JSONDecoder().decode(AlertsResponse.self, from: Data(buffer: try await client.execute(uri: "/v1/apps/shop/alerts", method: .get, headers: bearer(shop.readKey)).body))
            #expect(listed.alerts == [alert])
            #expect(listed.alerts.first?.acknowledgedAt == nil)
            let acknowledged = try await client.execute(uri: "/v1/apps/shop/alerts/\(alert.id)/acknowledge", method: .post, headers: bearer(shop.adminKey))
            #expect(acknowledged.status == .ok)
            let answer = try JSONDecoder().decode(RegressionAlert.self, from: Data(buffer: acknowledged.body))
            #expect(answer.acknowledgedAt == ISO8601.format(unixSeconds: CollectorRouteTests.now))
            #expect(try await store.alerts(app: "shop", limit: 1).first?.acknowledgedAt == answer.acknowledgedAt)
            let again = try await client.execute(uri: "/v1/apps/shop/alerts/\(alert.id)/acknowledge", method: .post, headers: bearer(shop.adminKey))
            #expect(try JSONDecoder().decode(RegressionAlert.self, from: Data(buffer: again.body)) == answer)
            for (id, status) in [("999", HTTPResponse.Status.notFound), ("0", .badRequest), ("-1", .badRequest), ("abc", .badRequest),
                                 ("99999999999999999999999", .badRequest)] {
                let response = try await client.execute(uri: "/v1/apps/shop/alerts/\(id)/acknowledge", method: .post, headers: bearer(shop.adminKey))
                #expect(response.status == status, "\(id)")
                #expect(try error(response).field == "id")
            }
            let wrongMethod = try await client.execute(uri: "/v1/apps/shop/alerts", method: .delete, headers: bearer(shop.readKey))
            #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.headers[.allow] == "GET")
        }
    }

    @Test("A webhook's secret is shown once, on creation; the list never shows it")
    func secretShownOnce() async throws {
        try await withCollector { client, shop, _, _, _ in
            let created = try await client.execute(uri: "/v1/apps/shop/webhooks", method: .post, headers: bearer(shop.adminKey),
                                                   body: ByteBuffer(string: #"{"url": "https://hooks.example.com/framescope?token=t"}"#))
            #expect(created.status == .created)
            let credentials = try JSONDecoder().decode(WebhookCredentials.self, from: Data(buffer: created.body))
            #expect(credentials.secret.hasPrefix("fsw_") && credentials.url == "https://hooks.example.com/framescope?token=t")
            let listed = try await client.execute(uri: "/v1/apps/shop/webhooks", method: .get, headers: bearer(shop.adminKey))
            #expect(!String(buffer: listed.body).contains(credentials.secret) && !String(buffer: listed.body).contains("secret"))
            #expect(try JSONDecoder().decode(WebhooksResponse.self, from: Data(buffer: listed.body)).webhooks.map(\.id) == [credentials.id])
        }
    }

    @Test("Bad webhook bodies and URLs are refused with 400 naming the field, and nothing is stored", arguments: [
        (#"{"url": "ftp://example.com/hook"}"#, "url"), (#"{"url": "file:///etc/passwd"}"#, "url"), (#"{"url": "javascript:alert(1)"}"#, "url"),
        (#"{"url": "https://user:pw@example.com/"}"#, "url"), (#"{"url": "not a url"}"#, "url"), (#"{"url": ""}"#, "url"),
        (#"{"url": 42}"#, "url"), (#"{"url": null}"#, "url"), ("{}", "url"), (#"{"url": "https://example.com/", "secret": "mine"}"#, "secret"),
        (#"{"url": "https://example.com/<script>"}"#, "url"),
    ] as [(String, String)])
    func badWebhooks(_ body: String, field: String) async throws {
        try await withCollector { client, shop, _, store, _ in
            let response = try await client.execute(uri: "/v1/apps/shop/webhooks", method: .post, headers: bearer(shop.adminKey), body: ByteBuffer(string: body))
            #expect(response.status == .badRequest, "\(body)")
            let detail = try error(response)
            #expect(detail.code == "invalid_field" && detail.field == field, "\(body): \(detail.message)")
            #expect(try await store.webhooks(app: "shop") == [])
        }
    }

    @Test("Bodies that are not a webhook at all: not JSON, a list, too large")
    func unreadable() async throws {
        try await withCollector { client, shop, _, store, _ in
            for text in ["", "not json", "[1]", #"{"url": "#] {
                let response = try await client.execute(uri: "/v1/apps/shop/webhooks", method: .post, headers: bearer(shop.adminKey), body: ByteBuffer(string: text))
                #expect(response.status == .badRequest, "\(text)")
                #expect(try error(response).code == "invalid_json", "\(text)")
            }
            let huge = try await client.execute(uri: "/v1/apps/shop/webhooks", method: .post, headers: bearer(shop.adminKey),
                                                body: ByteBuffer(string: #"{"url": "https://example.com/"# + String(repeating: "a", count: 20_000) + "\"}"))
            #expect(huge.status == .contentTooLarge)
            #expect(try await store.webhooks(app: "shop") == [])
        }
    }
}
