import Foundation
import FramescopeClickHouse
import FramescopeClickHouseTesting
import Testing

/// `framescope serve --store clickhouse://…?cluster=…` on a fresh two-shard cluster, with
/// one shard stopped while the load generator sends: the collector answers 503 while it is
/// down, the generator's retries deliver, and the stored counts equal what was sent.
@Suite("serve on a ClickHouse cluster")
struct ClickHouseServeTests {
    @Test("A shard stopped mid-ingest: 503 while it is down, retries deliver, every event counted once")
    func shardDown() async throws {
        let cluster = try await ClickHouseCluster()
        defer { cluster.stop() }
        let location = "clickhouse://default@127.0.0.1:\(cluster.servers[0].httpPort)/fs_serve?cluster=\(cluster.name)"
        // Nothing created by hand: the CLI creates the database, the tables and the app.
        let created = try CLI.run(["apps", "create", "Load", "--store", location, "--format", "json"])
        try #require(created.exitCode == 0, "\(created.stderr)")
        let credentials = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
        let ingestKey = try #require(credentials["ingestKey"] as? String)
        let directory = try TemporaryDirectory()
        let tokenFile = directory.url.appendingPathComponent("admin-token").path
        let adminToken = "admin-token-0123456789abcdef"
        try adminToken.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let server = try ServerProcess(arguments: ["--store", location, "--admin-token-file", tokenFile])
        defer { server.stop() }
        let port = server.port
        func loadtest(seconds: Int) -> Task<CLIResult, any Error> {
            Task {
                try await CLI.runOnThread(["loadtest", "--url", "http://127.0.0.1:\(port)", "--key", ingestKey, "--app", "load", "--rate", "400",
                                           "--duration", "\(seconds)", "--batch-size", "20", "--concurrency", "16", "--retries", "60", "--format", "json"])
            }
        }
        // A first load while both shards are up, awaited to its end; then a second starts
        // and shard 2 stops under it, so its batches meet the stopped shard however slowly
        // a busy machine runs the test.
        let first = try await loadtest(seconds: 5).value
        let second = loadtest(seconds: 10)
        cluster.servers[1].halt()
        // Keep it down until the collector has refused some batches with 503 (its own count,
        // in /metrics).
        var refused = 0
        for _ in 0..<1500 where refused < 5 {
            try await Task.sleep(for: .milliseconds(200))
            let (_, body) = try await ServerProcess.request(port: port, "/metrics", key: adminToken)
            refused = String(decoding: body, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("framescope_http_requests_total{") && $0.contains("/v1/events") && $0.contains("status=\"503\"") }
                .compactMap { $0.split(separator: " ").last.flatMap { Int(Double($0) ?? 0) } }.reduce(0, +)
        }
        #expect(refused >= 5, "ingest answers 503 while a shard is down")
        try await cluster.servers[1].restart()
        var sent = 0
        var retried = 0
        for result in [first, try await second.value] {
            #expect(result.exitCode == 0, "\(result.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let batches = try #require(summary["batchesSent"] as? Int)
            #expect(summary["acknowledged"] as? Int == batches, "every batch acknowledged in the end: \(result.stdout)")
            sent += batches
            retried += summary["retriedRequests"] as? Int ?? 0
        }
        #expect(retried > 0, "some batches were sent again")
        let client = ClickHouseClient(location: try ClickHouseLocation(parsing: location))
        let raw = try await client.rows("SELECT count() FROM events WHERE app_id = 'load'").first?.first
        #expect(raw == String(sent * 20), "raw events: each sent once")
        let visits = try await client.rows("SELECT sumForEachMerge(counts)[1] FROM rollups_screen_daily WHERE app_id = 'load'").first?.first
        #expect(visits == String(sent * 20), "rollups: each visit counted once")
    }
}
