import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Logging
import NIOCore
import Testing

/// What a body of hang stacks costs (issue 43, item 1): stacks beside JSON reports, and
/// fatal hangs, are read by the fast decoder (never by `JSONDecoder` whole) to exactly
/// what `JSONDecoder` gives; a heavy body's decoded form is charged to the byte budget;
/// hang summaries are computed before the batch reaches the store's transaction.
@Suite("Stacks at ingest: decoding, budget, summaries")
struct StackIngestCostTests {
    typealias Spelling = WireBatchDecoderTests.Spelling
    static let now = CollectorRouteTests.now
    static let logger = Logger(label: "test")

    /// A stack at every limit a device may reach: 64 images, 2,560 frames, 50 samples of
    /// 256 frames each (the red team's "legal maximal stack"), reproducible from `seed`.
    static func maximalStack(seed: UInt64, samples: Int = 50, depth: Int = 256) -> HangStack {
        var generator = SeededGenerator(seed: seed)
        let images = (0..<64).map { index in
            let hex = String(index + 1, radix: 16)
            return HangStack.Image(id: String(repeating: "0", count: 32 - hex.count) + hex, name: "Image\(index)", size: 1 << 20, app: index < 2)
        }
        let frames = (0..<2_560).map { index in HangStack.Frame(image: index % 64, offset: generator.next() % (1 << 20)) }
        let list = (0..<samples).map { index in
            HangStack.Sample(at: Double(index) * 0.1, frames: (0..<depth).map { _ in Int(generator.next() % 2_560) })
        }
        return HangStack(images: images, frames: frames, samples: list)
    }

    /// `count` visits (reports as JSON objects unless the spelling is compact), each with
    /// `stacks` hangs of a maximal stack, then `fatal` fatal hangs with one each.
    static func body(visits count: Int, stacks: Int, fatal: Int, spelling: Spelling, samples: Int = 50, depth: Int = 256) throws -> [UInt8] {
        let batch = makeBatch(id: "stacks-1", count: count, start: now - 3_000)
        var visits = batch.events
        for index in visits.indices {
            visits[index].duration = 100
            visits[index].hangs = (0..<stacks).map { hang in
                HangRecord(offset: Double(hang) * 7, duration: 6, stack: maximalStack(seed: UInt64(index * 100 + hang), samples: samples, depth: depth))
            }
        }
        let fatalHangs = (0..<fatal).map { index in
            FatalHangEvent(id: "fatal-\(index)", screen: "Checkout", startedAt: ISO8601.format(unixSeconds: now - 600), duration: 4.5,
                           appVersion: "3.0.0", build: "300", osVersion: "17.5", context: VisitContext(network: .wifi, lowPowerMode: false),
                           stack: maximalStack(seed: 9_000 + UInt64(index), samples: samples, depth: depth))
        }
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = spelling.compactReports
        encoder.outputFormatting = spelling.formatting
        func json(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        let events = try visits.map { try json($0) } + fatalHangs.map { try json($0) }
        return Array("{\"batchId\":\"stacks-1\",\"app\":\(try json(batch.app)),\"device\":\(try json(batch.device)),\"events\":[\(events.joined(separator: ","))]}".utf8)
    }

    /// How many events the fast decoder left to `JSONDecoder` (nil: it declined the body).
    static func eventsLeftToJSONDecoder(_ body: [UInt8]) -> Int? {
        body.withUnsafeBytes { bytes in
            var parser = WireJSONParser(bytes: bytes)
            guard (try? parser.batch()) != nil else { return nil }
            return parser.eventsLeftToJSONDecoder
        }
    }

    @Test("Visits with JSON reports and maximal stacks, and fatal hangs with stacks, decode on the fast path to exactly what JSONDecoder gives",
          arguments: Spelling.allCases)
    func stacksDecodeAsJSONDecoderDoes(spelling: Spelling) throws {
        let body = try Self.body(visits: 2, stacks: 4, fatal: 2, spelling: spelling)
        let expected = WireBatchDecoderTests.reference(body)
        guard case let .batch(_, _, _, _, events) = expected else {
            Issue.record("the reference refused the batch: \(expected)")
            return
        }
        #expect(events.count == 4)
        #expect(events.allSatisfy { if case let .decoded(visit) = $0 { visit.hangs.count == 4 } else { true } })
        #expect(events.filter { if case .fatalHang = $0 { true } else { false } }.count == 2)
        #expect(WireBatchDecoderTests.current(body) == expected)
        // Before issue 43 item 1, each visit with a JSON report and each fatal hang was JSONDecoder's.
        #expect(Self.eventsLeftToJSONDecoder(body) == 0, "every event, its stacks included, is read by the fast decoder")
    }

    @Test("Random byte edits of a body with stacks, JSON reports and a fatal hang: the same result as JSONDecoder")
    func randomEditsWithStacks() throws {
        let body = try Self.body(visits: 1, stacks: 1, fatal: 1, spelling: .json, samples: 2, depth: 4)
        let interesting = Array("\"\\,:{}[]0123456789-+.eEntfu /".utf8) + [0x00, 0x1F, 0x80, 0xFF]
        var generator = SeededGenerator(seed: 431)
        for trial in 0..<1_500 {
            var edited = body
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let position = Int(generator.next() % UInt64(edited.count))
                switch generator.next() % 3 {
                case 0: edited[position] = interesting[Int(generator.next() % UInt64(interesting.count))]
                case 1: edited.remove(at: position)
                default: edited.insert(interesting[Int(generator.next() % UInt64(interesting.count))], at: position)
                }
            }
            #expect(WireBatchDecoderTests.current(edited) == WireBatchDecoderTests.reference(edited), "trial \(trial)")
        }
    }

