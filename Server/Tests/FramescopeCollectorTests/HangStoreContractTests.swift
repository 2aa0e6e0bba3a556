import Foundation
import FramescopeClickHouse
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// Hangs through every store (``HangStore``): written with their visits, grouped by
/// signature, filtered like the other reads, counted once, swept by retention.
@Suite("Hang store contract")
struct HangStoreContractTests {
    typealias Kind = StoreContractTests.Kind
    static let now = StoreContractTests.now

    /// A batch of `count` visits to `screen` in `version`; visit `i` has a hang at site A
    /// (0x215c, 0.5 s + i/10), one at site B (0x25b8, 1 s) on even visits, an idle hang and
    /// one without a stack (neither of which is a hang row).
    static func batch(id: String, screen: String, version: String, start: Double, count: Int = 2, tag: String = "pro") -> EventBatch {
        var batch = makeBatch(id: id, screen: screen, count: count, start: start, version: version)
        for index in batch.events.indices {
            batch.events[index].context.tags = ["plan": tag]
            var hangs = [HangRecord(offset: 0.25, duration: 0.5 + Double(index) / 10, stack: HangStackFixtures.stack(site: 0x215c))]
            if index % 2 == 0 { hangs.append(HangRecord(offset: 1.5, duration: 1, stack: HangStackFixtures.stack(site: 0x25b8, samples: 10, elsewhere: [0, 1]))) }
            hangs.append(HangRecord(offset: 3, duration: 0.3, idle: true, stack: HangStackFixtures.stack(site: 0x9999)))
            hangs.append(HangRecord(offset: 4, duration: 0.25))
            batch.events[index].hangs = hangs
        }
        return batch
    }

    @Test("Hangs group by dominant app frame with counts, time, screens, versions and the longest hang's stack", arguments: Kind.allCases)
    func groups(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let start = Self.now - 7200
        for batch in [Self.batch(id: "a", screen: "Feed", version: "3.1.0", start: start),
                      Self.batch(id: "b", screen: "Search", version: "3.2.0", start: start + 600, count: 3, tag: "free")] {
            _ = try await store.ingest([StoreContractTests.ingestBatch(batch)])
        }
        // A retried batch stores nothing again.
        _ = try await store.ingest([StoreContractTests.ingestBatch(Self.batch(id: "a", screen: "Feed", version: "3.1.0", start: start))])
        #expect(try await store.hangCount(app: "shop") == 5 + 3, "five site-A hangs, three site-B; idle ones and those without a stack left out")

        let all = EventQuery(screens: ScreenQuery(from: Self.now - 86_400, to: Self.now))
        let groups = try await store.hangGroups(app: "shop", query: all, source: .sdk, limit: 100)
        let siteA = "73d406b3246a378bbefc16429a4d8133+0x215b", siteB = "73d406b3246a378bbefc16429a4d8133+0x25b7"
        // By total time: B 3 × 1 s, then A 0.5 + 0.6 + 0.5 + 0.6 + 0.7 s.
        #expect(groups.map(\.signature) == [siteB, siteA])
        let a = try #require(groups.first { $0.signature == siteA })
        #expect(a.hangs == 5)
        #expect(abs(a.duration - 2.9) < 1e-9)
        #expect(a.fatal == 0)
        #expect(a.screens == ["Search", "Feed"], "by hangs: three on Search, two on Feed")
        #expect(a.appVersions == ["3.2.0", "3.1.0"])
        #expect(a.firstSeen == start + 0.25)
        #expect(a.lastSeen == start + 600 + 120 + 0.25)
        #expect(a.dominant?.offset == 0x215c)
        #expect(a.stack.map(\.offset) == [0x1_2340, 0x215c, 0x4000, 0x2_0000])
        let b = try #require(groups.first { $0.signature == siteB })
        #expect(b.hangs == 3)
        #expect(b.duration == 3)
        #expect(b.dominant?.share == 0.8)
        #expect(b.stack.map(\.share) == [1, 0.8, 1, 1])

        // Filters: as the other reads take them.
        var feed = all
        feed.screens[.screen] = "Feed"
        #expect(try await store.hangGroups(app: "shop", query: feed, source: .sdk, limit: 100).map(\.hangs) == [2, 1])
        var version = all
        version.screens[.appVersion] = "3.2.0"
        #expect(try await store.hangGroups(app: "shop", query: version, source: .sdk, limit: 100).first?.screens == ["Search"])
        var lowPower = all
        lowPower.screens[.lowPower] = "true"
        #expect(try await store.hangGroups(app: "shop", query: lowPower, source: .sdk, limit: 100).map(\.hangs) == [1, 1])
        var tagged = all
        tagged.tags = ["plan": "free"]
        #expect(try await store.hangGroups(app: "shop", query: tagged, source: .sdk, limit: 100).map(\.hangs) == [2, 3])
        tagged.tags = ["plan": "nobody"]
        #expect(try await store.hangGroups(app: "shop", query: tagged, source: .sdk, limit: 100).isEmpty)
        #expect(try await store.hangGroups(app: "shop", query: all, source: .sdk, limit: 1).count == 1)
        #expect(try await store.hangGroups(app: "shop", query: all, source: .metrickit, limit: 100).isEmpty)
        #expect(try await store.hangGroups(app: "other", query: all, source: .sdk, limit: 100).isEmpty)
        let later = EventQuery(screens: ScreenQuery(from: start + 300, to: Self.now))
        #expect(try await store.hangGroups(app: "shop", query: later, source: .sdk, limit: 100).map(\.hangs) == [2, 3])
        _ = keepAlive
    }

