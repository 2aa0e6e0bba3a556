import Foundation
import FramescopeClickHouse
import FramescopeClickHouseTesting
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// Issue 30, item 5 (and item 4's MetricKit part) on the stores: limits over the whole
/// cardinality window, not just per day, so that backdating cannot multiply the daily
/// limits by the days an event may start in; MetricKit payloads through the same gate and
/// retention. Each test runs on SQLite (a file) and ClickHouse (one server).
@Suite("Cardinality window")
struct CardinalityWindowTests {
    static let now = StoreContractTests.now
    static let kinds: [StoreContractTests.Kind] = [.sqliteFile, .clickhouse]

    /// A directory removed when the test lets go of it.
    final class Directory {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-window-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// A fresh store of `kind` with `limits`, and what must stay alive while it is used.
    static func store(_ kind: StoreContractTests.Kind, limits: CardinalityLimits) async throws -> (store: any CollectorStore, keepAlive: AnyObject?) {
        switch kind {
        case .sqliteFile:
            let directory = try Directory()
            return (try SQLiteStore(path: directory.url.appendingPathComponent("c.sqlite").path, cardinality: limits), directory)
        case .sqliteMemory:
            return (try SQLiteStore(inMemoryWith: limits), nil)
        case .clickhouse:
            let server = try await SharedClickHouse.shared.server()
            let client = ClickHouseClient(location: server.location(database: SharedClickHouse.freshDatabase()))
            return (try await ClickHouseStore(client: client, cardinality: limits), server)
        case .clickhouseCluster:
            let cluster = try await SharedClickHouse.shared.cluster()
            let client = ClickHouseClient(location: cluster.location(database: SharedClickHouse.freshDatabase()))
            return (try await ClickHouseStore(client: client, cardinality: limits), cluster)
        }
    }

    /// One simulated visit, reused: building a report is the slow part of a test batch.
    static let visit = makeBatch(id: "template", count: 1, start: now).events[0]

    /// A batch of one visit per screen, a minute apart from `start`, with the version, model,
    /// OS and tags given.
    static func batch(_ id: String, screens: [String], version: String = "1.0", model: String = "iPhone14,5", os: String = "18.1",
                      tags: [String: String] = [:], start: Double) -> IngestBatch {
        let events = screens.enumerated().map { index, screen -> (ScreenVisitEvent, Double) in
            var event = visit
            event.screen = screen
            event.startedAt = ISO8601.format(unixSeconds: start + Double(index) * 60)
            event.context.tags = tags
            return (event, start + Double(index) * 60)
        }
        return IngestBatch(app: "shop", batchId: id, appVersion: version, osVersion: os, deviceModel: model, events: events,
                           rawEvents: events.map { _ in "{}" }, receivedAt: now)
    }

    /// The start of the UTC day `days` before the test's now, plus an hour.
    static func day(_ days: Int) -> Double {
        Double(RollupLevel.floor(Int64(now), to: 86_400)) - Double(days) * 86_400 + 3600
    }

    @Test("Backdated values past the window limit fold into (other) on any day; values already in the window keep coming on new days",
          arguments: kinds)
    func backdatingFolds(_ kind: StoreContractTests.Kind) async throws {
        var limits = CardinalityLimits()
        limits.screens = 3
        limits.screensInWindow = 5
        limits.appVersions = 2
        limits.appVersionsInWindow = 3
        limits.deviceModels = 2
        limits.deviceModelsInWindow = 3
        let (store, keepAlive) = try await Self.store(kind, limits: limits)
        _ = try await store.createApp(name: "Shop", id: "shop")
        // Four days, each backdated further than the last would be in a flood: the daily
        // limits alone would admit 3 screens a day, every day.
        let a = try await store.ingest(Self.batch("a", screens: ["A", "B", "C", "D"], version: "1.0", model: "m1", start: Self.day(10)))
        #expect(a.folded == ["screen": 1], "D is the day's fourth screen")
        let b = try await store.ingest(Self.batch("b", screens: ["D", "E", "F"], version: "2.0", model: "m2", start: Self.day(9)))
        #expect(b.folded == ["screen": 1], "F would be the window's sixth screen")
        let c = try await store.ingest(Self.batch("c", screens: ["A", "G"], version: "3.0", model: "m3", start: Self.day(8)))
        #expect(c.folded == ["screen": 1], "A is in the window already; G is not")
        let d = try await store.ingest(Self.batch("d", screens: ["B"], version: "4.0", model: "m1", start: Self.day(7)))
        #expect(d.folded == ["appVersion": 1], "a fourth version for the window; m1 is in it already")
        let range = ScreenQuery(from: Self.day(11), to: Self.now)
        let screens = try await store.screens(app: "shop", query: range)
        #expect(screens.map(\.screen).sorted() == ["(other)", "A", "B", "C", "D", "E"])
        #expect(screens.first { $0.screen == CardinalityLimits.other }?.visits == 3)
        #expect(try await store.dimensionValues(app: "shop", dimension: .appVersion, from: range.from, to: range.to) == ["(other)", "1.0", "2.0", "3.0"])
        #expect(try await store.dimensionValues(app: "shop", dimension: .deviceModel, from: range.from, to: range.to) == ["m1", "m2", "m3"])
        _ = keepAlive
    }

