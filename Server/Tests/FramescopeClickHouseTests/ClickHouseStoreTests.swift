import Foundation
import FramescopeClickHouse
import FramescopeClickHouseTesting
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Testing

/// What only the ClickHouse store has to show: retries the ledger alone would not catch,
/// counted once.
@Suite("ClickHouse store")
struct ClickHouseStoreTests {
    /// A batch of `count` simulated visits to Feed, starting an hour ago.
    static func batch(_ id: String, count: Int) -> IngestBatch {
        let now = Double(Int(Date().timeIntervalSince1970 / 3600) * 3600)
        let events = (0..<count).map { index -> (event: ScreenVisitEvent, startedAt: Double) in
            var workload = SyntheticWorkload(profile: .moderate, duration: 3, seed: UInt64(index + 1))
            let report = PipelineSimulator(display: .fixed(hz: 60), seed: UInt64(index + 1)).run(&workload).analyze()
            let start = now - 3600 + Double(index * 10)
            return (ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start), duration: report.whole.duration + 1,
                                     context: VisitContext(network: .wifi, lowPowerMode: false), report: report.whole, motion: report.motion), start)
        }
        var batch = IngestBatch(app: "shop", batchId: id, appVersion: "1.0", osVersion: "18.1", deviceModel: "iPhone14,5",
                                events: events, rawEvents: events.map { _ in "{}" }, receivedAt: now)
        batch.installationId = "device-\(id)"
        return batch
    }

    @Test("A batch written whose ledger row was lost (a collector that died between the two, a ledger insert that failed) counts once when retried",
          arguments: [false, true])
    func lostLedgerRow(cluster clustered: Bool) async throws {
        let database = SharedClickHouse.freshDatabase()
        let location = clustered ? try await SharedClickHouse.shared.cluster().location(database: database)
            : try await SharedClickHouse.shared.server().location(database: database)
        let store = try await ClickHouseStore(client: ClickHouseClient(location: location))
        _ = try await store.createApp(name: "Shop", id: "shop")
        let first = Self.batch("b1", count: 5)
        let other = Self.batch("b2", count: 3)
        #expect(try await store.ingest([first, other]) == [IngestResult(stored: 5, duplicate: false), IngestResult(stored: 3, duplicate: false)])
        // The ledger forgets b1, as if its row had never been written.
        let local = "\(database).batches\(store.topology.localSuffix)\(store.topology.onCluster)"
        try await store.client.execute("ALTER TABLE \(local) DELETE WHERE batch_id = 'b1'", timeout: ClickHouseClient.schemaTimeout)
        for _ in 0..<100 where try await store.client.rows("SELECT count() FROM batches WHERE batch_id = 'b1'").first?.first != "0" {
            try await Task.sleep(for: .milliseconds(100))
        }
        // The device retries: its events are found, and the ledger row is written again.
        #expect(try await store.ingest(first) == IngestResult(stored: 0, duplicate: true))
        #expect(try await store.client.rows("SELECT count() FROM batches WHERE batch_id = 'b1'").first?.first == "1")
        #expect(try await store.rawEventCount(app: "shop") == 8)
        let day = ScreenQuery(from: first.receivedAt - 86_400, to: first.receivedAt + 3600)
        #expect(try await store.screens(app: "shop", query: day).map(\.visits) == [8])
        #expect(try await store.sampleRates(app: "shop", from: day.from, to: day.to) == [SampleRateVisits(sampleRate: 1, visits: 8)])
        #expect(try await store.ingest(first) == IngestResult(stored: 0, duplicate: true))
    }

    @Test("Cluster: the same batch inserted twice as one block (a retry racing its first attempt) is stored once, raw, rollups and sample rates")
    func replicatedBlock() async throws {
        let cluster = try await SharedClickHouse.shared.cluster()
        let store = try await ClickHouseStore(client: ClickHouseClient(location: cluster.location(database: SharedClickHouse.freshDatabase())))
        _ = try await store.createApp(name: "Shop", id: "shop")
        var batch = Self.batch("b1", count: 4)
        batch.sampleRatePPM = 100_000
        // Two collectors take the same batch at once: neither sees it stored, both insert it.
        async let one = store.ingest(batch)
        async let two = store.ingest(batch)
        let results = try await [one, two]
        #expect(results.filter { !$0.duplicate }.allSatisfy { $0.stored == 4 })
        #expect(try await store.rawEventCount(app: "shop") == 4)
        let day = ScreenQuery(from: batch.receivedAt - 86_400, to: batch.receivedAt + 3600)
        #expect(try await store.screens(app: "shop", query: day).map(\.visits) == [4])
        #expect(try await store.sampleRates(app: "shop", from: day.from, to: day.to) == [SampleRateVisits(sampleRate: 0.1, visits: 4)])
    }

    @Test("A store that cannot reach ClickHouse fails with a 503 error, never a crash")
    func unreachable() async throws {
        let port = try ClickHouseServer.freePort()
        let client = ClickHouseClient(location: ClickHouseLocation(host: "127.0.0.1", port: port, database: "nowhere"), timeout: 5)
        let error = await #expect(throws: ClickHouseError.self) { _ = try await ClickHouseStore(client: client) }
        #expect(error?.isPassing == true && error?.storeError == .unavailable(store: "ClickHouse", retryAfter: 5))
    }
}
