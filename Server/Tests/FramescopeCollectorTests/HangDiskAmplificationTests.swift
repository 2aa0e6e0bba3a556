import CompressNIO
import Foundation
import FramescopeClickHouse
import FramescopeClickHouseTesting
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import FramescopeTraces
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Bytes a store keeps per byte a device sends, for the most hang rows a legal body can make
/// (issue 43, item 3): every visit with its 32 stacked hangs and its 16 longest tags. Before
/// migration v18 each hang row copied the visit's tags and filled a 4 KiB page alone: this
/// body grew SQLite by 355 bytes a byte sent (583 MB for 1.64 MB); with the tags stored once
/// per app and tags object (v18), 82 (134 MB); with the place and stack stored once and the
/// key digested (v19), 35 (56 MB). MetricKit bodies: 202 with v19 alone, 40 with the
/// hang-row allowance (``HangRowAllowance``).
@Suite("Hang disk amplification")
struct HangDiskAmplificationTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    /// The bound on bytes stored per byte received (gzip as sent), raw events, hang rows
    /// and their indexes together (docs/security.md): 50, the SQLite store's 35 measured
    /// here with room for page fill.
    static let bound = 50.0

    /// The same bound for MetricKit bodies: 50, the 40 measured here with room for page
    /// fill.
    static let metricKitBound = 50.0

    /// A hostile but legal batch of `visits` visits: screens of 128 bytes, 16 tags of 64-byte
    /// keys and values, and 32 hangs each with the smallest stack (one image, one frame, one
    /// sample), all alike but for the visit's start, so that gzip squeezes the body as far
    /// as it goes and each byte sent makes as many hang rows as it can.
    static func hostileBatch(id: String, visits: Int) -> EventBatch {
        let image = HangStack.Image(id: "73d406b3246a378bbefc16429a4d8133", name: "Shop", size: 1 << 20, app: true)
        let stack = HangStack(images: [image], frames: [HangStack.Frame(image: 0, offset: 0x215c)],
                              samples: [HangStack.Sample(at: 0, frames: [0])])
        let tags = Dictionary(uniqueKeysWithValues: (0..<VisitContext.maximumTags).map { index in
            (String(format: "k%02d", index) + String(repeating: "k", count: VisitContext.maximumTagLength - 3),
             String(repeating: "v", count: VisitContext.maximumTagLength))
        })
        let screen = String(repeating: "S", count: 128)
        var batch = makeBatch(id: id, screen: screen, count: visits, start: now - 3 * 86_400)
        let first = batch.events[0]
        for index in batch.events.indices {
            batch.events[index].report = first.report
            batch.events[index].motion = first.motion
            batch.events[index].duration = first.duration
            batch.events[index].startedAt = ISO8601.format(unixSeconds: now - 3 * 86_400 + Double(index) * 7)
            batch.events[index].context.tags = tags
            batch.events[index].hangs = (0..<HangStack.maximumStackedHangsPerVisit).map { hang in
                HangRecord(offset: Double(hang) * 0.18, duration: 0.15, stack: stack)
            }
        }
        return batch
    }

    /// The store file's size in bytes: its pages times the page size.
    static func storedBytes(_ store: SQLiteStore) async throws -> Int {
        try await store.database.read { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return pages * size
        }
    }

    /// Posts four hostile bodies (``hostileBatch(id:visits:)``, 1,000 visits each) gzipped
    /// through the ingest route to `store`; returns the bytes sent.
    static func postHostileBodies(to store: any CollectorStore) async throws -> Int {
        let shop = try await store.createApp(name: "Shop", id: nil)
        var limits = IngestLimits()
        limits.maximumBodyBytes = 4 << 20
        let router = Collector(store: store, limits: limits, pace: BodyPace(grace: 3_600, maximumSeconds: 3_600),
                               clock: { Self.now }, adminToken: "admin-token-for-tests-0123456789").router
        let sent = try await Application(router: router).test(.router) { client in
            var sent = 0
            for round in 0..<4 {
                var plain = ByteBuffer(data: try jsonData(Self.hostileBatch(id: "hostile-\(round)", visits: 1000)))
                let zipped = try plain.compress(with: .gzip())
                sent += zipped.readableBytes
                let headers: HTTPFields = [.authorization: "Bearer \(shop.ingestKey)", .contentEncoding: "gzip"]
                let response = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: zipped)
                #expect(response.status == .accepted, "\(String(buffer: response.body))")
            }
            return sent
        }
        #expect(try await store.hangCount(app: "shop") == 4 * 1000 * 32)
        return sent
    }

    @Test("A gzip body of visits with 32 stacked hangs and 16 long tags each grows SQLite by under 100 bytes a byte sent")
    func sqlite() async throws {
        let temporary = try TemporaryStore()
        let before = try await Self.storedBytes(temporary.store)
        let sent = try await Self.postHostileBodies(to: temporary.store)
        let grown = try await Self.storedBytes(temporary.store) - before
        let ratio = Double(grown) / Double(sent)
        let tables = try await temporary.store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name HAVING SUM(pgsize) > 4096 ORDER BY 2 DESC").map { "\($0[0] as String) \($0[1] as Int)" }
        }
        print("hang disk amplification, SQLite: \(sent) bytes sent (gzip), store grew \(grown) bytes: \(ratio)×; by table and index: \(tables.joined(separator: ", "))")
        #expect(ratio < Self.bound, "\(grown) bytes stored for \(sent) sent")
    }

    /// The most MetricKit hang rows a legal body can make: a list of
    /// ``IngestService/maximumMetricKitPayloads`` payloads, each with
    /// ``MetricKitParser/maximumHangCallStacks`` hang diagnostics of the smallest tree (one
    /// frame), all alike, so that gzip squeezes the body as far as it goes.
    static func hostileMetricKitBody() -> String {
        let tree = MetricKitDepthTests.chain(depth: 1)
        let payload = MetricKitDepthTests.payload(hangs: Array(repeating: (tree, "1 sec"), count: MetricKitParser.maximumHangCallStacks))
        return "[" + Array(repeating: payload, count: IngestService.maximumMetricKitPayloads).joined(separator: ",") + "]"
    }

    @Test("A gzip body of MetricKit payloads with 32 hang diagnostics each grows SQLite by under the stated bound a byte sent")
    func metricKitSQLite() async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: nil)
        var limits = IngestLimits()
        limits.maximumBodyBytes = 4 << 20
        limits.maximumDecompressedBytes = 64 << 20
        let router = Collector(store: temporary.store, limits: limits, pace: BodyPace(grace: 3_600, maximumSeconds: 3_600),
                               clock: { Self.now }, adminToken: "admin-token-for-tests-0123456789").router
        let before = try await Self.storedBytes(temporary.store)
        let store = temporary.store
        let sent = try await Application(router: router).test(.router) { client in
            var plain = ByteBuffer(string: Self.hostileMetricKitBody())
            let zipped = try plain.compress(with: .gzip())
            let headers: HTTPFields = [.authorization: "Bearer \(shop.ingestKey)", .contentEncoding: "gzip"]
            let response = try await client.execute(uri: "/v1/metrickit", method: .post, headers: headers, body: zipped)
            #expect(response.status == .accepted, "\(String(buffer: response.body).prefix(300))")
            let answer = try JSONDecoder().decode(MetricKitResponse.self, from: Data(buffer: response.body))
            let allowed = zipped.readableBytes / HangRowAllowance.sentBytesPerRow
            #expect(answer.accepted == IngestService.maximumMetricKitPayloads)
            #expect(answer.skipped.count == 1 && answer.skipped.first?.message.hasPrefix("\(32_000 - allowed) hang stacks, from this one on,") == true,
                    "\(answer.skipped)")
            #expect(try await store.hangCount(app: "shop") == allowed)
            return zipped.readableBytes
        }
        let grown = try await Self.storedBytes(temporary.store) - before
        let ratio = Double(grown) / Double(sent)
        let hangs = try await temporary.store.hangCount(app: "shop")
        let tables = try await temporary.store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name HAVING SUM(pgsize) > 4096 ORDER BY 2 DESC").map { "\($0[0] as String) \($0[1] as Int)" }
        }
        print("metrickit disk amplification, SQLite: \(sent) bytes sent (gzip), \(hangs) hangs, store grew \(grown) bytes: \(ratio)×; \(tables.joined(separator: ", "))")
        #expect(ratio < Self.metricKitBound, "\(grown) bytes stored for \(sent) sent")
    }

    @Test("A request stores one hang stack per 8 bytes it was sent as; a real payload, gzipped, stores all of its hangs")
    func allowance() async throws {
        var allowance = HangRowAllowance(sentBytes: 17)
        #expect(allowance.remaining == 2)
        #expect(allowance.take() && allowance.take() && !allowance.take() && allowance.remaining == 0)
        #expect(HangRowAllowance(sentBytes: -5).remaining == 0)

        try await CollectorRouteTests().withCollector { client, shop, _ in
            let body = try MetricKitRouteTests.corpusPayload("meter_xcode-simulated_ios14_diagnostic-payload.json")
            let response = try await MetricKitRouteTests().post(client, shop.ingestKey, body, gzip: true)
            #expect(response.status == .accepted)
            let answer = try JSONDecoder().decode(MetricKitResponse.self, from: Data(buffer: response.body))
            #expect(answer.accepted == 1 && answer.skipped.isEmpty, "\(answer)")
            let groups = try await MetricKitDepthTests().hangs(client, shop.readKey).metricKitGroups
            let diagnostics = try await MetricKitRouteTests().versions(client, shop.readKey).map(\.hangDiagnostics).reduce(0, +)
            #expect(diagnostics >= 1 && groups.map(\.hangs).reduce(0, +) == diagnostics, "every hang diagnostic stored with its stack")
        }
    }

    @Test("The same bodies grow ClickHouse (its active parts' bytes on disk) by under 100 bytes a byte sent")
    func clickhouse() async throws {
        let server = try await SharedClickHouse.shared.server()
        let database = SharedClickHouse.freshDatabase()
        let client = ClickHouseClient(location: server.location(database: database))
        let store = try await ClickHouseStore(client: client)
        func bytesOnDisk() async throws -> [String: Int] {
            var tables: [String: Int] = [:]
            for row in try await client.rows("""
                SELECT table, sum(bytes_on_disk) FROM system.parts WHERE database = \(ClickHouseSQL.quote(database)) AND active GROUP BY table
                """) where row.count == 2 {
                tables[row[0]] = Int(row[1]) ?? 0
            }
            return tables
        }
        let before = try await bytesOnDisk().values.reduce(0, +)
        let sent = try await Self.postHostileBodies(to: store)
        let tables = try await bytesOnDisk()
        let grown = tables.values.reduce(0, +) - before
        let ratio = Double(grown) / Double(sent)
        print("hang disk amplification, ClickHouse: \(sent) bytes sent (gzip), parts grew \(grown) bytes: \(ratio)×; hangs \(tables["hangs"] ?? 0), events \(tables["events"] ?? 0)")
        #expect(ratio < Self.bound, "\(grown) bytes stored for \(sent) sent")
        _ = server
    }

    @Test("Migrations v18 and v19 move each hang's tags, place and stack into rows stored once per app; filters, keys and retention read them")
    func migration() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-v19-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("collector.sqlite").path
        // Hangs as v17 stored them: each row with its visit's tags.
        do {
            let queue = try DatabaseQueue(path: path)
            try SQLiteStore.migrator.migrate(queue, upTo: MigrationV17.name)
            let stack = HangRow(key: "", startedAt: 0, dimensionValues: [], tags: [:], duration: 0, fatal: false, source: .sdk,
                                summary: HangSummary(HangStackFixtures.stack(site: 0x215c)))
            try await queue.write { db in
                for (app, key, tags, start) in [("shop", "a", #"{"plan":"pro"}"#, 100.0), ("shop", "b", #"{"plan":"pro"}"#, 200.0),
                                                ("shop", "c", #"{"plan":"free"}"#, 300.0), ("other", "a", #"{"plan":"pro"}"#, 400.0)] {
                    try db.execute(sql: """
                        INSERT INTO hangs (app_id, hang_key, started_at, screen, app_version, os_version, device_model, network, low_power,
                                           thermal_state, max_refresh_rate, tags, duration, fatal, source, signature, dominant_image_id,
                                           dominant_image, dominant_offset, samples, stack)
                        VALUES (?, ?, ?, 'Feed', '3.1.0', '18.1', 'iPhone14,5', 'wifi', 0, 'nominal', '60', ?, 0.5, 0, 'sdk', ?, ?, 'Shop', ?, 5, ?)
                        """, arguments: [app, key, start, tags, stack.summary.signature, stack.summary.dominant?.imageId,
                                         stack.summary.dominant.map { Int64(bitPattern: $0.lookupOffset) }, stack.storedStack])
                }
            }
        }
        let store = try SQLiteStore(path: path)
        func count(_ sql: String) async throws -> Int {
            try await store.database.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
        }
        #expect(try await count("SELECT COUNT(*) FROM hang_tags") == 3, "shop's two tags objects and other's one")
        #expect(try await count("SELECT COUNT(*) FROM hang_contexts") == 3, "one place per app and tags object")
        #expect(try await count("SELECT COUNT(*) FROM hang_stacks") == 2, "each app's one stack once")
        #expect(try await count("SELECT COUNT(*) FROM hangs WHERE length(hang_key) = 16") == 4, "every key a 16-byte digest")
        // A key moved by v19 and the same key sent again after it are one key: the live store
        // digests with the migration's function.
        let again = HangRow(key: "a", startedAt: 150, dimensionValues: ["Feed", "3.1.0", "18.1", "iPhone14,5", "wifi", "false", "nominal", "60"],
                            tags: ["plan": "pro"], duration: 9, fatal: false, source: .sdk, summary: HangSummary(HangStackFixtures.stack(site: 0x215c)))
        try await store.database.write { db in try SQLiteStore.insertHangs([again], app: "shop", db) }
        #expect(try await store.hangCount(app: "shop") == 3, "the key a sent again is not stored twice")
        let screens = try await store.hangGroups(app: "shop", query: EventQuery(screens: ScreenQuery(from: 0, to: 1_000)), source: .sdk, limit: 10)
            .map(\.screens)
        #expect(screens == [["Feed"]])
        var query = EventQuery(screens: ScreenQuery(from: 0, to: 1_000))
        #expect(try await store.hangGroups(app: "shop", query: query, source: .sdk, limit: 10).map(\.hangs) == [3])
        query.tags = ["plan": "pro"]
        #expect(try await store.hangGroups(app: "shop", query: query, source: .sdk, limit: 10).map(\.hangs) == [2])
        query.tags = ["plan": "free"]
        #expect(try await store.hangGroups(app: "shop", query: query, source: .sdk, limit: 10).map(\.hangs) == [1])
        #expect(try await store.hangGroups(app: "other", query: query, source: .sdk, limit: 10).isEmpty)

        var feed = EventQuery(screens: ScreenQuery(from: 0, to: 1_000))
        feed.screens[.screen] = "Feed"
        feed.tags = ["plan": "pro"]
        #expect(try await store.hangGroups(app: "shop", query: feed, source: .sdk, limit: 10).map(\.hangs) == [2])
        feed.screens[.screen] = "Cart"
        #expect(try await store.hangGroups(app: "shop", query: feed, source: .sdk, limit: 10).isEmpty)

        // Retention: a tags object, a place and a stack go with the last hang that refers to them.
        #expect(try await store.deleteHangs(startedBefore: 250, limit: 100) == 2)
        let left = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT app_id || ' ' || tags FROM hang_tags ORDER BY app_id, tags") }
        #expect(left == [#"other {"plan":"pro"}"#, #"shop {"plan":"free"}"#])
        #expect(try await store.deleteHangs(startedBefore: 1_000, limit: 100) == 2)
        #expect(try await count("SELECT COUNT(*) FROM hang_tags") == 0)
        #expect(try await count("SELECT COUNT(*) FROM hang_contexts") == 0)
        #expect(try await count("SELECT COUNT(*) FROM hang_stacks") == 0)
    }
}