    @Test("A fatal hang is stored once per id, under its own version, however many batches carry it", arguments: Kind.allCases)
    func fatalOncePerId(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        for (index, id) in ["launch-2", "launch-3"].enumerated() {
            var batch = StoreContractTests.ingestBatch(makeBatch(id: id, count: index, start: Self.now - 3000, version: "3.1.0"))
            batch.fatalHangs = [(FatalHangIngestTests.fatalHang(start: Self.now - 600), Self.now - 600)]
            #expect(try await store.ingest([batch]).first?.stored == index + 1)
        }
        #expect(try await store.hangCount(app: "shop") == 1)
        let all = EventQuery(screens: ScreenQuery(from: Self.now - 86_400, to: Self.now))
        let groups = try await store.hangGroups(app: "shop", query: all, source: .sdk, limit: 100)
        #expect(groups.count == 1)
        #expect(groups.first?.fatal == 1 && groups.first?.hangs == 1)
        #expect(groups.first?.appVersions == ["3.0.0"] && groups.first?.screens == ["Checkout"])
        _ = keepAlive
    }

    @Test("MetricKit hangs are stored with their payload, once per digest, under its admitted values, apart from the SDK's", arguments: Kind.allCases)
    func metricKitHangs(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        var record = MetricKitRecord(digest: "d1:0", receivedAt: Self.now, begin: Self.now - 7200, end: Self.now - 3600, appVersion: "3.1.0",
                                     osVersion: "18.1", deviceModel: "iPhone14,5", scrollHitchTimeRatio: nil, hangDiagnostics: 2,
                                     hangTime: 3.5, longestHang: 2, histogramHangs: 0)
        record.hangs = [MetricKitHang(diagnostic: 0, duration: 2, summary: HangSummary(HangStackFixtures.stack(site: 0x215c))),
                        MetricKitHang(diagnostic: 1, duration: 1.5, summary: HangSummary(HangStackFixtures.stack(site: 0x215c)))]
        #expect(try await store.storeMetricKit(app: "shop", records: [record]) == 1)
        #expect(try await store.storeMetricKit(app: "shop", records: [record]) == 0)
        let all = EventQuery(screens: ScreenQuery(from: Self.now - 86_400, to: Self.now))
        let groups = try await store.hangGroups(app: "shop", query: all, source: .metrickit, limit: 100)
        #expect(groups.count == 1)
        #expect(groups.first?.hangs == 2 && groups.first?.duration == 3.5 && groups.first?.fatal == 0)
        #expect(groups.first?.appVersions == ["3.1.0"] && groups.first?.screens == [""])
        #expect(groups.first?.signature == "73d406b3246a378bbefc16429a4d8133+0x215b")
        #expect(try await store.hangGroups(app: "shop", query: all, source: .sdk, limit: 100).isEmpty)
        var filtered = all
        filtered.screens[.deviceModel] = "iPhone14,5"
        #expect(try await store.hangGroups(app: "shop", query: filtered, source: .metrickit, limit: 100).count == 1)
        filtered.screens[.deviceModel] = "iPhone15,2"
        #expect(try await store.hangGroups(app: "shop", query: filtered, source: .metrickit, limit: 100).isEmpty)
        _ = keepAlive
    }

