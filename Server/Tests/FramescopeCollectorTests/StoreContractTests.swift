import Foundation
import FramescopeClickHouse
import FramescopeClickHouseTesting
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// What every ``CollectorStore`` must do, run against each store the collector has:
/// SQLite on a file, SQLite in memory, ClickHouse on one server, and ClickHouse on a
/// cluster of two shards with ZooKeeper (real servers the run starts on loopback: a
/// missing server fails, never skips).
///
/// Each test talks to the store only through the protocol, so a new store passes by
/// behaving the same, not by sharing code.
@Suite("Store contract")
struct StoreContractTests {
    /// A store under test and what must stay alive while it is used.
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqliteFile = "SQLite on a file"
        case sqliteMemory = "SQLite in memory"
        case clickhouse = "ClickHouse, one server"
        case clickhouseCluster = "ClickHouse, two shards"

        var testDescription: String { rawValue }

        /// A fresh, empty store: its own file, or its own database on the run's servers.
        func make() async throws -> (store: any CollectorStore, keepAlive: AnyObject?) {
            switch self {
            case .sqliteFile:
                let temporary = try TemporaryStore()
                return (temporary.store, temporary)
            case .sqliteMemory:
                return (try SQLiteStore(inMemoryWith: CardinalityLimits()), nil)
            case .clickhouse:
                let server = try await SharedClickHouse.shared.server()
                return (try await ClickHouseStore(client: ClickHouseClient(location: server.location(database: SharedClickHouse.freshDatabase()))), server)
            case .clickhouseCluster:
                let cluster = try await SharedClickHouse.shared.cluster()
                return (try await ClickHouseStore(client: ClickHouseClient(location: cluster.location(database: SharedClickHouse.freshDatabase()))), cluster)
            }
        }
    }

    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    func ingest(_ store: any CollectorStore, _ batch: EventBatch, app: String = "shop", receivedAt: Double = now) async throws -> IngestResult {
        try await store.ingest([Self.ingestBatch(batch, app: app, receivedAt: receivedAt)])[0]
    }

    static func ingestBatch(_ batch: EventBatch, app: String = "shop", receivedAt: Double = now) -> IngestBatch {
        let events = batch.events.compactMap { event in ISO8601.parse(event.startedAt).map { (event, $0) } }
        return IngestBatch(app: app, batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                           deviceModel: batch.device.model, events: events, rawEvents: events.map { _ in "{}" }, receivedAt: receivedAt)
    }

    @Test("Apps get distinct random keys; revoked keys stop working; new keys replace old ones", arguments: Kind.allCases)
    func appsAndKeys(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        let shop = try await store.createApp(name: "Shop", id: nil)
        #expect(shop.app == "shop")
        #expect(shop.ingestKey.hasPrefix("fsi_") && shop.readKey.hasPrefix("fsr_"))
        #expect(shop.ingestKey != shop.readKey)
        #expect(try await store.authenticate(key: shop.ingestKey) == KeyGrant(app: "shop", kind: .ingest))
        #expect(try await store.authenticate(key: shop.readKey) == KeyGrant(app: "shop", kind: .read))
        #expect(try await store.authenticate(key: "fsi_nope") == nil)
        let other = try await store.createApp(name: "Other App!", id: nil)
        #expect(other.app == "other-app")
        await #expect(throws: (any Error).self) { try await store.createApp(name: "Again", id: "shop") }
        #expect(try await store.apps().map(\.app) == ["other-app", "shop"])
        #expect(try await store.revokeApp("shop"))
        #expect(try await !store.revokeApp("nobody"))
        #expect(try await store.authenticate(key: shop.ingestKey) == nil)
        #expect(try await store.apps().first { $0.app == "shop" }?.revoked == true)
        let rotated = try #require(try await store.rotateKeys(app: "shop"))
        #expect(try await store.authenticate(key: rotated.readKey) == KeyGrant(app: "shop", kind: .read))
        #expect(try await store.authenticate(key: shop.readKey) == nil)
        #expect(try await store.apps().first { $0.app == "shop" }?.revoked == false)
        #expect(try await store.rotateKeys(app: "nobody") == nil)
        _ = keepAlive
    }

    @Test("A rotated ingest key keeps working for its grace period; a rotated read key ends its sessions at once", arguments: Kind.allCases)
    func rotationAndSessions(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        let shop = try await store.createApp(name: "Shop", id: nil)
        let now = Date().timeIntervalSince1970
        let newIngest = try #require(try await store.rotateKey(app: "shop", kind: .ingest, gracePeriod: 3600, now: now))
        #expect(try await store.authenticate(key: newIngest) == KeyGrant(app: "shop", kind: .ingest))
        #expect(try await store.authenticate(key: shop.ingestKey) == KeyGrant(app: "shop", kind: .ingest))
        // The grace period is judged at the time the caller gives (the collector's clock).
        #expect(try await store.authenticate(key: shop.ingestKey, now: now + 3599) == KeyGrant(app: "shop", kind: .ingest))
        #expect(try await store.authenticate(key: shop.ingestKey, now: now + 3601) == nil)
        #expect(try await store.authenticate(key: newIngest, now: now + 86_400 * 365) == KeyGrant(app: "shop", kind: .ingest))
        let newest = try #require(try await store.rotateKey(app: "shop", kind: .ingest, gracePeriod: 0, now: now))
        #expect(try await store.authenticate(key: newest) != nil)
        #expect(try await store.authenticate(key: newIngest) == nil)
        #expect(try await store.rotateKey(app: "nobody", kind: .ingest, gracePeriod: 0, now: now) == nil)

        let session = try #require(try await store.createSession(readKey: shop.readKey, lifetime: 600, now: now))
        #expect(session.app == "shop" && session.expiresAt == now + 600)
        #expect(try await store.session(id: session.id, now: now + 1) == SessionGrant(app: "shop", csrfToken: session.csrfToken))
        #expect(try await store.session(id: session.id, now: now + 601) == nil)
        #expect(try await store.session(id: "unknown", now: now) == nil)
        #expect(try await store.createSession(readKey: newest, lifetime: 600, now: now) == nil)
        let ended = try #require(try await store.createSession(readKey: shop.readKey, lifetime: 600, now: now))
        try await store.deleteSession(id: ended.id)
        #expect(try await store.session(id: ended.id, now: now + 1) == nil)

        let newRead = try #require(try await store.rotateKey(app: "shop", kind: .read, gracePeriod: 0, now: now))
        #expect(try await store.authenticate(key: shop.readKey) == nil)
        #expect(try await store.session(id: session.id, now: now + 1) == nil)
        #expect(try await store.createSession(readKey: newRead, lifetime: 600, now: now) != nil)
        _ = keepAlive
    }

    @Test("Each app gets an admin key; it opens no dashboard session; rotating it ends the old one at once and touches no other key", arguments: Kind.allCases)
    func adminKeys(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        let shop = try await store.createApp(name: "Shop", id: nil)
        let now = Date().timeIntervalSince1970
        #expect(shop.adminKey.hasPrefix("fsa_") && shop.adminKey.count == 52)
        #expect(Set([shop.ingestKey, shop.readKey, shop.adminKey]).count == 3)
        #expect(try await store.authenticate(key: shop.adminKey, now: now) == KeyGrant(app: "shop", kind: .admin))
        #expect(try await store.createSession(readKey: shop.adminKey, lifetime: 600, now: now) == nil)
        let newAdmin = try #require(try await store.rotateKey(app: "shop", kind: .admin, gracePeriod: 3600, now: now))
        #expect(newAdmin.hasPrefix("fsa_") && newAdmin != shop.adminKey)
        #expect(try await store.authenticate(key: shop.adminKey, now: now) == nil)
        #expect(try await store.authenticate(key: newAdmin, now: now) == KeyGrant(app: "shop", kind: .admin))
        #expect(try await store.authenticate(key: shop.readKey, now: now) == KeyGrant(app: "shop", kind: .read))
        #expect(try await store.authenticate(key: shop.ingestKey, now: now) == KeyGrant(app: "shop", kind: .ingest))
        #expect(try await store.rotateKey(app: "nobody", kind: .admin, gracePeriod: 0, now: now) == nil)
        let rotated = try #require(try await store.rotateKeys(app: "shop"))
        #expect(try await store.authenticate(key: newAdmin, now: now) == nil)
        #expect(try await store.authenticate(key: rotated.adminKey, now: now) == KeyGrant(app: "shop", kind: .admin))
        #expect(try await store.revokeApp("shop"))
        #expect(try await store.authenticate(key: rotated.adminKey, now: now) == nil)
        _ = keepAlive
    }

    @Test("Thresholds: nothing set means every default; a write replaces the whole setting; bad values are refused by field and change nothing", arguments: Kind.allCases)
    func thresholds(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        _ = try await store.createApp(name: "Other", id: nil)
        let unset = try #require(try await store.thresholds(app: "shop"))
        #expect(unset == AppThresholds() && unset.isEmpty)
        #expect(unset.verdictRules == VerdictRules.standard)
        #expect(try await store.thresholds(app: "nobody") == nil)

        let custom = AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: 2, criticalAbove: 4.5), .frameDurationP95: BandLimits(goodBelow: 0.02, criticalAbove: 0.05)],
                                   minimumChange: 0.1, minimumVisits: 30)
        #expect(try await store.setThresholds(custom, app: "shop"))
        #expect(try await store.thresholds(app: "shop") == custom)
        #expect(try await store.thresholds(app: "other") == AppThresholds(), "one app's thresholds are its own")
        #expect(try await !store.setThresholds(custom, app: "nobody"))

        // A write replaces: what it leaves out goes back to its default.
        let fewer = AppThresholds(bands: [.hangRate: BandLimits(goodBelow: 0, criticalAbove: 60)], minimumVisits: 5)
        #expect(try await store.setThresholds(fewer, app: "shop"))
        #expect(try await store.thresholds(app: "shop") == fewer)

        let bad: [(AppThresholds, String)] = [
            (AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: .nan, criticalAbove: 10)]), "bands.hitchRatio.goodBelow"),
            (AppThresholds(bands: [.hangRate: BandLimits(goodBelow: 1, criticalAbove: .infinity)]), "bands.hangRate.criticalAbove"),
            (AppThresholds(bands: [.motionHitchRatio: BandLimits(goodBelow: -1, criticalAbove: 10)]), "bands.motion.hitchRatio.goodBelow"),
            (AppThresholds(bands: [.frozenFramesPerThousand: BandLimits(goodBelow: 5, criticalAbove: 5)]), "bands.frozenFramesPerThousand.criticalAbove"),
            (AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: 5, criticalAbove: 1001)]), "bands.hitchRatio.criticalAbove"),
            (AppThresholds(minimumChange: -0.01), "verdict.minimumChange"),
            (AppThresholds(minimumChange: .nan), "verdict.minimumChange"),
            (AppThresholds(minimumVisits: 1), "verdict.minimumVisits"),
            (AppThresholds(minimumVisits: Int.max), "verdict.minimumVisits"),
        ]
        for (thresholds, field) in bad {
            let error = await #expect(throws: ThresholdError.self) { try await store.setThresholds(thresholds, app: "shop") }
            #expect(error?.field == field)
        }
        #expect(try await store.thresholds(app: "shop") == fewer)
        #expect(try await store.setThresholds(AppThresholds(), app: "shop"))
        #expect(try await store.thresholds(app: "shop") == AppThresholds())
        _ = keepAlive
    }

    @Test("A batch counts once; a flush's results come in order; aggregates are the merge of the visits", arguments: Kind.allCases)
    func ingestAndAggregate(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let feed = makeBatch(id: "feed", screen: "Feed", count: 3, start: Self.now - 7200, version: "1.0")
        let chat = makeBatch(id: "chat", screen: "Chat", count: 2, start: Self.now - 3600, version: "2.0")
        let results = try await store.ingest([Self.ingestBatch(feed), Self.ingestBatch(chat), Self.ingestBatch(feed)])
        #expect(results == [IngestResult(stored: 3, duplicate: false), IngestResult(stored: 2, duplicate: false), IngestResult(stored: 0, duplicate: true)])
        #expect(try await ingest(store, chat) == IngestResult(stored: 0, duplicate: true))
        #expect(try await store.rawEventCount(app: "shop") == 5)

        let day = ScreenQuery(from: Self.now - 86_400, to: Self.now)
        let screens = try await store.screens(app: "shop", query: day)
        #expect(screens.map(\.screen) == ["Chat", "Feed"])
        #expect(screens.map(\.visits) == [2, 3])
        #expect(screens.map(\.report) == [FrameReport.merged(chat.events.map(\.report)), FrameReport.merged(feed.events.map(\.report))])

        let byVersion = try await store.aggregate(app: "shop", query: AggregateQuery(filter: day, dimension: .appVersion))
            .sorted { ($0.dimensionValue ?? "") < ($1.dimensionValue ?? "") }
        #expect(byVersion.map(\.dimensionValue) == ["1.0", "2.0"])
        #expect(byVersion.map(\.visits) == [3, 2])
        let hourly = try await store.aggregate(app: "shop", query: AggregateQuery(filter: day, interval: .hour))
            .sorted { ($0.bucketStart ?? 0) < ($1.bucketStart ?? 0) }
        #expect(hourly.map(\.bucketStart) == [Self.now - 7200, Self.now - 3600])
        #expect(hourly.map(\.visits) == [3, 2])
        var statistics = VisitStatistics()
        for event in feed.events { statistics.merge(VisitStatistics(whole: event.report, motion: event.motion)) }
        let feedOnly = try #require(try await store.aggregate(app: "shop", query: AggregateQuery(filter: day.fixing(.appVersion, to: "1.0"))).first)
        #expect(feedOnly.statistics == statistics)

        #expect(try await store.dimensionValues(app: "shop", dimension: .appVersion, from: day.from, to: day.to) == ["1.0", "2.0"])
        #expect(try await store.dimensionValues(app: "shop", dimension: .deviceModel, from: day.from, to: day.to) == ["iPhone14,5"])
        #expect(try await store.dimensionValues(app: "other", dimension: .appVersion, from: day.from, to: day.to).isEmpty)
        _ = keepAlive
    }

    @Test("Filters select rollup keys; ratios are Σ/Σ over the selected rows", arguments: Kind.allCases)
    func filters(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let old = makeBatch(id: "v1", start: Self.now - 7200, version: "1.0")
        let new = makeBatch(id: "v2", screen: "Feed", count: 2, start: Self.now - 3600, version: "2.0")
        _ = try await ingest(store, old)
        _ = try await ingest(store, new)
        let all = ScreenQuery(from: Self.now - 86_400, to: Self.now)
        #expect(try await store.screens(app: "shop", query: all).first?.visits == 5)
        var onlyNew = all
        onlyNew[.appVersion] = "2.0"
        let newScreens = try await store.screens(app: "shop", query: onlyNew)
        #expect(newScreens.first?.visits == 2)
        #expect(newScreens.first?.report == FrameReport.merged(new.events.map(\.report)))
        var lowPower = all
        lowPower[.lowPower] = "true"
        #expect(try await store.screens(app: "shop", query: lowPower).first?.visits == 1)
        // Rollups are hourly: a range starting at 10:30 includes the 10:00 hour.
        #expect(try await store.screens(app: "shop", query: ScreenQuery(from: Self.now - 5400, to: Self.now)).first?.visits == 5)
        let window = ScreenQuery(from: Self.now - 3600, to: Self.now)
        #expect(try await store.screens(app: "shop", query: window).first?.visits == 2)
        #expect(try await store.screens(app: "other", query: all).isEmpty)
        _ = keepAlive
    }

    @Test("Visits per sample rate: by rate over the range's days, each batch once (retried in a flush or later); old days deleted whole",
          arguments: Kind.allCases)
    func sampleRates(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        _ = try await store.createApp(name: "Other", id: nil)
        func batch(_ id: String, count: Int, start: Double, rate: Int, app: String = "shop") -> IngestBatch {
            var batch = Self.ingestBatch(makeBatch(id: id, app: app, count: count, start: start), app: app)
            batch.sampleRatePPM = rate
            return batch
        }
        // Today (2026-11-20), yesterday and the day before; a batch across midnight counts on each day.
        let sampled = batch("sampled", count: 3, start: Self.now - 7200, rate: 100_000)
        let full = batch("full", count: 2, start: Self.now - 3600, rate: SampleRate.full)
        let yesterday = batch("yesterday", count: 1, start: Self.now - 86_400, rate: 100_000)
        let third = batch("third", count: 2, start: Self.now - 86_400 + 3600, rate: 333_333)
        let older = batch("older", count: 3, start: Self.now - 2 * 86_400, rate: 100_000)
        let midnight = (Self.now / 86_400).rounded(.down) * 86_400
        let across = batch("across", count: 3, start: midnight - 90, rate: 250_000)
        let theirs = batch("theirs", count: 4, start: Self.now - 600, rate: 500_000, app: "other")
        let results = try await store.ingest([sampled, full, sampled, yesterday, third, older, across, theirs])
        #expect(results.map(\.duplicate) == [false, false, true, false, false, false, false, false])
        #expect(try await store.ingest([sampled, full]).allSatisfy(\.duplicate))

        let today = try await store.sampleRates(app: "shop", from: Self.now - 3600, to: Self.now)
        #expect(today == [SampleRateVisits(sampleRate: 0.1, visits: 3), SampleRateVisits(sampleRate: 0.25, visits: 1), SampleRateVisits(sampleRate: 1, visits: 2)])
        let twoDays = try await store.sampleRates(app: "shop", from: Self.now - 86_400, to: Self.now)
        #expect(twoDays == [SampleRateVisits(sampleRate: 0.1, visits: 4), SampleRateVisits(sampleRate: 0.25, visits: 3),
                            SampleRateVisits(sampleRate: 0.333333, visits: 2), SampleRateVisits(sampleRate: 1, visits: 2)])
        let threeDays = try await store.sampleRates(app: "shop", from: Self.now - 2 * 86_400, to: Self.now)
        #expect(threeDays.first == SampleRateVisits(sampleRate: 0.1, visits: 7))
        #expect(try await store.sampleRates(app: "other", from: Self.now - 86_400, to: Self.now) == [SampleRateVisits(sampleRate: 0.5, visits: 4)])
        #expect(try await store.sampleRates(app: "nobody", from: Self.now - 86_400, to: Self.now).isEmpty)
        #expect(try await store.sampleRates(app: "shop", from: Self.now - 10 * 86_400, to: Self.now - 3 * 86_400).isEmpty)

        // A cutoff inside yesterday deletes the day before's counts only (its raw events are
        // all gone then; yesterday's are not); a second call finds nothing.
        #expect(try await store.deleteSampleRates(before: midnight - 3600) == 1)
        #expect(try await store.deleteSampleRates(before: midnight - 3600) == 0)
        #expect(try await store.sampleRates(app: "shop", from: Self.now - 2 * 86_400, to: Self.now) == twoDays)
        _ = keepAlive
    }

    @Test("Retention deletes raw events and keeps rollups; a forgotten batch id can be stored again", arguments: Kind.allCases)
    func retentionAndLedger(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        let early = makeBatch(id: "early", count: 3, start: Self.now - 7200)
        let late = makeBatch(id: "late", count: 2, start: Self.now - 600)
        _ = try await ingest(store, early, receivedAt: Self.now - 7000)
        _ = try await ingest(store, late, receivedAt: Self.now)
        #expect(try await store.deleteRawEvents(startedBefore: Self.now - 3600, limit: 2) == 2)
        #expect(try await store.deleteRawEvents(startedBefore: Self.now - 3600, limit: 100) == 1)
        #expect(try await store.rawEventCount(app: "shop") == 2)
        let day = ScreenQuery(from: Self.now - 86_400, to: Self.now)
        #expect(try await store.screens(app: "shop", query: day).first?.visits == 5)

        #expect(try await store.pruneAccessRecords(batchesReceivedBefore: Self.now - 3600, now: Self.now, limit: 100) == 1)
        #expect(try await ingest(store, late) == IngestResult(stored: 0, duplicate: true))
        #expect(try await ingest(store, early) == IngestResult(stored: 3, duplicate: false))
        _ = keepAlive
    }
}
