import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Hummingbird
import HummingbirdTesting
import Testing

/// Fatal hangs (`"kind": "fatalHang"` in `events`): checked by field, stored once per id
/// under their own screen and versions, their values gated like a visit's.
@Suite("Fatal hangs at ingest")
struct FatalHangIngestTests {
    static let now = CollectorRouteTests.now

    static func fatalHang(id: String = "fatal-1", screen: String = "Checkout", version: String = "3.0.0", start: Double = now - 600,
                          duration: Double = 4.5) -> FatalHangEvent {
        FatalHangEvent(id: id, screen: screen, startedAt: ISO8601.format(unixSeconds: start), duration: duration, appVersion: version,
                       build: "300", osVersion: "17.5", context: VisitContext(network: .cellular, lowPowerMode: false, tags: ["plan": "pro"]),
                       stack: HangStackFixtures.stack(site: 0x215c))
    }

    /// A batch body whose events are `fatal` hangs (and `visits` visits), as the SDK splices them.
    static func body(_ id: String, fatal: [FatalHangEvent], visits: Int = 0, version: String = "3.1.0") throws -> ByteBuffer {
        var batch = makeBatch(id: id, count: max(visits, 1), start: now - 3000, version: version)
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        var json = try #require(JSONSerialization.jsonObject(with: encoder.encode(batch)) as? [String: Any])
        var events = visits == 0 ? [] : try #require(json["events"] as? [[String: Any]])
        for hang in fatal { events.append(try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(hang)) as? [String: Any])) }
        json["events"] = events
        batch.events = []
        return ByteBuffer(data: try JSONSerialization.data(withJSONObject: json))
    }

    @Test("A fatal hang and a visit's hang end by one bound: the batch's arrival plus the clock skew allowed for startedAt")
    func endBound() {
        let validator = IngestValidator(limits: IngestLimits(), now: Self.now)
        #expect(validator.latestHangEnd == Self.now + IngestLimits().maximumFutureSkew)
        // A device whose clock is an hour ahead: its start passes, and so must an end as far ahead.
        let start = Self.now + 3600
        for (duration, refused) in [(validator.latestHangEnd - start, false), (validator.latestHangEnd - start + 1, true)] {
            var fatal = Self.fatalHang()
            fatal.startedAt = ISO8601.format(unixSeconds: start)
            fatal.duration = duration
            #expect((validator.check(fatal, startedAt: start)?.0 == "duration") == refused, "fatal, \(duration) s")
            let visit = validator.checkHangs([HangRecord(offset: 0, duration: duration)], startedAt: start, visitDuration: 86_400)
            #expect((visit?.0 == "hangs[0]") == refused, "visit, \(duration) s")
        }
        var fatal = Self.fatalHang()
        fatal.duration = 86_400
        fatal.startedAt = ISO8601.format(unixSeconds: Self.now + 1)
        #expect(validator.check(fatal, startedAt: Self.now + 1)?.1.contains("arrival plus the day of clock skew allowed for startedAt") == true)
    }

    @Test("Every field of a fatal hang is checked and refused by name")
    func checked() {
        let validator = IngestValidator(limits: IngestLimits(), now: Self.now)
        func problem(_ edit: (inout FatalHangEvent) -> Void) -> String? {
            var event = Self.fatalHang()
            edit(&event)
            return validator.check(event, startedAt: ISO8601.parse(event.startedAt))?.0
        }
        #expect(problem { _ in } == nil)
        #expect(problem { $0.id = "" } == "id")
        #expect(problem { $0.id = "a/b" } == "id")
        #expect(problem { $0.id = String(repeating: "x", count: 65) } == "id")
        #expect(problem { $0.screen = "" } == "screen")
        #expect(problem { $0.screen = CardinalityLimits.other } == "screen")
        #expect(problem { $0.appVersion = "" } == "appVersion")
        #expect(problem { $0.build = "x\u{202E}" } == "build")
        #expect(problem { $0.osVersion = String(repeating: "9", count: 65) } == "osVersion")
        #expect(problem { $0.startedAt = "yesterday" } == "startedAt")
        #expect(problem { $0.startedAt = ISO8601.format(unixSeconds: Self.now - 40 * 86_400) } == "startedAt")
        #expect(problem { $0.duration = -1 } == "duration")
        #expect(problem { $0.duration = .infinity } == "duration")
        #expect(problem { $0.duration = 2 * 86_400 } == "duration")
        #expect(problem { $0.context.tags = ["k": "v\u{0}"] } == "context.tags.k")
        #expect(problem { $0.context.tags = ["k": CardinalityLimits.other] } == "context.tags.k")
        #expect(problem { $0.context.tags = ["k": DeclaredTags.none] } == "context.tags.k")
        #expect(problem { $0.stack = nil } == nil)
        // A bad stack is dropped; the fatal hang is kept.
        var event = Self.fatalHang()
        event.stack?.frames[1].offset = 1 << 40
        #expect(IngestValidator.dropInvalidStack(&event).map(\.0) == ["stack.frames[1]"])
        #expect(event.stack == nil && validator.check(event, startedAt: ISO8601.parse(event.startedAt)) == nil)
    }

    @Test("A batch of only a fatal hang is accepted; it shows as fatal on its own screen and version, once however often it is sent")
    func throughTheRoutes() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            func post(_ body: ByteBuffer) async throws -> IngestResponse {
                let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: body)
                #expect(response.status == .accepted, "\(String(buffer: response.body))")
                return try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            }
            #expect(try await post(Self.body("launch-2", fatal: [Self.fatalHang()])) == IngestResponse(batchId: "launch-2", accepted: 1, duplicate: false, rejected: []))
            // The next launch could not delete the record before it was killed again: the
            // same hang in another batch, beside two visits.
            let again = try await post(Self.body("launch-3", fatal: [Self.fatalHang()], visits: 2))
            #expect(again.accepted == 3)
            // A bad fatal hang is refused alone; the visit beside it is kept.
            var bad = Self.fatalHang(id: "fatal-2")
            bad.duration = -1
            let mixed = try await post(Self.body("launch-4", fatal: [bad], visits: 1))
            #expect(mixed.accepted == 1)
            #expect(mixed.rejected.map(\.field) == ["events[1].duration"])
            // A bad stack costs only itself: the fatal hang is stored without it and the answer names it.
            var unstacked = Self.fatalHang(id: "fatal-3", screen: "Search")
            unstacked.stack?.samples[0].frames = [99]
            let kept = try await post(Self.body("launch-5", fatal: [unstacked]))
            #expect(kept.accepted == 1 && kept.rejected.isEmpty)
            #expect(kept.stacksDropped.map(\.field) == ["events[0].stack.samples[0].frames[0]"])
            let search = try await client.execute(uri: "/v1/apps/shop/hangs?from=2026-11-19T00:00:00Z&screen=Search", method: .get,
                                                  headers: [.authorization: "Bearer \(shop.readKey)"])
            let searchGroups = try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: search.body)).groups
            #expect(searchGroups.map(\.signature) == ["(no stack)"] && searchGroups.first?.fatal == 1)

            let response = try await client.execute(uri: "/v1/apps/shop/hangs?from=2026-11-19T00:00:00Z&screen=Checkout", method: .get,
                                                    headers: [.authorization: "Bearer \(shop.readKey)"])
            let groups = try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: response.body)).groups
            #expect(groups.count == 1)
            #expect(groups.first?.hangs == 1 && groups.first?.fatal == 1)
            #expect(groups.first?.duration == 4.5)
            #expect(groups.first?.appVersions == ["3.0.0"], "the version of the launch that hung, not the batch's 3.1.0")
            #expect(groups.first?.signature == "73d406b3246a378bbefc16429a4d8133+0x215b")
            let tagged = try await client.execute(uri: "/v1/apps/shop/hangs?from=2026-11-19T00:00:00Z&tag.plan=pro&network=cellular", method: .get,
                                                  headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: tagged.body)).groups.first?.fatal == 1)
        }
    }

    @Test("A fatal hang's versions pass the cardinality gate: past the daily limit they fold into (other)")
    func gated() {
        var limits = CardinalityLimits()
        limits.appVersions = 1
        var batch = StoreContractTests.ingestBatch(makeBatch(id: "b", count: 1, start: Self.now - 3000, version: "3.1.0"))
        batch.fatalHangs = [(Self.fatalHang(version: "2.9.0"), Self.now - 600)]
        let plan = IngestPlanner.plan([batch], known: [], declaredTags: [:], ledger: IngestPlannerTests.emptyLedger(limits, for: [batch]))
        let version = QueryDimension.all.firstIndex { $0 == .appVersion }!
        #expect(plan.stored.first?.events.first?.dimensionValues[version] == "3.1.0")
        #expect(plan.stored.first?.fatalHangs.first?.dimensionValues[version] == CardinalityLimits.other)
        #expect(plan.results.first?.stored == 2)
        #expect(plan.stored.first?.hangRows.last?.fatal == true)
        #expect(plan.stored.first?.hangRows.last?.key == "fatal-1")
    }

    @Test("Bodies with fatal hangs decode as JSONDecoder decodes them")
    func decoderAgreement() throws {
        let body = Array(try Self.body("x", fatal: [Self.fatalHang(), Self.fatalHang(id: "y")], visits: 2).readableBytesView)
        let expected = WireBatchDecoderTests.reference(body)
        guard case let .batch(_, _, _, _, events) = expected else {
            Issue.record("refused: \(expected)")
            return
        }
        #expect(events.count == 4)
        #expect(events[2] == .fatalHang(Self.fatalHang()))
        #expect(WireBatchDecoderTests.current(body) == expected)
        #expect(WireBatchDecoderTests.fastPathTaken(body), "visits on the fast path, fatal hangs decoded alone")
    }
}
