import CompressNIO
import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 43, item 8: a batch of binary reports whose window-FPS tallies claim a million
/// entries each. Round 1 answered it (within 20 s); round 3 found the connection closed at
/// the idle timeout while the collector still worked on it.
enum TallyFlood {
    /// `report`'s binary form with its window-FPS tally replaced by `entries` entries of
    /// keys 1, 2, 3, … (each counted once): the counters, extremes and frame-duration
    /// histogram are the report's own.
    static func binary(_ report: FrameReport, windowEntries entries: Int) -> [UInt8] {
        func pairs(_ pairs: [(Int, Int)]) -> [UInt8] {
            var writer = BinaryWriter()
            writer.pairs(pairs)
            return writer.bytes
        }
        let whole = report.binaryEncoded()
        let window = pairs(report.windowFPS.entries.map { ($0.key, $0.count) })
        let rates = pairs(report.refreshRates.entries.map { ($0.key, $0.count) })
        var bytes = Array(whole.dropLast(window.count + rates.count))
        var flood = BinaryWriter()
        flood.unsigned(UInt64(entries))
        flood.bytes.reserveCapacity(2 * entries + 10)
        for _ in 0..<entries {
            flood.unsigned(1)   // the key: one more than the last
            flood.unsigned(1)   // its count
        }
        bytes += flood.bytes
        bytes += rates
        return bytes
    }

    /// A batch of `count` visits sent with binary reports (`reportData`, `motionData`), as
    /// JSONSerialization writes it (slashes escaped); the visits in `flooded` have their
    /// report's (or with `motion`, their motion's) window-FPS tally replaced by `entries`
    /// entries. The others are as measured.
    static func body(count: Int, flooded: Set<Int>, motion: Bool = false, windowEntries entries: Int, start: Double) throws -> [UInt8] {
        let batch = makeBatch(id: "tally-flood", count: count, start: start)
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        var json = try #require(JSONSerialization.jsonObject(with: encoder.encode(batch)) as? [String: Any])
        var events = try #require(json["events"] as? [[String: Any]])
        for index in flooded {
            let event = batch.events[index]
            let report = try #require(motion ? event.motion : event.report)
            events[index][motion ? "motionData" : "reportData"] = Base64.encode(binary(report, windowEntries: entries))
        }
        json["events"] = events
        return Array(try JSONSerialization.data(withJSONObject: json))
    }
}

@Suite("A million window-FPS entries in a binary report (issue 43, item 8)")
struct TallyFloodTests {
    static let message = "windowFPS: 1000000 entries, more than the \(FrameReport.maximumTallyEntriesPerVisit) allowed"

    @Test("Two visits whose binary reports claim a million window-FPS entries each are refused by field in the decoder's one pass; the third visit is stored")
    func millionEntries() async throws {
        let body = try TallyFlood.body(count: 3, flooded: [0, 2], windowEntries: 1_000_000, start: CollectorRouteTests.now - 600)
        #expect(body.count > 5_000_000)
        // Settled by the specialised decoder, each refusal as JSONDecoder words it: not handed
        // on to JSONDecoder and the repeated-member scan (three more passes over 5 MB).
        let decoded = try #require(body.withUnsafeBytes { WireBatchDecoder.decode($0) })
        #expect(WireBatchDecoderTests.outcome(decoded) == WireBatchDecoderTests.reference(body))
        try await CollectorRouteTests().withCollector(configure: { $0.maximumBodyBytes = 4 << 20 }) { client, shop, _ in
            var plain = ByteBuffer(bytes: body)
            let response = try await client.execute(uri: "/v1/events", method: .post,
                                                    headers: [.authorization: "Bearer \(shop.ingestKey)", .contentEncoding: "gzip"],
                                                    body: try plain.compress(with: .gzip()))
            #expect(response.status == .accepted, "\(String(buffer: response.body).prefix(300))")
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: response.body))
            #expect(answer.accepted == 1)
            #expect(answer.rejected == [RejectedEvent(index: 0, field: "events[0].reportData", message: Self.message),
                                        RejectedEvent(index: 2, field: "events[2].reportData", message: Self.message)])
        }
    }

    @Test("A motion report with a million window-FPS entries refuses its visit naming motionData, in one pass")
    func millionEntriesInMotion() throws {
        let body = try TallyFlood.body(count: 2, flooded: [1], motion: true, windowEntries: 1_000_000, start: CollectorRouteTests.now - 600)
        let decoded = try #require(body.withUnsafeBytes { WireBatchDecoder.decode($0) })
        let outcome = WireBatchDecoderTests.outcome(decoded)
        #expect(outcome == WireBatchDecoderTests.reference(body))
        guard case let .batch(_, _, _, _, events) = outcome else { Issue.record("\(outcome)"); return }
        #expect(events.last == .rejected(field: "events[1].motionData", reason: Self.message))
    }

    @Test("At the cap, 1,024 entries, the count passes and the report's own checks decide, as in JSONDecoder")
    func atTheCap() throws {
        let body = try TallyFlood.body(count: 1, flooded: [0], windowEntries: 1_024, start: CollectorRouteTests.now - 600)
        let outcome = WireBatchDecoderTests.current(body)
        #expect(outcome == WireBatchDecoderTests.reference(body))
        guard case let .batch(_, _, _, _, events) = outcome else { Issue.record("\(outcome)"); return }
        if case let .rejected(_, reason)? = events.first { #expect(!reason.contains("entries"), "\(reason)") }
    }
}