    @Test("A report object beside stacks: an unknown member is read on the fast path; a repeated member, a wrong type or null is JSONDecoder's, with its field path")
    func reportObjects() throws {
        let body = String(decoding: try Self.body(visits: 1, stacks: 1, fatal: 0, spelling: .json, samples: 2, depth: 4), as: UTF8.self)
        #expect(body.contains("\"report\":{"))
        let cases: [(String, String, Bool)] = [
            ("unknown member", "\"report\":{\"extra\":[1,{}],", true),
            ("repeated member", "\"report\":{\"frames\":1,", false),
            ("array", "\"report\":[],\"y\":{", false),
            ("null", "\"report\":null,\"y\":{", false),
            ("wrong type", "", false),
        ]
        for (name, replacement, fast) in cases {
            var text = body.replacingOccurrences(of: "\"report\":{", with: replacement.isEmpty ? "\"report\":{" : replacement)
            if replacement.isEmpty, let report = text.range(of: "\"report\":{"),
               let frames = text.range(of: "\"frames\":", range: report.upperBound..<text.endIndex) {
                text.replaceSubrange(frames, with: "\"frames\":\"many\",\"z\":")  // a string where the report has a number
            }
            let edited = Array(text.utf8)
            let expected = WireBatchDecoderTests.reference(edited)
            #expect(WireBatchDecoderTests.current(edited) == expected, "\(name)")
            #expect((Self.eventsLeftToJSONDecoder(edited) == 0) == fast, "\(name): \(expected)")
        }
    }

    @Test("A heavy body whose decoded form cannot fit the byte budget is refused with 413 naming the limit; nothing is stored")
    func decodedFormOverBudget() async throws {
        let body = try Self.body(visits: 1, stacks: 8, fatal: 0, spelling: .compact)
        #expect(body.count >= IngestWork.heavyBytes)
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        var limits = IngestLimits()
        limits.maximumBytesInFlight = body.count  // the body fits; its decoded form (2×) does not
        let service = IngestService(store: store, limits: limits, clock: { Self.now })
        do {
            _ = try await service.ingest(body: ByteBuffer(bytes: body), app: "shop", logger: Self.logger)
            Issue.record("a body decoding past the budget was accepted")
        } catch let error as CollectorError {
            #expect(error.status == .contentTooLarge && error.code == "body_too_large")
            #expect(error.message.contains("IngestLimits.maximumBytesInFlight") && error.message.contains("\(body.count) bytes"))
        }
        #expect(try await store.rawEventCount(app: "shop") == 0)
        #expect(await service.budget.reserved == 0)

        // With room for it, the same body is stored, and its charge given back.
        limits.maximumBytesInFlight = body.count * 3
        let roomy = IngestService(store: store, limits: limits, clock: { Self.now })
        // While other requests hold the budget, it is 503 saturated.
        #expect(await roomy.budget.reserve(body.count * 2))
        await #expect(throws: CollectorError.self) { try await roomy.ingest(body: ByteBuffer(bytes: body), app: "shop", logger: Self.logger) }
        await roomy.budget.release(body.count * 2)
        let response = try await roomy.ingest(body: ByteBuffer(bytes: body), app: "shop", logger: Self.logger)
        #expect(response.accepted == 1 && response.rejected.isEmpty)
        #expect(await roomy.budget.reserved == 0)
    }

