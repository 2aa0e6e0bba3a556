import Foundation
import FramescopeClickHouse
import FramescopeCollector
import FramescopeClickHouseTesting
import Testing

/// The two-shard harness (``ClickHouseCluster``) against what the store will rely on:
/// `ON CLUSTER` schema, `Distributed` inserts that land on both shards, and a shard down
/// answered as a passing error that succeeds once the shard is back.
@Suite("ClickHouse: a two-shard cluster", .serialized)
struct ClickHouseClusterTests {
    /// `count` rows `(app_id, device_key, n)` in RowBinary, `n` from `first`.
    static func rows(from first: Int, count: Int) -> [UInt8] {
        var writer = RowBinaryWriter()
        for n in first..<(first + count) {
            writer.append("app-\(n % 3)")
            writer.append("device-\(n)")
            writer.append(UInt64(n))
        }
        return writer.bytes
    }

    /// The single number `sql` answers on `client`, or `nil` if the answer is not one integer.
    static func number(_ client: ClickHouseClient, _ sql: String) async throws -> Int? {
        try await client.rows(sql).first?.first.flatMap { Int($0) }
    }

    @Test("ON CLUSTER schema; a Distributed insert lands on both shards; with shard 2 down an insert is a passing error (503), and succeeds once it is back")
    func twoShards() async throws {
        let cluster = try await ClickHouseCluster()
        defer { cluster.stop() }
        let database = "fs_cluster_" + UUID().uuidString.prefix(8).lowercased()
        let client = ClickHouseClient(location: cluster.location(database: database))
        #expect(client.location.cluster == cluster.name)
        let onCluster = "ON CLUSTER \(cluster.name)"
        try await client.execute("CREATE DATABASE IF NOT EXISTS \(database) \(onCluster)", inDatabase: false, timeout: ClickHouseClient.schemaTimeout)
        try await client.execute("""
            CREATE TABLE IF NOT EXISTS \(database).visits_local \(onCluster) (app_id String, device_key String, n UInt64)
            ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/\(database)/visits', '{replica}') ORDER BY (app_id, device_key)
            """, timeout: ClickHouseClient.schemaTimeout)
        try await client.execute("""
            CREATE TABLE IF NOT EXISTS \(database).visits \(onCluster) AS \(database).visits_local
            ENGINE = Distributed(\(cluster.name), \(database), visits_local, cityHash64(app_id, device_key))
            """, timeout: ClickHouseClient.schemaTimeout)
        let columns = ["app_id", "device_key", "n"]
        let sync = [("insert_distributed_sync", "1")]
        try await client.insert(into: "visits", columns: columns, rows: Self.rows(from: 0, count: 200), settings: sync)

        var perShard: [Int] = []
        for server in cluster.servers {
            let local = ClickHouseClient(location: server.location(database: database))
            perShard.append(try await Self.number(local, "SELECT count() FROM visits_local") ?? -1)
        }
        #expect(perShard.count == 2 && perShard.allSatisfy { $0 > 0 }, "each shard holds rows: \(perShard)")
        #expect(perShard.reduce(0, +) == 200, "\(perShard)")
        #expect(try await client.rows("SELECT count(), sum(n) FROM visits") == [["200", "19900"]])

        // Shard 2 down: the insert (and a read) through the Distributed table is a passing
        // error, which the collector answers 503 so the device sends the batch again.
        cluster.servers[1].halt()
        let batch = Self.rows(from: 200, count: 100)
        do {
            try await client.insert(into: "visits", columns: columns, rows: batch, settings: sync)
            Issue.record("an insert with shard 2 down succeeded")
        } catch {
            #expect(error.isPassing, "\(error)")
            #expect(error.storeError == .unavailable(store: "ClickHouse", retryAfter: 5))
        }
        do {
            _ = try await client.rows("SELECT count() FROM visits")
            Issue.record("a read with shard 2 down succeeded")
        } catch {
            #expect(error.isPassing, "\(error)")
        }

        // Back on the same folder: the same batch sent again is stored once.
        try await cluster.servers[1].restart()
        try await client.insert(into: "visits", columns: columns, rows: batch, settings: sync)
        #expect(try await client.rows("SELECT count(), sum(n) FROM visits") == [["300", "44850"]])
    }
}