    @Test("Symbol tables are stored per app and image, the latest upload winning, and read back by id", arguments: Kind.allCases)
    func symbols(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let image = SymbolUploadTests.image
        try await store.storeSymbols(app: "shop", images: [image], now: Self.now - 60)
        var newer = image
        newer.symbols = [SymbolUpload.Symbol(offset: 0x1000, size: 0x40, name: "renamed()")]
        try await store.storeSymbols(app: "shop", images: [newer], now: Self.now)
        var other = image
        other.id = "5307fcdea6d530a49e32df2420ec6a1b"
        other.name = "Other"
        try await store.storeSymbols(app: "shop", images: [other], now: Self.now)
        let listed = try await store.symbolImages(app: "shop")
        #expect(listed.map(\.name) == ["Other", "Shop"])
        #expect(listed.last?.symbols == 1 && listed.last?.uploadedAt == ISO8601.format(unixSeconds: Self.now))
        let tables = try await store.symbolTables(app: "shop", ids: [image.id, other.id, "00000000000000000000000000000000"])
        #expect(tables.count == 2)
        #expect(tables[image.id]?.name(at: 0x1030) == "renamed()")
        #expect(tables[other.id] == SymbolTableBlob(image.symbols))
        #expect(try await store.symbolTables(app: "other", ids: [image.id]).isEmpty)
        #expect(try await store.symbolImages(app: "other").isEmpty)
        _ = keepAlive
    }

    @Test("Symbol tables are stored in chunks: the index and the chunks asked for read back, an upload with fewer chunks leaves none of the earlier", arguments: Kind.allCases)
    func symbolChunks(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let symbols = (0..<600).map { SymbolUpload.Symbol(offset: 0x1000 + UInt64($0) * 0x40, size: 0x30, name: "function\($0)()") }
        let chunkSymbols = SymbolTableIndex.defaultChunkSymbols
        let (expected, ranges) = SymbolTableIndex.chunks(of: symbols)
        #expect(ranges.count == 3, "600 symbols in chunks of \(chunkSymbols)")
        let image = SymbolUpload.Image(id: SymbolUploadTests.image.id, name: "Shop", arch: "arm64", symbols: symbols)
        try await store.storeSymbols(app: "shop", images: [image], now: Self.now - 60)
        let indexes = try await store.symbolIndexes(app: "shop", ids: [image.id, "00000000000000000000000000000001"])
        #expect(indexes == [image.id: expected])
        let chunks = try await store.symbolChunks(app: "shop", id: image.id, chunks: [0, 2, 7])
        #expect(chunks.keys.sorted() == [0, 2], "a chunk past the last is absent")
        #expect(chunks[0] == SymbolTableBlob(symbols[ranges[0]]) && chunks[2] == SymbolTableBlob(symbols[ranges[2]]))
        #expect(try await store.symbolTables(app: "shop", ids: [image.id])[image.id] == SymbolTableBlob(symbols), "read whole, joined")
        #expect(try await store.symbolChunks(app: "other", id: image.id, chunks: [0]).isEmpty)
        #expect(try await store.symbolIndexes(app: "other", ids: [image.id]).isEmpty)

        // Uploaded again, smaller: one chunk, and the earlier second and third are gone.
        var smaller = image
        smaller.symbols = Array(symbols.prefix(10))
        try await store.storeSymbols(app: "shop", images: [smaller], now: Self.now)
        #expect(try await store.symbolIndexes(app: "shop", ids: [image.id])[image.id]?.chunkCount == 1)
        let after = try await store.symbolChunks(app: "shop", id: image.id, chunks: [0, 1, 2])
        #expect(after.keys.sorted() == [0] && after[0] == SymbolTableBlob(smaller.symbols))
        #expect(try await store.symbolTables(app: "shop", ids: [image.id])[image.id] == SymbolTableBlob(smaller.symbols))

        // An empty table is an index of no chunks.
        smaller.symbols = []
        try await store.storeSymbols(app: "shop", images: [smaller], now: Self.now + 1)
        #expect(try await store.symbolIndexes(app: "shop", ids: [image.id])[image.id]?.chunkCount == 0)
        #expect(try await store.symbolTables(app: "shop", ids: [image.id])[image.id]?.count == 0)
        _ = keepAlive
    }

