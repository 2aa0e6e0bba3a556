import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import GRDB
import Testing

/// What only the SQLite store does: reopening a file, checkpoints, the stored forms and
/// their migrations. What every store does is in ``StoreContractTests``.
@Suite("SQLite store")
struct SQLiteStoreTests {
    let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    func ingest(_ store: SQLiteStore, _ batch: EventBatch, app: String = "shop") async throws -> IngestResult {
        let events = batch.events.map { ($0, ISO8601.parse($0.startedAt)!) }
        return try await store.ingest(IngestBatch(app: app, batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                                                  deviceModel: batch.device.model, events: events, rawEvents: events.map { _ in "{}" }, receivedAt: now))
    }

    @Test("Every registry dimension has its column in the events table and in the key of every rollup table (a new dimension needs its migration)")
    func registryColumnsExist() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        try await store.database.read { db in
            let eventColumns = Set(try db.columns(in: "events").map(\.name))
            for dimension in QueryDimension.all { #expect(eventColumns.contains(dimension.storeColumn), "events.\(dimension.storeColumn)") }
            for level in RollupLevel.allCases {
                let table = SQLiteStore.tableName(level)
                let key = Set(try db.primaryKey(table).columns)
                #expect(key == Set(["app_id", "bucket"] + QueryDimension.all.map(\.storeColumn)), "\(table)")
            }
        }
    }

    @Test("Statistics are stored by figure name; migration v7 turns v6's positional form into exactly that")
    func statisticsByName() throws {
        let report = visitReport(seed: 3)
        var statistics = VisitStatistics(whole: report.whole, motion: report.motion)
        statistics.merge(VisitStatistics(whole: visitReport(seed: 4).whole, motion: nil))
        #expect(statistics.metrics.count == VisitMetric.allCases.count)
        #expect(try VisitStatistics(binary: statistics.binaryEncoded()) == statistics)
        // v6's form, written by hand: each figure under its position in v6's enum.
        var v6 = BinaryWriter()
        v6.unsigned(UInt64(statistics.metrics.count))
        for (position, name) in MigrationV7.namesByPosition.enumerated() {
            let metric = try #require(VisitMetric(rawValue: name))
            let figure = try #require(statistics.metrics[metric])
            v6.unsigned(UInt64(position))
            v6.unsigned(UInt64(figure.visits))
            for sum in [figure.sumX, figure.sumY, figure.sumXX, figure.sumYY, figure.sumXY] { v6.double(sum) }
            v6.unsigned(UInt64(figure.zeroValues))
            v6.pairs(figure.positiveValues.buckets.map { ($0.index, $0.count) })
        }
        #expect(MigrationV7.convert(v6.bytes) == statistics.binaryEncoded())
        #expect(MigrationV7.convert([0]) == [0])
        // Not v6's form: left alone by the migration, refused (not misread) by today's decoder.
        #expect(MigrationV7.convert(v6.bytes + [0]) == nil)
        #expect(MigrationV7.convert([1, 9]) == nil)
        #expect(throws: BinaryReportError.self) { try VisitStatistics(binary: v6.bytes) }
        var twice = BinaryWriter()
        twice.unsigned(2)
        for _ in 0..<2 {
            twice.name("hangRate")
            twice.unsigned(0)
            for _ in 0..<5 { twice.double(0) }
            twice.unsigned(0)
            twice.pairs([])
        }
        #expect(throws: BinaryReportError.self) { try VisitStatistics(binary: twice.bytes) }
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
}
