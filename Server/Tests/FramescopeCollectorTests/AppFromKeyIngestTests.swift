import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 35: a batch's `app.id` is optional. Without it (or `null`) the batch is filed under
/// the app its ingest key belongs to; with it, it must name that app (403 `wrong_app`), as
/// before. Run through `POST /v1/events` on SQLite and on ClickHouse.
@Suite("The app from its ingest key")
struct AppFromKeyIngestTests {
    static let now = CollectorRouteTests.now

    /// A collector over a fresh store of `kind` with apps `shop` and `other`; runs `body`
    /// with its test client.
    static func withCollector(_ kind: StoreContractTests.Kind,
                              _ body: @escaping @Sendable (any TestClientProtocol, AppCredentials, AppCredentials) async throws -> Void) async throws {
        let (store, keepAlive) = try await kind.make()
        let shop = try await store.createApp(name: "Shop", id: "shop")
        let other = try await store.createApp(name: "Other", id: "other")
        // The pace's grace is an hour, as in CollectorRouteTests: bodies here arrive at once.
        let router = Collector(store: store, pace: BodyPace(grace: 3_600, maximumSeconds: 3_600), clock: { Self.now }).router
        try await Application(router: router).test(.router) { client in try await body(client, shop, other) }
        _ = keepAlive
    }

    /// `batch` as JSON with its app's `id` member replaced by `id` (`nil`: left out; the
    /// text `null`: JSON null).
    static func body(_ batch: EventBatch, id: String?) throws -> ByteBuffer {
        var json = try #require(try JSONSerialization.jsonObject(with: try jsonData(batch)) as? [String: Any])
        var app = try #require(json["app"] as? [String: Any])
        switch id {
        case nil: app["id"] = nil
        case "null"?: app["id"] = NSNull()
        case let id?: app["id"] = id
        }
        json["app"] = app
        return ByteBuffer(data: try JSONSerialization.data(withJSONObject: json))
    }

    static func post(_ client: any TestClientProtocol, _ body: ByteBuffer, key: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(key)"], body: body)
    }

    /// Visits per screen of `app` over the last two days, by the screens query.
    static func visits(_ client: any TestClientProtocol, app: String, key: String) async throws -> [String: Int] {
        let response = try await client.execute(uri: "/v1/apps/\(app)/screens?from=2026-11-19&to=2026-11-21", method: .get,
                                                headers: [.authorization: "Bearer \(key)"])
        #expect(response.status == .ok)
        let screens = try JSONDecoder().decode(ScreensResponse.self, from: Data(buffer: response.body)).screens
        return Dictionary(uniqueKeysWithValues: screens.map { ($0.screen, $0.visits) })
    }

    @Test("Without app.id (absent or null) a batch is the key's app's; the same id is stored; another app's id is 403 wrong_app and stores nothing",
          arguments: [StoreContractTests.Kind.sqliteFile, .clickhouse])
    func appFromKey(_ kind: StoreContractTests.Kind) async throws {
        try await Self.withCollector(kind) { client, shop, other in
            // The encoder leaves a nil id out: what an SDK that lets the key decide sends.
            var absent = makeBatch(id: "absent", screen: "Absent", count: 2, start: Self.now - 3600)
            absent.app.id = nil
            let encoded = try jsonData(absent)
            #expect(!String(decoding: encoded, as: UTF8.self).contains(#""id""#))
            let stored = try await Self.post(client, ByteBuffer(data: encoded), key: shop.ingestKey)
            #expect(stored.status == .accepted)
            #expect(try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: stored.body))
                    == IngestResponse(batchId: "absent", accepted: 2, duplicate: false, rejected: []))

            let null = try await Self.post(client, try Self.body(makeBatch(id: "null", screen: "Null", count: 1, start: Self.now - 3000), id: "null"),
                                           key: shop.ingestKey)
            #expect(null.status == .accepted)
            let same = try await Self.post(client, try Self.body(makeBatch(id: "same", screen: "Same", count: 3, start: Self.now - 2400), id: "shop"),
                                           key: shop.ingestKey)
            #expect(same.status == .accepted)

            // Another app's id with this key: refused whole, as before.
            let wrong = try await Self.post(client, try Self.body(makeBatch(id: "wrong", screen: "Wrong", count: 2, start: Self.now - 1800), id: "other"),
                                            key: shop.ingestKey)
            #expect(wrong.status == .forbidden)
            let detail = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: wrong.body)).error
            #expect(detail.code == "wrong_app" && detail.field == "app.id")
            #expect(detail.message == "this ingest key belongs to app 'shop', not 'other'")

            // The other app's key files an id-less batch under the other app.
            let theirs = try await Self.post(client, try Self.body(makeBatch(id: "absent", screen: "Theirs", count: 4, start: Self.now - 1200), id: nil),
                                             key: other.ingestKey)
            #expect(theirs.status == .accepted)

            // A retry of the id-less batch is a duplicate of the key's app's batch.
            let again = try await Self.post(client, ByteBuffer(data: encoded), key: shop.ingestKey)
            #expect(try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: again.body)).duplicate)

            #expect(try await Self.visits(client, app: "shop", key: shop.readKey) == ["Absent": 2, "Null": 1, "Same": 3])
            #expect(try await Self.visits(client, app: "other", key: other.readKey) == ["Theirs": 4])
        }
    }
}
