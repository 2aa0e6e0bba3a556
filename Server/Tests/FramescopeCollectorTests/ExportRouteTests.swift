import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Raw events out: GET /v1/apps/{app}/events")
struct ExportRouteTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    /// One export line, decoded.
    struct Line: Decodable, Equatable {
        var cursor: String
        var receivedAt: String
        var batchId: String
        var appVersion: String
        var osVersion: String
        var deviceModel: String
        var event: ScreenVisitEvent
    }

    /// A visit to `screen` at `start` with a context of its own.
    func visit(_ screen: String, at start: Double, thermal: VisitContext.ThermalState = .nominal, tags: [String: String] = [:],
               lowPower: Bool = false) -> ScreenVisitEvent {
        let report = visitReport(seed: UInt64(start.truncatingRemainder(dividingBy: 1000)) + 1, seconds: 2)
        return ScreenVisitEvent(screen: screen, startedAt: ISO8601.format(unixSeconds: start), duration: 3,
                                context: VisitContext(network: .cellular, lowPowerMode: lowPower, thermalState: thermal, tags: tags),
                                report: report.whole, motion: report.motion)
    }

    /// A collector with the app `shop` (and `other`), the given batches sent with shop's
    /// ingest key (and one batch of the other app's); runs `body` with the client and shop's read key.
    func withEvents(_ batches: [EventBatch], _ body: @escaping @Sendable (any TestClientProtocol, String) async throws -> Void) async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        let other = try await temporary.store.createApp(name: "Other", id: "other")
        let router = Collector(store: temporary.store, clock: { Self.now }).router
        try await Application(router: router).test(.router) { client in
            for batch in batches {
                let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                        body: ByteBuffer(data: try jsonData(batch)))
                #expect(response.status == .accepted)
            }
            let foreign = EventBatch(batchId: "foreign", app: AppInfo(id: "other", version: "9", build: "1"),
                                     device: DeviceInfo(model: "Pixel", osName: "Android", osVersion: "15", maxRefreshRate: 120),
                                     events: [visit("Feed", at: Self.now - 7000)])
            _ = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(other.ingestKey)"],
                                         body: ByteBuffer(data: try jsonData(foreign)))
            try await body(client, shop.readKey)
        }
        _ = temporary
    }

    func batch(_ id: String, version: String = "3.1", _ events: [ScreenVisitEvent]) -> EventBatch {
        EventBatch(batchId: id, app: AppInfo(id: "shop", version: version, build: "31"),
                   device: DeviceInfo(model: "iPhone15,2", osName: "iOS", osVersion: "18.1", maxRefreshRate: 120), events: events)
    }

    func export(_ client: any TestClientProtocol, _ key: String, _ query: String = "", accept: String? = nil) async throws -> (TestResponse, [Line]) {
        var headers: HTTPFields = [.authorization: "Bearer \(key)"]
        if let accept { headers[.accept] = accept }
        let response = try await client.execute(uri: "/v1/apps/shop/events?from=2026-11-19T00:00:00Z&to=2026-11-21T00:00:00Z\(query)",
                                                method: .get, headers: headers)
        guard response.status == .ok, accept == nil else { return (response, []) }
        let text = String(buffer: response.body)
        #expect(text.isEmpty || text.hasSuffix("\n"))
        let lines = try text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        return (response, lines)
    }

    /// Events over three hours, sent out of order in two batches, two at the same instant.
    var scrambled: [EventBatch] {
        let t = Self.now - 3 * 3600
        return [
            batch("late", [visit("Search", at: t + 7300), visit("Feed", at: t + 30), visit("Feed", at: t + 3700)]),
            batch("early", version: "3.0", [visit("Detail", at: t + 10), visit("Feed", at: t + 3700), visit("Cart", at: t + 5)]),
        ]
    }

    @Test("Every event of the app, in start-time order (ties by arrival), as ingested, with its batch and receipt")
    func orderAndContent() async throws {
        let batches = scrambled
        try await withEvents(batches) { client, key in
            let (response, lines) = try await export(client, key)
            #expect(response.headers[.contentType] == "application/x-ndjson")
            #expect(lines.map(\.event.screen) == ["Cart", "Detail", "Feed", "Feed", "Feed", "Search"])
            let starts = lines.map { ISO8601.parse($0.event.startedAt) ?? 0 }
            #expect(starts == starts.sorted())
            // The two events at the same instant: the first stored first.
            #expect(lines[3].batchId == "late" && lines[4].batchId == "early")
            #expect(lines.map(\.cursor) == lines.map(\.cursor).sorted())
            let sent = batches.flatMap(\.events)
            #expect(Set(lines.map(\.event)) == Set(sent))
            #expect(lines.first?.appVersion == "3.0" && lines.first?.osVersion == "18.1" && lines.first?.deviceModel == "iPhone15,2")
            #expect(lines.allSatisfy { $0.receivedAt == "2026-11-20T12:00:00.000Z" })
        }
    }

    @Test("The payload is the validated event re-encoded on one line, not the bytes sent")
    func payloadCanonical() async throws {
        let t = Self.now - 600
        // Written by hand: key order, spacing and escapes that the stored form (StoredEventJSON) does not keep.
        let event = #"{ "kind":"screenVisit","screen":"Caf\u00e9 \"Feed\"","startedAt":"\#(ISO8601.format(unixSeconds: t))","duration":3,"context":{"network":"wifi","lowPowerMode":false,"thermalState":"fair","tags":{}},"report":\#(String(decoding: try jsonData(visitReport(seed: 1, seconds: 2).whole), as: UTF8.self)),"hangs":[] }"#
        let body = #"{"batchId":"raw","app":{"id":"shop","version":"1","build":"1"},"device":{"model":"M","osName":"iOS","osVersion":"18","maxRefreshRate":60},"events":[\#(event)]}"#
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        try await Application(router: Collector(store: temporary.store, clock: { Self.now }).router).test(.router) { client in
            let sent = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: ByteBuffer(string: body))
            #expect(sent.status == .accepted)
            let response = try await client.execute(uri: "/v1/apps/shop/events", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"])
            let line = String(buffer: response.body)
            let decoded = try JSONDecoder().decode(ScreenVisitEvent.self, from: Data(event.utf8))
            #expect(line.hasSuffix(",\"event\":\(StoredEventJSON.encode(decoded))}\n"), "\(line)")
            #expect(!line.contains(#"{ "kind""#) && line.contains("\"reportData\":"), "\(line)")
            #expect(line.split(separator: "\n").count == 1)
        }
        _ = temporary
    }

    @Test("A cursor resumes exactly after its line; limit cuts the stream")
    func cursorResume() async throws {
        try await withEvents(scrambled) { client, key in
            let (_, all) = try await export(client, key)
            let (_, firstTwo) = try await export(client, key, "&limit=2")
            #expect(firstTwo == Array(all.prefix(2)))
            let cursor = try #require(firstTwo.last?.cursor)
            let (_, rest) = try await export(client, key, "&after=\(cursor)")
            #expect(firstTwo + rest == all)
            // A cursor between the two events of one instant.
            let (_, afterFourth) = try await export(client, key, "&after=\(all[3].cursor)")
            #expect(afterFourth == Array(all.dropFirst(4)))
            let (_, none) = try await export(client, key, "&after=\(try #require(all.last?.cursor))")
            #expect(none.isEmpty)
        }
    }

    @Test("Filters: the read routes' dimensions, the thermal state and tags")
    func filters() async throws {
        let t = Self.now - 3600
        let batches = [
            batch("a", [visit("Feed", at: t, thermal: .serious, tags: ["experiment": "B", "cohort": "x"]),
                        visit("Feed", at: t + 1, tags: ["experiment": "A"]),
                        visit("Search", at: t + 2, thermal: .serious, lowPower: true)]),
            batch("b", version: "3.0", [visit("Feed", at: t + 3, tags: ["experiment": "B"])]),
        ]
        try await withEvents(batches) { client, key in
            func check(_ query: String, _ expected: [Double]) async throws {
                let starts = try await export(client, key, query).1.map { (ISO8601.parse($0.event.startedAt) ?? 0) - t }
                #expect(starts == expected, "\(query)")
            }
            try await check("&screen=Feed", [0, 1, 3])
            try await check("&appVersion=3.0", [3])
            try await check("&lowPower=true", [2])
            try await check("&thermalState=serious", [0, 2])
            try await check("&tag.experiment=B", [0, 3])
            try await check("&tag.experiment=B&tag.cohort=x", [0])
            try await check("&tag.experiment=C", [])
            try await check("&tag.experiment=B&appVersion=3.1&thermalState=serious", [0])
            // A tag key with quotes and a dot is a bound value, not a JSON path.
            try await check("&tag.%22%5D%27)--=x", [])
            try await check("&from=\(ISO8601.format(unixSeconds: t + 1))&to=\(ISO8601.format(unixSeconds: t + 3))", [1, 2])
        }
    }

    @Test("CSV: headline figures per visit; a hostile screen name is quoted and cannot run as a formula")
    func csv() async throws {
        let t = Self.now - 600
        let batches = [batch("csv", [visit("=HYPERLINK(\"http://evil\",\"x\"), ok", at: t, tags: ["b": "2", "a": "1"]), visit("Feed", at: t + 1)])]
        try await withEvents(batches) { client, key in
            let (response, _) = try await export(client, key, accept: "text/csv")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
            let text = String(buffer: response.body)
            let rows = text.components(separatedBy: "\r\n")
            #expect(rows.count == 4 && rows[3].isEmpty)
            // A column per dimension, by the registry's names, between the receipt time and the tags.
            #expect(rows[0].hasPrefix("cursor,startedAt,receivedAt," + QueryDimension.all.map(\.queryName).joined(separator: ",") + ",tags,duration,frames,averageFPS,droppedFrames"))
            #expect(rows[0].hasPrefix("cursor,startedAt,receivedAt,screen,appVersion,osVersion,deviceModel,network,lowPower,thermalState,maxRefreshRate,tags"))
            #expect(rows[0].hasSuffix(",frameDuration.p95,motion.hitchRatio"))
            #expect(rows[1].contains(#","'=HYPERLINK(""http://evil"",""x""), ok",3.1,18.1,"iPhone15,2",cellular,false,nominal,120,a=1;b=2,3,"#))
            let frames = batches[0].events[1].report.frames
            #expect(rows[2].contains(#","iPhone15,2",cellular,false,nominal,120,,3,\#(frames),"#))
            // 24 columns: the unquoted commas of a row without quoted cells, less the one in the model.
            #expect(rows[0].split(separator: ",").count == 24)
            #expect(rows[2].split(separator: ",", omittingEmptySubsequences: false).count == 25)
        }
    }

    @Test("Wrong parameters get a 400 naming the parameter")
    func badParameters() async throws {
        try await withEvents([]) { client, key in
            let tenTags = (0..<9).map { "&tag.k\($0)=v" }.joined()
            for (query, field) in [("&after=nonsense", "after"), ("&after=7ff0000000000000-1", "after"), ("&thermalState=hot", "thermalState"),
                                   ("&limit=0", "limit"), ("&tag.=x", "tag."), ("&tag.k=%07", "tag.k"), (tenTags, "tag.k8"),
                                   ("&network=carrier-pigeon", "network"), ("&from=yesterday", "from")] {
                let (response, _) = try await export(client, key, query)
                #expect(response.status == .badRequest, "\(query)")
                let detail = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body)).error
                #expect(detail.field == field, "\(query): \(detail.field ?? "nil")")
            }
        }
    }

    @Test("Export keys: cursor text round-trips exactly; impossible cursors are refused")
    func cursors() {
        for key in [RawEventKey(startedAt: 1_732_500_000.123_456_7, id: 42), RawEventKey(startedAt: 0, id: 0), RawEventKey(startedAt: 4e9, id: Int64.max)] {
            #expect(RawEventKey(cursor: key.cursor) == key)
            #expect(key.cursor.count >= 18)
        }
        for text in ["", "-", "41d9cd8b8c07e6b4", "41d9cd8b8c07e6b4-", "41D9CD8B8C07E6B4-1", "41d9cd8b8c07e6b4--1", "7ff8000000000000-1",
                     "fff0000000000000-1", "41d9cd8b8c07e6b4-99999999999999999999", "41d9cd8b8c07e6b40-1", "+1d9cd8b8c07e6b4-1"] {
            #expect(RawEventKey(cursor: text) == nil, "\(text)")
        }
    }

    @Test("A range of ten thousand years reads only the hours that hold events (it once walked every hour, 87 million reads)")
    func vastRange() async throws {
        let base = try SQLiteStore(inMemoryWith: CardinalityLimits())
        let store = FaultyStore(base: base)
        let starts = [Self.now - 20 * 86_400, Self.now - 20 * 86_400 + 10, Self.now - 3 * 86_400, Self.now - 600]
        let events = starts.map { (visit("Feed", at: $0), $0) }
        _ = try await base.ingest(IngestBatch(app: "shop", batchId: "b", appVersion: "1", osVersion: "18", deviceModel: "x",
                                              events: events, rawEvents: events.map { _ in "{}" }, receivedAt: Self.now))
        _ = try await base.ingest(IngestBatch(app: "other", batchId: "o", appVersion: "1", osVersion: "18", deviceModel: "x",
                                              events: [events[0]], rawEvents: ["{}"], receivedAt: Self.now))
        let query = EventQuery(screens: ScreenQuery(from: try #require(ISO8601.parse("0001-01-01T00:00:00Z")),
                                                    to: try #require(ISO8601.parse("9999-12-31T00:00:00Z"))))
        var seen: [Double] = []
        for try await event in EventExport(store: store, app: "shop", query: query, after: nil) { seen.append(event.key.startedAt) }
        #expect(seen == starts)
        // Three hours hold events: a read of the next hour with events and one of its keys
        // each, and a last read that finds none.
        #expect(store.hourReadCount == 7, "\(store.hourReadCount) reads")
        // Resuming after the second event skips to the next hour with events the same way.
        var resumed: [Double] = []
        let cursor = RawEventKey(startedAt: starts[1], id: 2)
        for try await event in EventExport(store: store, app: "shop", query: query, after: cursor) { resumed.append(event.key.startedAt) }
        #expect(resumed == Array(starts[2...]))
    }
}
