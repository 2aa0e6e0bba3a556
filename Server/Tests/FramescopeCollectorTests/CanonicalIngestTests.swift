import Foundation
@testable import FramescopeCollector
import FramescopeCore
import FramescopeJSON
@testable import FramescopeSQLite
@testable import FramescopeStore
import Logging
import NIOCore
import Testing

/// Issue 30, items 1, 4, 6, 7 and 8: one visit counts once whatever its spelling, the raw
/// event stored is what was validated, a repeated member is refused, every part of an
/// event is checked.
@Suite("Canonical ingest")
struct CanonicalIngestTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!
    static let logger = Logger(label: "test")

    /// One visit of `screen` as a body, compact reports, sent with `version` and a tag.
    static func body(screen: String, id: String, version: String = "1.0", tags: [String: String] = [:], offset: Double = 0) throws -> ByteBuffer {
        var batch = makeBatch(id: id, screen: screen, count: 1, start: now - 3600 + offset, version: version)
        batch.events[0].context.tags = tags
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        return ByteBuffer(data: try encoder.encode(batch))
    }

    /// Visits per screen name (bytes shown as scalars) on `store`, over the last day.
    static func visitsByScreen(_ store: any CollectorStore) async throws -> [String: Int] {
        let query = AggregateQuery(filter: ScreenQuery(from: now - 86_400, to: now + 3600), byScreen: true)
        var result: [String: Int] = [:]
        for group in try await store.aggregate(app: "shop", query: query) {
            let name = group.screen.map { $0.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ") } ?? "-"
            result[name, default: 0] += group.rollup.visits
        }
        return result
    }

    static func scalars(_ text: String) -> String {
        text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
    }

    /// The 120 orderings of five combining marks of five different combining classes
    /// (202 cedilla, 216 horn, 220 dot below, 230 acute, 240 ypogegrammeni): canonically
    /// equivalent, byte for byte different.
    static func permutations() -> [String] {
        let marks: [Character] = ["\u{0327}", "\u{031B}", "\u{0323}", "\u{0301}", "\u{0345}"].map { Character($0) }
        var result: [String] = []
        func permute(_ prefix: [Unicode.Scalar], _ rest: [Unicode.Scalar]) {
            if rest.isEmpty {
                var text = "Pay"
                text.unicodeScalars.append(contentsOf: prefix)
                result.append(text)
                return
            }
            for index in rest.indices {
                var remaining = rest
                let scalar = remaining.remove(at: index)
                permute(prefix + [scalar], remaining)
            }
        }
        permute([], marks.flatMap(\.unicodeScalars))
        return result
    }

    @Test("Canonically equal screen names count one visit once (24 Café visits, 120 orderings of five marks)",
          arguments: [StoreContractTests.Kind.sqliteFile, .clickhouse])
    func canonicalScreens(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: "shop")
        let service = IngestService(store: store, clock: { Self.now })
        for index in 0..<24 {
            let name = index % 2 == 0 ? "Caf\u{e9}" : "Cafe\u{301}"
            let response = try await service.ingest(body: Self.body(screen: name, id: "cafe-\(index)", offset: Double(index)), app: "shop", logger: Self.logger)
            #expect(response.accepted == 1)
        }
        let orderings = Self.permutations()
        #expect(orderings.count == 120)
        #expect(Set(orderings.map { Array($0.utf8) }).count == 120, "byte for byte different")
        for (index, name) in orderings.enumerated() {
            let response = try await service.ingest(body: Self.body(screen: name, id: "pay-\(index)", offset: Double(index)), app: "shop", logger: Self.logger)
            #expect(response.accepted == 1)
        }
        let visits = try await Self.visitsByScreen(store)
        let cafe = Self.scalars("Caf\u{e9}")
        let pay = Self.scalars(CanonicalText.nfc(orderings[0]))
        #expect(visits == [cafe: 24, pay: 120], "one row per name, in NFC, each visit once")
        let whole = try await store.aggregate(app: "shop", query: AggregateQuery(filter: ScreenQuery(from: Self.now - 86_400, to: Self.now + 3600)))
        #expect(whole.map(\.rollup.visits).reduce(0, +) == 144)
        // A filter in another spelling finds the same visits.
        var query = ScreenQuery(from: Self.now - 86_400, to: Self.now + 3600)
        query[.screen] = CanonicalText.nfc("Cafe\u{301}")
        let filtered = try await store.aggregate(app: "shop", query: AggregateQuery(filter: query))
        #expect(filtered.map(\.rollup.visits).reduce(0, +) == 24)
        _ = keepAlive
    }

    @Test("Versions, models and tags in two spellings are one value; the cardinality gate counts them once")
    func canonicalDimensions() async throws {
        var limits = CardinalityLimits()
        limits.appVersions = 1
        let store = try SQLiteStore(inMemoryWith: limits)
        _ = try await store.createApp(name: "Shop", id: "shop")
        #expect(try await store.declareTagKey(app: "shop", key: "arm", now: Self.now - 86_400) == true)
        let service = IngestService(store: store, clock: { Self.now })
        for index in 0..<6 {
            let version = index % 2 == 0 ? "3.0-b\u{e9}ta" : "3.0-be\u{301}ta"
            let arm = index % 2 == 0 ? "\u{f1}" : "n\u{303}"
            _ = try await service.ingest(body: Self.body(screen: "Feed", id: "v-\(index)", version: version, tags: ["arm": arm], offset: Double(index)),
                                         app: "shop", logger: Self.logger)
        }
        let versions = try await store.dimensionValues(app: "shop", dimension: .appVersion, from: Self.now - 86_400, to: Self.now + 3600)
        #expect(versions.map(Self.scalars) == [Self.scalars("3.0-b\u{e9}ta")], "one version, not folded into (other) by a limit of 1")
        let arms = try await store.tagValues(app: "shop", key: "arm", from: Self.now - 86_400, to: Self.now + 3600)
        #expect(arms.map(Self.scalars) == [Self.scalars("\u{f1}")])
    }

    @Test("Two tag keys that are one in NFC are a repeated member: the event is refused, naming it")
    func collidingTagKeys() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let service = IngestService(store: store, clock: { Self.now })
        let event = try Self.compactEvent().replacingOccurrences(of: #""tags":{}"#, with: "\"tags\":{\"\u{e9}\":\"1\",\"e\u{301}\":\"2\"}")
        let response = try await service.ingest(body: ByteBuffer(string: "{\(Self.envelope),\"events\":[\(event)]}"), app: "shop", logger: Self.logger)
        #expect(response.accepted == 0)
        #expect(response.rejected.map(\.field).map(Self.scalars) == [Self.scalars("events[0].context.tags.\u{e9}")]
                || response.rejected.map(\.field).map(Self.scalars) == [Self.scalars("events[0].context.tags.e\u{301}")])
    }

    @Test("Byte-keyed maps keep byte-different values apart (as the stores do)")
    func byteKeys() {
        #expect(StoredText("Caf\u{e9}") != StoredText("Cafe\u{301}"))
        #expect(Set([StoredText("Caf\u{e9}"), StoredText("Cafe\u{301}")]).count == 2)
        let a = RollupKey(bucketStart: 0, [.screen: "Caf\u{e9}", .appVersion: "1", .deviceModel: "m"])
        let b = RollupKey(bucketStart: 0, [.screen: "Cafe\u{301}", .appVersion: "1", .deviceModel: "m"])
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
        #expect(CanonicalText.nfc("Cafe\u{301}").utf8.elementsEqual("Caf\u{e9}".utf8))
        #expect(CanonicalText.isNFC("Caf\u{e9}") && !CanonicalText.isNFC("Cafe\u{301}"))
        #expect(CanonicalText.nfc("plain ASCII") == "plain ASCII")
    }

    // MARK: Repeated members (item 6)

    static func compactEvent() throws -> String {
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(makeBatch(id: "x", count: 1, start: now - 3600).events[0]), as: UTF8.self)
    }

    static let envelope = #""batchId":"rep","app":{"id":"shop","version":"1.0","build":"1"},"device":{"model":"iPhone14,5","osName":"iOS","osVersion":"18.1","maxRefreshRate":60}"#

    @Test("A repeated member inside an event refuses that event by name; the others are kept")
    func repeatedEventMember() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let service = IngestService(store: store, clock: { Self.now })
        let event = try Self.compactEvent()
        let hostile = event.replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"Feed","screen":"\u001b]0;pwned\u0007""#)
        #expect(hostile != event)
        let escapedKey = event.replacingOccurrences(of: #""duration":"#, with: #""dur\u0061tion":86400000,"duration":"#)
        let body = "{\(Self.envelope),\"events\":[\(event),\(hostile),\(escapedKey)]}"
        let response = try await service.ingest(body: ByteBuffer(string: body), app: "shop", logger: Self.logger)
        #expect(response.accepted == 1)
        #expect(response.rejected.map(\.field) == ["events[1].screen", "events[2].duration"])
        #expect(response.rejected.first?.message.contains("more than once") == true)
    }

    @Test("A repeated member in the envelope refuses the batch with 400 naming it")
    func repeatedEnvelopeMember() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let service = IngestService(store: store, clock: { Self.now })
        let event = try Self.compactEvent()
        let envelope = Self.envelope.replacingOccurrences(of: #""model":"iPhone14,5""#, with: #""model":"iPhone14,5","model":"<x>""#)
        await #expect {
            _ = try await service.ingest(body: ByteBuffer(string: "{\(envelope),\"events\":[\(event)]}"), app: "shop", logger: Self.logger)
        } throws: { error in
            let error = error as? CollectorError
            return error?.code == "invalid_field" && error?.field == "device.model"
        }
    }

    @Test("Repeated members are found at any depth, after escapes are decoded")
    func repeatedMemberScanner() {
        func scan(_ text: String) -> [String]? {
            Array(text.utf8).withUnsafeBytes { JSONScanner.repeatedMembers(in: $0) }?.map(\.fieldPath)
        }
        #expect(scan(#"{"a":1,"b":{"c":[{"d":1,"d":2}]}}"#) == ["b.c[0].d"])
        #expect(scan(#"{"a":1,"\u0061":2,"a":3}"#) == ["a"], "one path per repeated key")
        #expect(scan(#"{"a":{"x":1},"b":{"x":1}}"#) == [], "the same key in two objects is not repeated")
        #expect(scan(#"{"a":1,"a""#) == nil, "not JSON")
    }

    // MARK: What is stored (items 4 and 7)

    @Test("The stored raw event is the canonical re-encoding: no unknown member, one line, NFC, decodes to the validated event")
    func storedCanonicalForm() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let service = IngestService(store: store, clock: { Self.now })
        let event = try Self.compactEvent()
        let padding = String(repeating: "x", count: 14_000)
        let withUnknown = event.replacingOccurrences(of: #""screen":"Feed""#, with: "\"screen\":\"Cafe\u{301}\",\"junk\":\"\(padding)\"")
        // Pretty-printed: line feeds between members, which are legal JSON whitespace.
        let pretty = event.replacingOccurrences(of: ",\"", with: ",\n  \"")
        let body = "{\(Self.envelope),\"events\":[\(withUnknown),\(pretty)]}"
        let response = try await service.ingest(body: ByteBuffer(string: body), app: "shop", logger: Self.logger)
        #expect(response.accepted == 2)
        let keys = try await store.rawEventKeys(app: "shop", query: EventQuery(screens: ScreenQuery(from: Self.now - 86_400, to: Self.now)),
                                                 hour: RawEventKey.hour(of: Self.now - 3600), after: nil)
        let stored = try await store.rawEvents(app: "shop", keys: keys)
        #expect(stored.count == 2)
        for event in stored {
            #expect(!event.payload.contains("\n"), "one line")
            #expect(!event.payload.contains("junk"), "unknown members are not stored")
            #expect(event.payload.utf8.count < 2_000, "a few hundred bytes, not 14 KB")
            let decoded = try JSONDecoder().decode(ScreenVisitEvent.self, from: Data(event.payload.utf8))
            #expect(StoredEventJSON.encode(decoded) == event.payload, "a fixed point")
        }
        let screens = try stored.map { try JSONDecoder().decode(ScreenVisitEvent.self, from: Data($0.payload.utf8)).screen }
        #expect(screens.map(Self.scalars).sorted() == [Self.scalars("Caf\u{e9}"), "46 65 65 64"].sorted())
    }

    @Test("The canonical form round-trips every part of an event")
    func canonicalRoundTrip() throws {
        var event = makeBatch(id: "x", count: 1, start: Self.now - 3600).events[0]
        event.context.tags = ["q\"uote": "back\\slash", "é": "ü", "empty": ""]
        event.hangs = [HangRecord(offset: 0.125, duration: 0.5), HangRecord(offset: 1, duration: 1e-3)]
        event.resources = ResourceUsage(cpuPercent: .init(min: 1, mean: 2.5, max: 3), residentBytes: .init(min: 1e8, mean: 2e8, max: 3e8), samples: 4)
        event.mainThreadHitches = MainThreadHitches(frames: 2, hitchTime: 0.05)
        let text = StoredEventJSON.encode(event)
        let back = try JSONDecoder().decode(ScreenVisitEvent.self, from: Data(text.utf8))
        #expect(back == event)
        #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
    }

    // MARK: Every part checked (item 8)

    @Test("Hangs, resources and main-thread hitches are checked against physics and the report, refused by field")
    func partsChecked() throws {
        let validator = IngestValidator(limits: IngestLimits(), now: Self.now)
        let base = makeBatch(id: "x", count: 1, start: Self.now - 3600).events[0]
        let start = Self.now - 3600
        func problem(_ edit: (inout ScreenVisitEvent) -> Void) -> String? {
            var event = base
            edit(&event)
            return validator.check(event, startedAt: start)?.0
        }
        #expect(problem { _ in } == nil)
        #expect(problem { $0.hangs = [HangRecord(offset: 0.5, duration: 0.3), HangRecord(offset: 2, duration: 0.4)] } == nil)
        #expect(problem { $0.hangs = (0..<10_000).map { HangRecord(offset: Double($0), duration: 1e300) } } == "hangs")
        #expect(problem { $0.hangs = [HangRecord(offset: 1, duration: 1e300)] } == "hangs[0]")
        #expect(problem { $0.hangs = [HangRecord(offset: 2, duration: 1), HangRecord(offset: 2.5, duration: 1)] } == "hangs[1]")
        #expect(problem { $0.hangs = [HangRecord(offset: 1e9, duration: 1)] } == "hangs[0]")
        #expect(problem { $0.resources = ResourceUsage(cpuPercent: .init(min: 5, mean: 2, max: 1), residentBytes: .init(min: 1, mean: 1, max: 1), samples: 3) } == "resources.cpuPercent")
        #expect(problem { $0.resources = ResourceUsage(cpuPercent: .init(min: 1, mean: 1, max: 1), residentBytes: .init(min: 1, mean: 1, max: 1), samples: -9) } == "resources.samples")
        #expect(problem { $0.resources = ResourceUsage(cpuPercent: .init(min: -1, mean: 1, max: 1), residentBytes: .init(min: 1, mean: 1, max: 1), samples: 1) } == "resources.cpuPercent")
        #expect(problem { $0.mainThreadHitches = MainThreadHitches(frames: base.report.frames + base.report.firstFrames + 1, hitchTime: 0) } == "mainThreadHitches.frames")
        #expect(problem { $0.mainThreadHitches = MainThreadHitches(frames: 1, hitchTime: 1e9) } == "mainThreadHitches.hitchTime")
        #expect(problem { $0.mainThreadHitches = MainThreadHitches(frames: 1, hitchTime: 0.01) } == nil)
    }
}
