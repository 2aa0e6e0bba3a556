import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// An event store (the one role the group commit and the export use) that forwards to
/// SQLite, fails any write that holds the batch `poison`, and can hold its first write
/// until ``release()``.
final class FaultyStore: EventStore, @unchecked Sendable {
    let base: SQLiteStore
    let gate = Gate()
    let holdFirstWrite: Bool
    private let lock = NSLock()
    private var writes = 0
    private var hourReads = 0

    init(base: SQLiteStore, holdFirstWrite: Bool = false) {
        self.base = base
        self.holdFirstWrite = holdFirstWrite
    }

    actor Gate {
        private var open = false
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private(set) var arrived = 0
        func wait() async {
            arrived += 1
            if open { return }
            await withCheckedContinuation { waiters.append($0) }
        }
        func release() {
            open = true
            for waiter in waiters { waiter.resume() }
            waiters = []
        }
    }

    func rawEventCount(app: String) async throws -> Int { try await base.rawEventCount(app: app) }
    func rawEventKeys(app: String, query: EventQuery, hour: Int64, after: RawEventKey?) async throws -> [RawEventKey] {
        lock.withLock { hourReads += 1 }
        return try await base.rawEventKeys(app: app, query: query, hour: hour, after: after)
    }
    func rawEvents(app: String, keys: [RawEventKey]) async throws -> [StoredEvent] { try await base.rawEvents(app: app, keys: keys) }
    func deleteRawEvents(startedBefore cutoff: Double, limit: Int) async throws -> Int { try await base.deleteRawEvents(startedBefore: cutoff, limit: limit) }
    func firstRawEventHour(app: String, from hour: Int64, through lastHour: Int64) async throws -> Int64? {
        lock.withLock { hourReads += 1 }
        return try await base.firstRawEventHour(app: app, from: hour, through: lastHour)
    }
    /// How many times an export read the next hour with events or an hour's keys.
    var hourReadCount: Int { lock.withLock { hourReads } }

    func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult] {
        let first = lock.withLock { writes += 1; return writes == 1 }
        if holdFirstWrite && first { await gate.wait() }
        if batches.contains(where: { $0.batchId == "poison" }) {
            throw CollectorError(.unprocessableContent, code: "invalid_batch", field: "batchId", message: "this batch cannot be stored")
        }
        return try await base.ingest(batches)
    }
}

@Suite("Hostile ingest")
struct HostileIngestTests {
    static let now = CollectorRouteTests.now

    func ingestBatch(_ batch: EventBatch) -> IngestBatch {
        IngestBatch(app: batch.app.id ?? "shop", batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                    deviceModel: batch.device.model, events: batch.events.map { ($0, ISO8601.parse($0.startedAt) ?? 0) },
                    rawEvents: batch.events.map { _ in "{}" }, receivedAt: Self.now)
    }

    @Test("One batch that cannot be stored fails alone: the other batches of its flush are committed")
    func poisonBatchFailsAlone() async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        _ = shop
        let store = FaultyStore(base: temporary.store, holdFirstWrite: true)
        let commit = GroupCommit(store: store)
        let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
            // The first request leads and is held at the store, so the rest wait and share one flush.
            group.addTask { (try? await commit.ingest(self.ingestBatch(makeBatch(id: "lead", start: Self.now - 600)))) != nil ? ("lead", true) : ("lead", false) }
            while await store.gate.arrived == 0 { await Task.yield() }
            for id in ["good-1", "poison", "good-2"] {
                group.addTask { (id, (try? await commit.ingest(self.ingestBatch(makeBatch(id: id, start: Self.now - 600)))) != nil) }
            }
            // Once the three wait behind the held write, release it (waited for, not slept
            // on: a starved test process once took longer than any fixed sleep).
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(120)
            while await commit.waitingBatches < 3, clock.now < deadline { await Task.yield() }
            #expect(await commit.waitingBatches == 3, "the three batches wait behind the held write")
            await store.gate.release()
            var results: [String: Bool] = [:]
            for await (id, ok) in group { results[id] = ok }
            return results
        }
        #expect(outcomes == ["lead": true, "good-1": true, "poison": false, "good-2": true])
        #expect(await commit.splitFlushes == 1)
        #expect(try await temporary.store.rawEventCount(app: "shop") == 9)
    }

    @Test("Past maximumWaitingBytes a batch is refused at once with 503 and Retry-After; the held one still commits")
    func writerSaturation() async throws {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: "shop")
        let store = FaultyStore(base: temporary.store, holdFirstWrite: true)
        let commit = GroupCommit(store: store, maximumWaitingBytes: 10)
        async let lead = commit.ingest(ingestBatch(makeBatch(id: "lead", start: Self.now - 600)))
        while await store.gate.arrived == 0 { await Task.yield() }
        var big = ingestBatch(makeBatch(id: "big", start: Self.now - 600))
        big.rawEvents = big.rawEvents.map { _ in String(repeating: "x", count: 100) }
        do {
            _ = try await commit.ingest(big)
            Issue.record("a batch past the waiting budget was queued")
        } catch let error as CollectorError {
            #expect(error.status == .serviceUnavailable)
            #expect(error.headers[.retryAfter] == "1")
        }
        #expect(await commit.refusedBatches == 1)
        await store.gate.release()
        #expect(try await lead.stored == 3)
    }

    @Test("The byte budget refuses what does not fit and takes back what is released")
    func byteBudget() async {
        let budget = ByteBudget(capacity: 100)
        #expect(await budget.reserve(60))
        #expect(await budget.reserve(50) == false)
        #expect(await budget.reserve(-1) == false)
        await budget.release(60)
        #expect(await budget.reserve(100))
        #expect(await budget.refusals == 2)
    }

    @Test("The rollup row cache is bounded by bytes as well as rows")
    func rowCacheBytes() throws {
        let cache = RollupRowCache(capacity: 1_000_000, capacityBytes: 20_000)
        let value = RollupValue(visit: makeBatch(id: "b", start: Self.now).events[0])
        #expect(value.approximateBytes > 500)
        for index in 0..<200 {
            let key = RollupRowCache.Key(level: .hourly, app: "shop", key: RollupKey(bucketStart: Int64(index) * 3600,
                                                                                    [.screen: "Feed", .appVersion: "1", .osVersion: "18", .deviceModel: "x"]))
            cache.stage(key, value)
            cache.commit()
            #expect(cache.usage.bytes <= 20_000)
        }
        #expect(cache.usage.rows < 200)
    }
}