    @Test("Hang summaries reach the store computed, equal to the summaries of the stacks, so the write transaction computes none")
    func summariesBeforeTheTransaction() async throws {
        let inner = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await inner.createApp(name: "Shop", id: "shop")
        let spy = SummarySpyStore(inner: inner)
        let service = IngestService(store: spy, clock: { Self.now })
        for (name, spelling) in [("small", Spelling.compact), ("heavy", .json)] {
            let stacks = name == "small" ? 2 : 8
            var text = String(decoding: try Self.body(visits: 1, stacks: stacks, fatal: 1, spelling: spelling), as: UTF8.self)
            text = text.replacingOccurrences(of: "stacks-1", with: "stacks-\(name)")
            let response = try await service.ingest(body: ByteBuffer(string: text), app: "shop", logger: Self.logger)
            #expect(response.accepted == 2 && response.rejected.isEmpty && response.stacksDropped.isEmpty, "\(name): \(response.stacksDropped)")
        }
        let batches = await spy.received
        #expect(batches.count == 2)
        for batch in batches {
            let visits = try #require(batch.visitHangSummaries)
            let fatal = try #require(batch.fatalHangSummaries)
            #expect(visits.count == batch.events.count && fatal.count == batch.fatalHangs.count)
            for (index, entry) in batch.events.enumerated() {
                #expect(visits[index] == entry.event.hangs.map { $0.stack.map { HangSummary($0) } })
            }
            #expect(fatal == batch.fatalHangs.map { $0.event.stack.map { HangSummary($0) } ?? .withoutStack })
        }
        // And the rows are stored: one per stacked hang, and the fatal hang once (both
        // batches send it with the id `fatal-0`).
        let groups = try await inner.hangGroups(app: "shop", query: EventQuery(screens: ScreenQuery(from: Self.now - 86_400, to: Self.now + 60)),
                                                source: .sdk, limit: 1_000)
        #expect(groups.reduce(0) { $0 + $1.hangs } == 2 + 8 + 1)
    }
}

/// An event store that records each batch it is given, then stores it in `inner`.
actor SummarySpyStore: EventStore, MetricKitStore {
    let inner: SQLiteStore
    private(set) var received: [IngestBatch] = []

    init(inner: SQLiteStore) {
        self.inner = inner
    }

    func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult] {
        received += batches
        return try await inner.ingest(batches)
    }

    func rawEventCount(app: String) async throws -> Int { try await inner.rawEventCount(app: app) }
    func firstRawEventHour(app: String, from hour: Int64, through lastHour: Int64) async throws -> Int64? {
        try await inner.firstRawEventHour(app: app, from: hour, through: lastHour)
    }
    func rawEventKeys(app: String, query: EventQuery, hour: Int64, after: RawEventKey?) async throws -> [RawEventKey] {
        try await inner.rawEventKeys(app: app, query: query, hour: hour, after: after)
    }
    func rawEvents(app: String, keys: [RawEventKey]) async throws -> [StoredEvent] { try await inner.rawEvents(app: app, keys: keys) }
    func deleteRawEvents(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await inner.deleteRawEvents(startedBefore: cutoff, limit: limit)
    }
    nonisolated var retentionChunk: Int { 10_000 }
    func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int { try await inner.storeMetricKit(app: app, records: records) }
    func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary] {
        try await inner.metricKitVersions(app: app, query: query)
    }
    func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await inner.deleteMetricKitPayloads(endedBefore: cutoff, limit: limit)
    }
}
