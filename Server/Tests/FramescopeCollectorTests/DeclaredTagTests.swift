import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Declared tags as rollup dimensions: the tag rollups against a re-computation from the raw
/// visits, what is not rolled up (undeclared keys, visits before the declaration), the
/// bounds (keys per app, values per day), and the read routes' `tag.KEY` filter.
@Suite("Declared tags: rollups, bounds and filters")
struct DeclaredTagTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    struct Visit {
        var screen: String
        var appVersion: String
        var network: String
        var tags: [String: String]
        var event: ScreenVisitEvent
        var start: Double
    }

    /// `count` batches of five visits with random screens, versions, networks and tags
    /// (`experiment` A, B or absent; `cohort` x or y), stored in `store`.
    func ingestRandom(_ store: SQLiteStore, seed: UInt64, batches count: Int, idPrefix: String = "b") async throws -> [Visit] {
        var random = SeededGenerator(seed: seed)
        let reports = (0..<6).map { visitReport(seed: $0 + 1, seconds: 2, profile: $0 % 3 == 0 ? .heavy : .moderate) }
        var visits: [Visit] = []
        for batchIndex in 0..<count {
            let appVersion = ["3.0.0", "3.1.0"].randomElement(using: &random) ?? "3.0.0"
            var events: [(ScreenVisitEvent, Double)] = []
            for _ in 0..<5 {
                let start = Self.now - Double(Int.random(in: 0..<(3 * 86_400), using: &random))
                let report = reports.randomElement(using: &random) ?? reports[0]
                var tags: [String: String] = [:]
                if let experiment = ["A", "B", nil].randomElement(using: &random) ?? nil { tags["experiment"] = experiment }
                tags["cohort"] = Bool.random(using: &random) ? "x" : "y"
                let context = VisitContext(network: Bool.random(using: &random) ? .wifi : .cellular, lowPowerMode: false, tags: tags)
                let event = ScreenVisitEvent(screen: ["Feed", "Search"].randomElement(using: &random) ?? "Feed",
                                             startedAt: ISO8601.format(unixSeconds: start), duration: report.whole.duration + 1,
                                             context: context, report: report.whole, motion: report.motion)
                events.append((event, start))
                visits.append(Visit(screen: event.screen, appVersion: appVersion, network: context.network.rawValue, tags: tags, event: event, start: start))
            }
            let batch = IngestBatch(app: "shop", batchId: "\(idPrefix)\(batchIndex)", appVersion: appVersion, osVersion: "18.1", deviceModel: "iPhone16,1",
                                    events: events, rawEvents: events.map { _ in "{}" }, receivedAt: Self.now)
            _ = try await store.ingest(batch)
        }
        return visits
    }

    @Test("A declared tag's filter and break-down equal the raw visits' merge, with other filters, by day and by hour", arguments: [UInt64(1), 2])
    func agreement(seed: UInt64) async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        #expect(try await store.declareTagKey(app: "shop", key: "experiment", now: Self.now - 4 * 86_400) == true)
        let visits = try await ingestRandom(store, seed: seed, batches: 30)
        var random = SeededGenerator(seed: seed &+ 100)
        var checked = 0
        for round in 0..<24 {
            var query = ScreenQuery(from: Self.now - 3 * 86_400 - 3600, to: Self.now + 3600)
            if round % 2 == 1 {
                query.from = Double(Int64((Self.now - 30 * 3600) / 3600) * 3600)
                query.to = query.from + 20 * 3600
            }
            let value = ["A", "B", DeclaredTags.none].randomElement(using: &random) ?? "A"
            query.tag = TagFilter(key: "experiment", value: value)
            if Bool.random(using: &random) { query[.appVersion] = ["3.0.0", "3.1.0"].randomElement(using: &random) }
            if Bool.random(using: &random) { query[.network] = "wifi" }
            let selected = visits.filter { visit in
                visit.start >= query.from && visit.start < query.to && (visit.tags["experiment"] ?? DeclaredTags.none) == value
                    && (query[.appVersion] == nil || query[.appVersion] == visit.appVersion) && (query[.network] == nil || query[.network] == visit.network)
            }
            let answer = try await store.screens(app: "shop", query: query)
            let expected = Dictionary(grouping: selected, by: \.screen)
            #expect(answer.map(\.screen) == expected.keys.sorted(), "\(query.filters) \(value)")
            for screen in answer {
                let raw = expected[screen.screen] ?? []
                let merged = FrameReport.merged(raw.map(\.event.report))
                #expect(screen.visits == raw.count)
                #expect(screen.report.frames == merged.frames)
                #expect(screen.report.hitchTimeNanoseconds == merged.hitchTimeNanoseconds)
                #expect(screen.report.hangTimeNanoseconds == merged.hangTimeNanoseconds)
                checked += 1
            }
            // The break-down by the tag adds up to the query without the tag filter.
            var untagged = query
            untagged.tag = nil
            let groups = try await store.aggregate(app: "shop", query: AggregateQuery(filter: untagged, tagKey: "experiment"))
            let total = try await store.aggregate(app: "shop", query: AggregateQuery(filter: untagged)).first?.visits ?? 0
            #expect(groups.reduce(0) { $0 + $1.visits } == total)
            for group in groups {
                let count = visits.filter { visit in
                    visit.start >= query.from && visit.start < query.to && (visit.tags["experiment"] ?? DeclaredTags.none) == group.dimensionValue
                        && (query[.appVersion] == nil || query[.appVersion] == visit.appVersion) && (query[.network] == nil || query[.network] == visit.network)
                }.count
                #expect(group.visits == count, "\(group.dimensionValue ?? "")")
            }
        }
        #expect(checked >= 20)
        #expect(try await store.tagValues(app: "shop", key: "experiment", from: Self.now - 4 * 86_400, to: Self.now + 3600) == ["(none)", "A", "B"])
    }

    @Test("Undeclared keys stay in the raw events only; a key counts from its declaration; removing it stops and keeps its rollups")
    func declarationWindow() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let before = try await ingestRandom(store, seed: 7, batches: 4, idPrefix: "early")
        let range = ScreenQuery(from: Self.now - 4 * 86_400, to: Self.now + 3600)
        var cohort = range
        cohort.tag = TagFilter(key: "cohort", value: "x")
        #expect(try await store.screens(app: "shop", query: cohort).isEmpty, "not declared: no rollups")
        #expect(try await store.declareTagKey(app: "shop", key: "cohort", now: Self.now) == true)
        #expect(try await store.declareTagKey(app: "shop", key: "cohort", now: Self.now) == false)
        #expect(try await store.screens(app: "shop", query: cohort).isEmpty, "visits before the declaration are not counted")
        let after = try await ingestRandom(store, seed: 8, batches: 4, idPrefix: "late")
        let expected = after.filter { $0.tags["cohort"] == "x" }.count
        #expect(try await store.screens(app: "shop", query: cohort).reduce(0) { $0 + $1.visits } == expected)
        #expect(try await store.rawEventCount(app: "shop") == before.count + after.count)
        #expect(try await store.removeTagKey(app: "shop", key: "cohort"))
        #expect(try await store.removeTagKey(app: "shop", key: "cohort") == false)
        _ = try await ingestRandom(store, seed: 9, batches: 2, idPrefix: "removed")
        #expect(try await store.screens(app: "shop", query: cohort).reduce(0) { $0 + $1.visits } == expected, "kept, not added to")
        #expect(try await store.tagKeys(app: "shop") == [])
        #expect(try await store.tagKeys(app: "nobody") == nil)
        #expect(try await store.declareTagKey(app: "nobody", key: "cohort", now: Self.now) == nil)
    }

    @Test("At most ten keys per app, keys as the wire format allows, and 100 values per key and day before (other)")
    func bounds() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        for index in 0..<DeclaredTags.maximumKeys {
            #expect(try await store.declareTagKey(app: "shop", key: "k\(index)", now: Self.now) == true)
        }
        await #expect(throws: TagKeyError.self) { _ = try await store.declareTagKey(app: "shop", key: "eleventh", now: Self.now) }
        for bad in ["", String(repeating: "k", count: 65), "a\u{0}b", "a\u{202E}b"] {
            await #expect(throws: TagKeyError.self) { _ = try await store.declareTagKey(app: "shop", key: bad, now: Self.now) }
        }
        // One key, 120 distinct values in one day: 100 kept, 20 visits under (other).
        let report = visitReport(seed: 1, seconds: 1)
        let start = Self.now - 3600
        let events = (0..<120).map { index in
            (ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start), duration: 2,
                              context: VisitContext(network: .wifi, lowPowerMode: false, tags: ["k0": "v\(index)"]),
                              report: report.whole, motion: nil), start)
        }
        _ = try await store.ingest(IngestBatch(app: "shop", batchId: "many", appVersion: "1", osVersion: "18", deviceModel: "x",
                                               events: events, rawEvents: events.map { _ in "{}" }, receivedAt: Self.now))
        let values = try await store.tagValues(app: "shop", key: "k0", from: start - 86_400, to: Self.now)
        #expect(values.count == DeclaredTags.defaultDailyValueLimit + 1)
        #expect(values.contains(CardinalityLimits.other))
        var other = ScreenQuery(from: start - 86_400, to: Self.now)
        other.tag = TagFilter(key: "k0", value: CardinalityLimits.other)
        #expect(try await store.screens(app: "shop", query: other).first?.visits == 20)
        // Another declared key the visits do not carry: every visit under (none).
        var none = other
        none.tag = TagFilter(key: "k1", value: DeclaredTags.none)
        #expect(try await store.screens(app: "shop", query: none).first?.visits == 120)
    }

    @Test("Read routes: one declared tag filter; a second, an undeclared key or a malformed one is 400 naming the parameter; GET …/tags lists keys")
    func routes() async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        _ = try await temporary.store.declareTagKey(app: "shop", key: "experiment", now: Self.now - 86_400)
        _ = try await temporary.store.declareTagKey(app: "shop", key: "cohort", now: Self.now - 86_400)
        let router = Collector(store: temporary.store, clock: { Self.now }).router
        try await Application(router: router).test(.router) { client in
            let report = visitReport(seed: 3, seconds: 2)
            let events = ["A", "A", "B"].enumerated().map { index, value in
                ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: Self.now - 7200 + Double(index)), duration: 3,
                                 context: VisitContext(network: .wifi, lowPowerMode: false, tags: ["experiment": value]),
                                 report: report.whole, motion: report.motion)
            }
            let batch = EventBatch(batchId: "t1", app: AppInfo(id: "shop", version: "3.1", build: "1"),
                                   device: DeviceInfo(model: "iPhone15,2", osName: "iOS", osVersion: "18.1", maxRefreshRate: 120), events: events)
            let sent = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                body: ByteBuffer(data: try jsonData(batch)))
            #expect(sent.status == .accepted)
            let read: HTTPFields = [.authorization: "Bearer \(shop.readKey)"]
            let screens = try await client.execute(uri: "/v1/apps/shop/screens?tag.experiment=A", method: .get, headers: read)
            #expect(screens.status == .ok)
            let decoded = try JSONDecoder().decode(ScreensResponse.self, from: Data(buffer: screens.body))
            #expect(decoded.screens.map(\.visits) == [2])
            let worst = try await client.execute(uri: "/v1/apps/shop/worst?minVisits=0&tag.experiment=B", method: .get, headers: read)
            #expect(worst.status == .ok)
            let series = try await client.execute(uri: "/v1/apps/shop/timeseries?interval=hour&from=2026-11-20T00:00:00Z&tag.experiment=%28none%29",
                                                  method: .get, headers: read)
            #expect(series.status == .ok)
            for (uri, field) in [("/v1/apps/shop/screens?tag.experiment=A&tag.cohort=x", "tag."),
                                 ("/v1/apps/shop/screens?tag.flavour=A", "tag.flavour"),
                                 ("/v1/apps/shop/percentiles?tag.=A", "tag."),
                                 ("/v1/apps/shop/compare?baseline=3.0&candidate=3.1&tag.experiment=%E2%80%AE", "tag.experiment")] {
                let response = try await client.execute(uri: uri, method: .get, headers: read)
                #expect(response.status == .badRequest, "\(uri)")
                let body = String(buffer: response.body)
                #expect(body.contains("\"field\":\"\(field)"), "\(uri): \(body)")
            }
            let tags = try await client.execute(uri: "/v1/apps/shop/tags", method: .get, headers: read)
            let list = try JSONDecoder().decode(TagKeysResponse.self, from: Data(buffer: tags.body))
            #expect(list.tags.map(\.key) == ["cohort", "experiment"])
            let refused = try await client.execute(uri: "/v1/apps/shop/tags", method: .get, headers: [.authorization: "Bearer \(shop.ingestKey)"])
            #expect(refused.status == .unauthorized || refused.status == .forbidden)
            // A device may not send the reserved values as a tag's value.
            var reserved = batch
            reserved.batchId = "t2"
            reserved.events = [events[0]]
            reserved.events[0].context.tags = ["experiment": DeclaredTags.none]
            let refusedEvent = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                        body: ByteBuffer(data: try jsonData(reserved)))
            #expect(String(buffer: refusedEvent.body).contains("context.tags.experiment"))
        }
        _ = temporary
    }
}