@Suite("Hostile events over HTTP")
struct HostileEventRouteTests {
    static let now = CollectorRouteTests.now

    /// Posts `batch` edited as JSON by `edit` with the shop's ingest key.
    func post(_ client: any TestClientProtocol, _ key: String, _ batch: EventBatch,
              edit: (inout [String: Any]) throws -> Void = { _ in }) async throws -> TestResponse {
        var json = try #require(JSONSerialization.jsonObject(with: try jsonData(batch)) as? [String: Any])
        try edit(&json)
        return try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(key)"],
                                        body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
    }

    /// Edits event `index`'s report object.
    func editReport(_ json: inout [String: Any], event index: Int, _ edit: (inout [String: Any]) -> Void) throws {
        var events = try #require(json["events"] as? [[String: Any]])
        var report = try #require(events[index]["report"] as? [String: Any])
        edit(&report)
        events[index]["report"] = report
        json["events"] = events
    }

    @Test("Events with counts near Int.max, too many tally entries, format characters or oversized names are refused by field; the good event is kept")
    func hostileEvents() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            var batch = makeBatch(id: "hostile", count: 6, start: Self.now - 600)
            batch.events[3].screen = "Feed\u{202E}gnp.exe"
            batch.events[4].screen = "a" + String(repeating: "\u{301}", count: 100)
            let response = try await post(client, shop.ingestKey, batch) { json in
                try editReport(&json, event: 0) { $0["slowFrames"] = Int.max; $0["frozenFrames"] = Int.max }
                try editReport(&json, event: 1) { $0["frames"] = Int.max }
                try editReport(&json, event: 2) { report in
                    var histograms = report["histograms"] as? [String: Any] ?? [:]
                    histograms["windowFPS"] = (0..<2000).map { [Double($0) / 10, 1] }
                    report["histograms"] = histograms
                }
            }
            #expect(response.status == .accepted)
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            #expect(answer.accepted == 1)
            #expect(answer.rejected.map(\.field) == ["events[0].report.slowFrames", "events[1].report.frames",
                                                     "events[2].report.histograms.windowFPS", "events[3].screen", "events[4].screen"])
            #expect(answer.rejected[3].message.contains("U+202E"))
            #expect(answer.rejected[4].message.contains("bytes"))
            // The server is still up and answers queries.
            let query = try await client.execute(uri: "/v1/apps/shop/screens?from=2026-11-19&to=2026-11-21", method: .get,
                                                 headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(query.status == .ok)
        }
    }

    @Test("Past the bytes the collector may hold at once, a request is answered 503 with Retry-After before its body is read")
    func bytesInFlight() async throws {
        try await CollectorRouteTests().withCollector(configure: { $0.maximumBytesInFlight = 1_000 }) { client, shop, _ in
            let body = try jsonData(makeBatch(id: "big", start: Self.now - 600))
            #expect(body.count > 1_000)
            let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                    body: ByteBuffer(data: body))
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers[.retryAfter] == "1")
            let error = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body)).error
            #expect(error.code == "saturated")
        }
    }

    @Test("Visits that each pass physics merge into a row that passes it too: tiny visits cannot poison a rollup row")
    func noPoisonedRows() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            // Two one-frame visits of 1 ns each, same screen and hour: the old per-visit
            // allowance (+1 frame) let each pass, and their merge (2 frames in 2 ns) failed to
            // decode on every later read of the row.
            let batch = makeBatch(id: "tiny", count: 2, start: Self.now - 600)
            let response = try await post(client, shop.ingestKey, batch) { json in
                for index in 0..<2 {
                    try editReport(&json, event: index) { report in
                        report["frames"] = 1
                        report["duration"] = 1e-9
                        report["droppedFrames"] = 0; report["dropEvents"] = 0; report["maxDroppedFrames"] = 0; report["hitchTime"] = 0
                        report["slowFrames"] = 0; report["frozenFrames"] = 0; report["hangs"] = 0; report["hangTime"] = 0
                        report["frameDuration"] = ["min": 1e-9, "max": 1e-9]
                        report["refreshRates"] = ["60": 1]
                        report["histograms"] = ["frameDuration": [[0, 1]], "windowFPS": [], "stabilityBand": 0.2]
                    }
                }
                var events = try #require(json["events"] as? [[String: Any]])
                for index in 0..<2 { events[index]["motion"] = NSNull() }
                json["events"] = events
            }
            #expect(response.status == .accepted)
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            #expect(answer.accepted == 0, "a frame of 1 ns is shorter than any display refresh: \(answer.rejected.map(\.message))")
            // Visits at exactly the fastest refresh still merge into a readable row.
            let query = try await client.execute(uri: "/v1/apps/shop/screens?from=2026-11-19&to=2026-11-21", method: .get,
                                                 headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(query.status == .ok)
        }
    }

    @Test("A device field with a format character (U+0600 before '<') is refused with 400 naming it")
    func hostileEnvelope() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            var batch = makeBatch(id: "envelope", start: Self.now - 600)
            batch.device.model = "\u{600}<img src=x onerror=alert(1)>"
            let response = try await post(client, shop.ingestKey, batch)
            #expect(response.status == .badRequest)
            let error = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body)).error
            #expect(error.field == "device.model")
            #expect(error.message.contains("U+0600"))
        }
    }
}

