import Foundation
@testable import FramescopeCollector
import FramescopeCore
import Testing

@Suite("SQLite store")
struct SQLiteStoreTests {
    let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    func ingest(_ store: SQLiteStore, _ batch: EventBatch, app: String = "shop") async throws -> IngestResult {
        let events = batch.events.map { ($0, ISO8601.parse($0.startedAt)!) }
        return try await store.ingest(IngestBatch(app: app, batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                                                  deviceModel: batch.device.model, events: events, rawEvents: events.map { _ in "{}" }, receivedAt: now))
    }

    @Test("Apps get distinct random keys, stored hashed; revoked keys stop working")
    func keys() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let shop = try await store.createApp(name: "Shop", id: nil)
        #expect(shop.app == "shop")
        #expect(shop.ingestKey.hasPrefix("fsi_") && shop.readKey.hasPrefix("fsr_"))
        #expect(shop.ingestKey != shop.readKey)
        #expect(try await store.authenticate(key: shop.ingestKey) == KeyGrant(app: "shop", kind: .ingest))
        #expect(try await store.authenticate(key: shop.readKey) == KeyGrant(app: "shop", kind: .read))
        #expect(try await store.authenticate(key: "fsi_nope") == nil)
        let other = try await store.createApp(name: "Other App!", id: nil)
        #expect(other.app == "other-app")
        #expect(try await store.apps().map(\.app) == ["other-app", "shop"])
        #expect(try await store.revokeApp("shop"))
        #expect(try await store.authenticate(key: shop.ingestKey) == nil)
        #expect(try await store.apps().first { $0.app == "shop" }?.revoked == true)
        let rotated = try #require(try await store.rotateKeys(app: "shop"))
        #expect(try await store.authenticate(key: rotated.readKey) == KeyGrant(app: "shop", kind: .read))
        #expect(try await store.authenticate(key: shop.readKey) == nil)
    }

    @Test("Ingest stores raw events and rollups; a repeated batch counts once; data survives reopening")
    func ingestAndQuery() async throws {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: nil)
        let batch = makeBatch(id: "b1", start: now - 3600)
        #expect(try await ingest(temporary.store, batch) == IngestResult(stored: 3, duplicate: false))
        #expect(try await ingest(temporary.store, batch) == IngestResult(stored: 0, duplicate: true))
        #expect(try await temporary.store.rawEventCount(app: "shop") == 3)

        let reopened = try SQLiteStore(path: temporary.directory.appendingPathComponent("collector.sqlite").path)
        let screens = try await reopened.screens(app: "shop", query: ScreenQuery(from: now - 86_400, to: now + 1))
        #expect(screens.map(\.screen) == ["Feed"])
        #expect(screens.first?.visits == 3)
        let expected = FrameReport.merged(batch.events.map(\.report))
        #expect(screens.first?.report == expected)
        #expect(screens.first?.report.hitchRatio == expected.hitchRatio)
    }

    @Test("With background checkpoints, checkpoint() copies the whole WAL on its own connection; the data is intact")
    func backgroundCheckpoints() async throws {
        let temporary = try TemporaryStore()
        let path = temporary.directory.appendingPathComponent("background.sqlite").path
        let store = try SQLiteStore(path: path, backgroundCheckpoints: true)
        _ = try await store.createApp(name: "Shop", id: nil)
        for index in 0..<5 {
            _ = try await ingest(store, makeBatch(id: "bg-\(index)", start: now - 3600))
        }
        let checkpoint = try await store.checkpoint()
        #expect(checkpoint.walPages > 0)
        #expect(checkpoint.checkpointedPages == checkpoint.walPages)
        let reopened = try SQLiteStore(path: path)
        #expect(try await reopened.rawEventCount(app: "shop") == 15)
        #expect(try await reopened.screens(app: "shop", query: ScreenQuery(from: now - 86_400, to: now + 1)).first?.visits == 15)
    }

    @Test("Filters select rollup keys; ratios are Σ/Σ over the selected rows")
    func filters() async throws {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: nil)
        let old = makeBatch(id: "v1", start: now - 7200, version: "1.0")
        let new = makeBatch(id: "v2", screen: "Feed", count: 2, start: now - 3600, version: "2.0")
        _ = try await ingest(temporary.store, old)
        _ = try await ingest(temporary.store, new)
        let all = ScreenQuery(from: now - 86_400, to: now)
        #expect(try await temporary.store.screens(app: "shop", query: all).first?.visits == 5)
        var onlyNew = all
        onlyNew.appVersion = "2.0"
        let newScreens = try await temporary.store.screens(app: "shop", query: onlyNew)
        #expect(newScreens.first?.visits == 2)
        #expect(newScreens.first?.report == FrameReport.merged(new.events.map(\.report)))
        var lowPower = all
        lowPower.lowPower = true
        #expect(try await temporary.store.screens(app: "shop", query: lowPower).first?.visits == 1)
        // Rollups are hourly: a range starting at 10:30 includes the 10:00 hour.
        #expect(try await temporary.store.screens(app: "shop", query: ScreenQuery(from: now - 5400, to: now)).first?.visits == 5)
        let window = ScreenQuery(from: now - 3600, to: now)
        #expect(try await temporary.store.screens(app: "shop", query: window).first?.visits == 2)
        #expect(try await temporary.store.screens(app: "other", query: all).isEmpty)
    }
}