    @Test("A table stored whole (before the stores kept chunks) still reads whole, and has no index", arguments: Kind.allCases)
    func symbolTableStoredWhole(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let image = SymbolUploadTests.image
        let whole = SymbolTableBlob.bytes(of: image.symbols)
        // The row as migration v16 (SQLite) and migration 4 (ClickHouse) stores wrote it.
        if let sqlite = store as? SQLiteStore {
            try await sqlite.database.write { db in
                try db.execute(sql: "INSERT INTO symbol_tables (app_id, image_id, name, arch, symbols, count, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               arguments: ["shop", image.id, image.name, image.arch, Data(whole), image.symbols.count, Self.now])
            }
        } else if let clickhouse = store as? ClickHouseStore {
            var row = RowBinaryWriter()
            row.append("shop"); row.append(image.id); row.append(image.name); row.append(image.arch)
            row.append(Base64.encode(whole)); row.append(UInt32(image.symbols.count)); row.append(Self.now)
            try await clickhouse.client.insert(into: "symbol_tables", columns: ["app_id", "image_id", "name", "arch", "symbols", "count", "uploaded_at"], rows: row.bytes,
                                                   settings: [("insert_distributed_sync", "1")])
        } else {
            Issue.record("a store this test does not know: \(type(of: store))")
        }
        #expect(try await store.symbolImages(app: "shop").map(\.id) == [image.id])
        #expect(try await store.symbolIndexes(app: "shop", ids: [image.id]).isEmpty)
        #expect(try await store.symbolTables(app: "shop", ids: [image.id])[image.id] == SymbolTableBlob(image.symbols))
        // Through the cache, past its capacity: read whole, and named as before.
        let cache = SymbolCache(capacity: 0)
        let found = try await cache.tables(app: "shop", lookups: [image.id: [0x1010]], store: store)
        #expect(found[image.id]?.name(at: 0x1010) == "naïve \"b\"(_:)")
        _ = keepAlive
    }

    @Test("Retention deletes hangs that began before the cutoff", arguments: Kind.allCases)
    func retention(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        _ = try await store.ingest([StoreContractTests.ingestBatch(Self.batch(id: "old", screen: "Feed", version: "1", start: Self.now - 7200))])
        _ = try await store.ingest([StoreContractTests.ingestBatch(Self.batch(id: "new", screen: "Feed", version: "1", start: Self.now - 600))])
        #expect(try await store.hangCount(app: "shop") == 6)
        #expect(try await store.deleteHangs(startedBefore: Self.now - 3600, limit: 100) == 3)
        #expect(try await store.hangCount(app: "shop") == 3)
        let service = RetentionService(store: store, retention: 300, clock: { Self.now + 7200 })
        _ = try await service.sweep()
        #expect(try await store.hangCount(app: "shop") == 0)
        _ = keepAlive
    }
}