    @Test("The window forgets a value once the ledger's days that hold it are swept; then a new value comes in again", arguments: kinds)
    func windowForgets(_ kind: StoreContractTests.Kind) async throws {
        var limits = CardinalityLimits()
        limits.screensInWindow = 2
        let (store, keepAlive) = try await Self.store(kind, limits: limits)
        _ = try await store.createApp(name: "Shop", id: "shop")
        _ = try await store.ingest(Self.batch("old", screens: ["A", "B"], start: Self.day(20)))
        #expect(try await store.ingest(Self.batch("full", screens: ["C"], start: Self.day(5))).folded == ["screen": 1])
        // The sweep forgets the ledger's days before its cutoff (here: as if 13 days had passed).
        _ = try await store.pruneAccessRecords(batchesReceivedBefore: Self.day(19), now: Self.now, limit: 10_000)
        #expect(try await store.ingest(Self.batch("again", screens: ["C"], start: Self.day(5))).folded.isEmpty)
        let screens = try await store.screens(app: "shop", query: ScreenQuery(from: Self.day(21), to: Self.now)).map(\.screen)
        #expect(screens.sorted() == ["(other)", "A", "B", "C"])
        _ = keepAlive
    }

    @Test("A declared tag's values have a window limit too", arguments: kinds)
    func tagWindow(_ kind: StoreContractTests.Kind) async throws {
        var limits = CardinalityLimits()
        limits.tagValuesInWindow = 2
        let (store, keepAlive) = try await Self.store(kind, limits: limits)
        _ = try await store.createApp(name: "Shop", id: "shop")
        _ = try await store.declareTagKey(app: "shop", key: "arm", now: Self.day(30))
        for (index, arm) in ["x", "y", "z"].enumerated() {
            let result = try await store.ingest(Self.batch("t\(index)", screens: ["Feed"], tags: ["arm": arm], start: Self.day(10 - index)))
            #expect(result.folded == (arm == "z" ? ["tag.arm": 1] : [:]), "\(arm)")
        }
        #expect(try await store.tagValues(app: "shop", key: "arm", from: Self.day(11), to: Self.now) == ["(other)", "x", "y"])
        _ = keepAlive
    }

    static func record(_ digest: String, version: String, model: String = "iPhone14,5", os: String = "18.1", end: Double) -> MetricKitRecord {
        MetricKitRecord(digest: digest, receivedAt: now, begin: end - 86_400, end: end, appVersion: version, osVersion: os,
                        deviceModel: model, scrollHitchTimeRatio: 4, hangDiagnostics: 1, hangTime: 0.5, longestHang: 0.5, histogramHangs: 0)
    }

