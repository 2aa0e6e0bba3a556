import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// Issue 35: a batch's `sampleRate` (0 < rate ≤ 1; absent is 1) is validated, counted per
/// app, day and rate once per batch, answered by `GET /v1/apps/{app}/sample-rates`, and swept
/// with the raw events; on SQLite and on ClickHouse.
@Suite("Sample rates")
struct SampleRateTests {
    static let now = CollectorRouteTests.now
    static let logger = Logger(label: "test")

    /// `batch` as JSON with `"sampleRate"` set to the JSON text `rate` (`nil`: left out).
    static func body(_ batch: EventBatch, rate: String?) throws -> ByteBuffer {
        var text = String(decoding: try jsonData(batch), as: UTF8.self)
        if let rate {
            #expect(text.hasSuffix("}"))
            text.removeLast()
            text += #","sampleRate":\#(rate)}"#
        }
        return ByteBuffer(string: text)
    }

    @Test("sampleRate must be a number from one millionth to 1: anything else is 400 invalid_field naming it; null and absent are 1")
    func validation() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let service = IngestService(store: store, clock: { Self.now })
        for (index, rate) in ["0", "-0", "-0.5", "1.5", "1.0000001", "1e300", #""0.5""#, "true", "{}", "[0.5]", "1e-7", "0.0000009999", "5e-324"].enumerated() {
            let batch = makeBatch(id: "bad-\(index)", count: 1, start: Self.now - 3600)
            let error = await #expect(throws: CollectorError.self, "\(rate)") {
                _ = try await service.ingest(body: try Self.body(batch, rate: rate), app: "shop", logger: Self.logger)
            }
            #expect(error?.status == .badRequest && error?.code == "invalid_field" && error?.field == "sampleRate", "\(rate): \(String(describing: error))")
        }
        #expect(try await store.rawEventCount(app: "shop") == 0, "a batch with a bad sampleRate stores nothing")
        for (index, rate) in [nil, "null", "1", "1.0", "0.5", "0.000001"].enumerated() {
            let batch = makeBatch(id: "good-\(index)", count: 1, start: Self.now - 3600)
            let response = try await service.ingest(body: try Self.body(batch, rate: rate), app: "shop", logger: Self.logger)
            #expect(response.accepted == 1, "\(rate ?? "absent")")
        }
        // Below one millionth a rate is refused (it was counted as one millionth); one millionth is kept exactly.
        #expect(try await store.sampleRates(app: "shop", from: Self.now - 86_400, to: Self.now)
                == [SampleRateVisits(sampleRate: 0.000001, visits: 1), SampleRateVisits(sampleRate: 0.5, visits: 1), SampleRateVisits(sampleRate: 1, visits: 4)])
    }

    @Test("Parts per million: exact keys for decimal rates, within 1…1 000 000; a range's days")
    func partsPerMillion() {
        #expect(SampleRate.partsPerMillion(of: 0.1) == 100_000)
        #expect(SampleRate.partsPerMillion(of: 0.3) == 300_000)
        #expect(SampleRate.partsPerMillion(of: 1.0 / 3) == 333_333)
        #expect(SampleRate.partsPerMillion(of: 1) == 1_000_000)
        #expect(SampleRate.partsPerMillion(of: 1e-9) == 1)
        #expect(SampleRate.partsPerMillion(of: .nan) == 1_000_000)
        #expect(SampleRate.rate(partsPerMillion: 100_000) == 0.1)
        let day = 1_795_132_800.0  // 2026-11-20T00:00:00Z
        #expect(SampleRate.days(from: day, to: day + 86_400) == (Int64(day), Int64(day) + 86_400))
        #expect(SampleRate.days(from: day + 3600, to: day + 86_401) == (Int64(day), Int64(day) + 2 * 86_400))
        #expect(SampleRate.days(from: day - 1, to: day + 1) == (Int64(day) - 86_400, Int64(day) + 86_400))
        #expect(SampleRate.days(from: day, to: day) == (Int64(day), Int64(day)))
    }

    @Test("GET …/sample-rates: visits per rate by rate, each batch once; the read key only; from and to, no filter",
          arguments: [StoreContractTests.Kind.sqliteFile, .clickhouse])
    func route(_ kind: StoreContractTests.Kind) async throws {
        try await AppFromKeyIngestTests.withCollector(kind) { client, shop, other in
            let sent: [(String, Int, String?)] = [("a", 3, "0.1"), ("b", 2, "0.1"), ("c", 3, nil), ("d", 1, "0.25"), ("e", 2, "1")]
            for (id, count, rate) in sent {
                var batch = makeBatch(id: id, count: count, start: Self.now - 7200)
                batch.app.id = nil
                let response = try await AppFromKeyIngestTests.post(client, try Self.body(batch, rate: rate), key: shop.ingestKey)
                #expect(response.status == .accepted, "\(id)")
            }
            // Retried: counted once.
            let retry = try await AppFromKeyIngestTests.post(client, try Self.body(makeBatch(id: "a", count: 3, start: Self.now - 7200), rate: "0.1"),
                                                             key: shop.ingestKey)
            #expect(try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: retry.body)).duplicate)

            let read: HTTPFields = [.authorization: "Bearer \(shop.readKey)"]
            let answer = try await client.execute(uri: "/v1/apps/shop/sample-rates?from=2026-11-19T00:00:00Z&to=2026-11-21T00:00:00Z", method: .get, headers: read)
            #expect(answer.status == .ok)
            // Compared as JSON values (key order is the encoder's); rates printed as the decimals sent.
            let body = String(buffer: answer.body)
            let expected = #"{"sampleRates":[{"sampleRate":0.1,"visits":5},{"sampleRate":0.25,"visits":1},{"sampleRate":1,"visits":5}],"otherRates":0,"otherVisits":0}"#
            #expect(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? NSDictionary
                    == JSONSerialization.jsonObject(with: Data(expected.utf8)) as? NSDictionary, "\(body)")
            #expect(body.contains(#""sampleRate":0.1,"#) || body.contains(#""sampleRate":0.1}"#))
            // The default range (the last 30 days) holds them too; a range before them, nothing.
            let recent = try await client.execute(uri: "/v1/apps/shop/sample-rates", method: .get, headers: read)
            #expect(try JSONDecoder().decode(SampleRatesResponse.self, from: Data(buffer: recent.body)).sampleRates.map(\.visits) == [5, 1, 5])
            let before = try await client.execute(uri: "/v1/apps/shop/sample-rates?from=2026-11-01&to=2026-11-19", method: .get, headers: read)
            let empty = try JSONDecoder().decode(SampleRatesResponse.self, from: Data(buffer: before.body))
            #expect(empty.sampleRates.isEmpty && empty.otherRates == 0 && empty.otherVisits == 0, "\(String(buffer: before.body))")

            for (key, status) in [(shop.ingestKey, HTTPResponse.Status.forbidden), (shop.adminKey, .forbidden), (other.readKey, .forbidden), ("fsr_unknown", .unauthorized)] {
                let refused = try await client.execute(uri: "/v1/apps/shop/sample-rates", method: .get, headers: [.authorization: "Bearer \(key)"])
                #expect(refused.status == status)
            }
            for (query, field) in [("appVersion=1.0", "appVersion"), ("tag.plan=pro", "tag.plan"), ("from=yesterday", "from"), ("from=2026-11-21&to=2026-11-20", "from")] {
                let refused = try await client.execute(uri: "/v1/apps/shop/sample-rates?\(query)", method: .get, headers: read)
                #expect(refused.status == .badRequest, "\(query)")
                let detail = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: refused.body)).error
                #expect(detail.code == "invalid_parameter" && detail.field == field, "\(query)")
            }
        }
    }

    @Test("The retention sweep deletes the counts of the days whose raw events are all gone", arguments: [StoreContractTests.Kind.sqliteFile, .clickhouse])
    func retention(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: "shop")
        let midnight = (Self.now / 86_400).rounded(.down) * 86_400
        var old = StoreContractTests.ingestBatch(makeBatch(id: "old", count: 2, start: midnight - 2 * 86_400 + 600))
        old.sampleRatePPM = 100_000
        var recent = StoreContractTests.ingestBatch(makeBatch(id: "recent", count: 3, start: midnight - 86_400 + 600))
        recent.sampleRatePPM = 100_000
        _ = try await store.ingest([old, recent])
        let all = (from: midnight - 3 * 86_400, to: Self.now)
        #expect(try await store.sampleRates(app: "shop", from: all.from, to: all.to) == [SampleRateVisits(sampleRate: 0.1, visits: 5)])
        // Kept a day and a half: the cutoff is yesterday's midnight, so the raw events of the
        // day before yesterday are all gone, and its count with them; yesterday's stays.
        let sweep = RetentionService(store: store, retention: 1.5 * 86_400, chunk: store.retentionChunk, clock: { Self.now })
        #expect(try await sweep.sweep() == 2)
        #expect(try await store.sampleRates(app: "shop", from: all.from, to: all.to) == [SampleRateVisits(sampleRate: 0.1, visits: 3)])
        _ = keepAlive
    }
}