@Suite("Cardinality limits")
struct CardinalityTests {
    static let now = CollectorRouteTests.now

    @Test("Past an app's daily limit new screens and versions fold into (other), counted per dimension; the next day starts afresh")
    func folding() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-cardinality-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var limits = CardinalityLimits()
        limits.screens = 3
        limits.appVersions = 1
        let store = try SQLiteStore(path: directory.appendingPathComponent("c.sqlite").path, cardinality: limits)
        _ = try await store.createApp(name: "Shop", id: "shop")
        let day = RollupLevel.floor(Int64(Self.now), to: 86_400)
        func batch(_ id: String, screens: [String], version: String, start: Double) -> IngestBatch {
            let events = screens.enumerated().map { index, screen -> (ScreenVisitEvent, Double) in
                var event = makeBatch(id: id, count: 1, start: start).events[0]
                event.screen = screen
                return (event, start + Double(index))
            }
            return IngestBatch(app: "shop", batchId: id, appVersion: version, osVersion: "18", deviceModel: "x", events: events,
                               rawEvents: events.map { _ in "{}" }, receivedAt: Self.now)
        }
        let first = try await store.ingest(batch("a", screens: ["A", "B", "C", "D", "E", "A"], version: "1.0", start: Double(day) + 60))
        #expect(first.stored == 6)
        #expect(first.folded == ["screen": 2])
        let second = try await store.ingest(batch("b", screens: ["B", "F"], version: "2.0", start: Double(day) + 120))
        #expect(second.folded == ["screen": 1, "appVersion": 2])
        let range = ScreenQuery(from: Double(day), to: Double(day) + 86_400)
        let screens = try await store.screens(app: "shop", query: range)
        #expect(Set(screens.map(\.screen)) == ["A", "B", "C", CardinalityLimits.other])
        #expect(screens.first { $0.screen == CardinalityLimits.other }?.visits == 3)
        #expect(try await store.dimensionValues(app: "shop", dimension: .appVersion, from: Double(day), to: Double(day) + 86_400)
                == ["(other)", "1.0"])
        // A new day admits new values again.
        let next = try await store.ingest(batch("c", screens: ["Z"], version: "2.0", start: Double(day) + 86_400 + 60))
        #expect(next.folded.isEmpty)
    }

    @Test("A device may not send '(other)' itself, and /metrics counts folded values per dimension")
    func reservedAndCounted() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            var batch = makeBatch(id: "reserved", count: 2, start: Self.now - 600)
            batch.events[0].screen = CardinalityLimits.other
            let response = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                    body: ByteBuffer(data: try jsonData(batch)))
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            #expect(answer.rejected.map(\.field) == ["events[0].screen"])
            batch.app.version = CardinalityLimits.other
            batch.batchId = "reserved-version"
            let refused = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                   body: ByteBuffer(data: try jsonData(batch)))
            #expect(refused.status == .badRequest)
        }
        let metrics = CollectorMetrics()
        metrics.recordIngest(app: "shop", accepted: 3, rejected: 0, folded: ["screen": 2])
        #expect(metrics.exposition().contains(#"framescope_folded_values_total{app="shop",dimension="screen"} 2"#))
    }
}