    @Test("MetricKit payloads' versions and models pass the events' gate: one ledger, daily and window limits, (other) past them",
          arguments: kinds)
    func metricKitFolds(_ kind: StoreContractTests.Kind) async throws {
        var limits = CardinalityLimits()
        limits.appVersionsInWindow = 2
        limits.deviceModels = 1
        let (store, keepAlive) = try await Self.store(kind, limits: limits)
        _ = try await store.createApp(name: "Shop", id: "shop")
        // An event's version takes one of the window's two places.
        _ = try await store.ingest(Self.batch("e", screens: ["Feed"], version: "1.0", model: "m1", start: Self.day(6)))
        let records = [
            Self.record("p1", version: "1.0", model: "m1", end: Self.day(5)),
            Self.record("p2", version: "2.0", model: "m1", end: Self.day(4)),
            Self.record("p4", version: "", model: "m1", end: Self.day(3)),
            Self.record("p3", version: "3.0", model: "m2", end: Self.day(3)),
        ]
        #expect(try await store.storeMetricKit(app: "shop", records: records) == 4)
        #expect(try await store.storeMetricKit(app: "shop", records: records) == 0, "stored before: not again")
        let versions = try await store.metricKitVersions(app: "shop", query: ScreenQuery(from: Self.day(7), to: Self.now))
        #expect(versions.map(\.appVersion) == ["", "(other)", "1.0", "2.0"])
        // m2 came second on its day, past the daily limit of one model: p3 is stored as (other).
        let byModel = try await store.metricKitVersions(app: "shop", query: ScreenQuery(from: Self.day(7), to: Self.now, [.deviceModel: "(other)"]))
        #expect(byModel.map(\.appVersion) == ["(other)"])
        // The ledger is shared: the events' next new version finds the window full.
        #expect(try await store.ingest(Self.batch("f", screens: ["Feed"], version: "5.0", model: "m1", start: Self.day(2))).folded == ["appVersion": 1])
        _ = keepAlive
    }

    @Test("MetricKit payloads go with the raw events: the retention sweep deletes those that ended before its cutoff", arguments: kinds)
    func metricKitRetention(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await Self.store(kind, limits: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        _ = try await store.storeMetricKit(app: "shop", records: [
            Self.record("old", version: "1.0", end: Self.now - 31 * 86_400),
            Self.record("new", version: "2.0", end: Self.now - 86_400),
        ])
        let all = ScreenQuery(from: Self.now - 60 * 86_400, to: Self.now)
        #expect(try await store.metricKitVersions(app: "shop", query: all).map(\.appVersion) == ["1.0", "2.0"])
        let retention = RetentionService(store: store, retention: 30 * 86_400, chunk: store.retentionChunk, clock: { Self.now })
        _ = try await retention.sweep()
        #expect(try await store.metricKitVersions(app: "shop", query: all).map(\.appVersion) == ["2.0"])
        _ = keepAlive
    }

    @Test("Value lists for menus: most visits first, a search that matches ASCII letters in either case, a limit", arguments: kinds)
    func topValues(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await Self.store(kind, limits: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        _ = try await store.declareTagKey(app: "shop", key: "arm", now: Self.day(30))
        for (version, visits) in [("1.0", 1), ("2.0", 3), ("2.1-Beta", 2), ("3.0", 2)] {
            let screens = Array(repeating: "Feed", count: visits)
            _ = try await store.ingest(Self.batch("v\(version)", screens: screens, version: version, tags: ["arm": "arm-" + version], start: Self.day(3)))
        }
        let (from, to) = (Self.day(4), Self.now)
        let top = try await store.topDimensionValues(app: "shop", dimension: .appVersion, from: from, to: to, search: nil, limit: 10)
        #expect(top == [ValueVisits(value: "2.0", visits: 3), ValueVisits(value: "2.1-Beta", visits: 2), ValueVisits(value: "3.0", visits: 2),
                        ValueVisits(value: "1.0", visits: 1)])
        #expect(try await store.topDimensionValues(app: "shop", dimension: .appVersion, from: from, to: to, search: nil, limit: 2).map(\.value)
                == ["2.0", "2.1-Beta"])
        #expect(try await store.topDimensionValues(app: "shop", dimension: .appVersion, from: from, to: to, search: "beta", limit: 10).map(\.value)
                == ["2.1-Beta"])
        #expect(try await store.topDimensionValues(app: "shop", dimension: .appVersion, from: from, to: to, search: "2.", limit: 10).map(\.value)
                == ["2.0", "2.1-Beta"])
        #expect(try await store.topDimensionValues(app: "shop", dimension: .lowPower, from: from, to: to, search: nil, limit: 10)
                == [ValueVisits(value: "false", visits: 8)])
        #expect(try await store.topTagValues(app: "shop", key: "arm", from: from, to: to, search: "ARM-2", limit: 10).map(\.value)
                == ["arm-2.0", "arm-2.1-Beta"])
        #expect(try await store.topDimensionValues(app: "shop", dimension: .appVersion, from: Self.day(40), to: Self.day(20), search: nil, limit: 10).isEmpty)
        _ = keepAlive
    }
}
