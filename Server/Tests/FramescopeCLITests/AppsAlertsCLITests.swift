import Foundation
import Testing

/// `framescope apps webhooks` and `framescope apps alerts`, through the built binary and a real server.
@Suite("framescope apps webhooks and alerts", .serialized)
struct AppsAlertsCLITests {
    /// A fresh database with the app `shop`; its keys as `apps create --format json` printed them.
    func database() throws -> (TemporaryDirectory, String, [String: String]) {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        return (directory, db, keys)
    }

    @Test("webhooks: list, --add (secret printed once), --remove; bad URLs 64 naming --add, unknown app or id 65")
    func webhooks() throws {
        let (directory, db, _) = try database()
        let empty = try CLI.run(["apps", "webhooks", "shop", "--db", db, "--format", "json"])
        #expect(empty.exitCode == 0, "\(empty.stderr)")
        #expect(empty.stdout.filter { !$0.isWhitespace } == #"{"webhooks":[]}"#)
        for bad in ["ftp://example.com/x", "https://user:pw@example.com/", "not a url", "javascript:alert(1)"] {
            let refused = try CLI.run(["apps", "webhooks", "shop", "--add", bad, "--db", db])
            #expect(refused.exitCode == 64 && refused.stderr.contains("--add:"), "\(bad): \(refused.stderr)")
        }
        let added = try CLI.run(["apps", "webhooks", "shop", "--add", "https://hooks.example.com/framescope", "--db", db])
        #expect(added.exitCode == 0, "\(added.stderr)")
        #expect(added.stdout.hasPrefix("added webhook 1 to shop: https://hooks.example.com/framescope\nsecret: fsw_"))
        let listed = try CLI.run(["apps", "webhooks", "shop", "--db", db])
        #expect(listed.stdout.contains("https://hooks.example.com/framescope") && !listed.stdout.contains("fsw_"))
        #expect(try CLI.run(["apps", "webhooks", "shop", "--remove", "7", "--db", db]).exitCode == 65)
        #expect(try CLI.run(["apps", "webhooks", "shop", "--add", "https://a.example.com/", "--remove", "1", "--db", db]).exitCode == 64)
        let removed = try CLI.run(["apps", "webhooks", "shop", "--remove", "1", "--db", db])
        #expect(removed.exitCode == 0 && removed.stdout == "removed webhook 1 of shop\n", "\(removed.stderr)")
        let unknown = try CLI.run(["apps", "webhooks", "nope", "--db", db])
        #expect(unknown.exitCode == 65 && unknown.stderr.contains("no app 'nope'"))
        #expect(try CLI.run(["apps", "alerts", "nope", "--db", db]).exitCode == 65)
        #expect(try CLI.run(["apps", "alerts", "shop", "--acknowledge", "3", "--db", db]).exitCode == 65)
        #expect(try CLI.run(["apps", "alerts", "shop", "--acknowledge", "0", "--db", db]).exitCode == 64)
        _ = directory
    }

    @Test("serve --public-url takes a base URL without a query (links are appended to it): 64 naming the option")
    func publicURL() throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("c.sqlite").path
        for bad in ["https://collector.example.com/?a=1", "ftp://collector.example.com"] {
            let refused = try CLI.run(["serve", "--db", db, "--port", "0", "--public-url", bad])
            #expect(refused.exitCode == 64 && refused.stderr.contains("--public-url"), "\(bad): \(refused.stderr)")
        }
        _ = directory
    }

    @Test("serve --demo raises the Feed regression of 3.1.0 on start: listed by the CLI and the API, acknowledged with the CLI")
    func demoAlert() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("demo.sqlite").path
        let server = try ServerProcess(arguments: ["--db", db, "--demo"])
        defer { server.stop() }
        var readKey = ""
        for _ in 0..<8 where readKey.isEmpty {
            guard let line = server.server.nextLine() else { break }
            if line.hasPrefix("read key: ") { readKey = String(line.dropFirst(10)) }
        }
        try #require(readKey.hasPrefix("fsr_"))
        // The alert service's first pass runs as the server starts; wait for it.
        var alerts: [[String: Any]] = []
        for _ in 0..<240 where alerts.isEmpty {
            try await Task.sleep(for: .milliseconds(250))
            let (status, body) = try await server.request("/v1/apps/demo/alerts", key: readKey)
            #expect(status == 200)
            alerts = (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["alerts"] as? [[String: Any]] ?? []
        }
        #expect(!alerts.isEmpty)
        #expect(alerts.allSatisfy { $0["screen"] as? String == "Feed" && $0["baseline"] as? String == "3.0.0" && $0["candidate"] as? String == "3.1.0" },
                "\(alerts.map { "\($0["screen"] ?? "") \($0["metric"] ?? "") \($0["baseline"] ?? "")→\($0["candidate"] ?? "")" })")
        #expect(alerts.contains { $0["metric"] as? String == "hitchRatio" })
        let table = try CLI.run(["apps", "alerts", "demo", "--db", db])
        #expect(table.exitCode == 0 && table.stdout.contains("Feed") && table.stdout.contains("3.0.0 → 3.1.0"), "\(table.stderr)")
        let id = try #require(alerts.first?["id"] as? Int)
        let acknowledged = try CLI.run(["apps", "alerts", "demo", "--acknowledge", String(id), "--db", db])
        #expect(acknowledged.exitCode == 0 && acknowledged.stdout.hasPrefix("acknowledged alert \(id) of demo at "), "\(acknowledged.stderr)")
        let (_, body) = try await server.request("/v1/apps/demo/alerts", key: readKey)
        let after = (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["alerts"] as? [[String: Any]] ?? []
        #expect(after.first { $0["id"] as? Int == id }?["acknowledgedAt"] is String)
    }
}
