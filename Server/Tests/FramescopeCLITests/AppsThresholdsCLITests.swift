import Foundation
import Testing

/// `framescope apps thresholds` and the admin key, through the built binary and a real server.
@Suite("framescope apps thresholds", .serialized)
struct AppsThresholdsCLITests {
    /// A fresh database with the app `shop`; its keys as `apps create --format json` printed them.
    func database() throws -> (TemporaryDirectory, String, [String: String]) {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        return (directory, db, keys)
    }

    /// The `settings` object of `apps thresholds --format json`.
    func settings(_ db: String) throws -> [String: Any] {
        let shown = try CLI.run(["apps", "thresholds", "shop", "--db", db, "--format", "json"])
        #expect(shown.exitCode == 0, "\(shown.stderr)")
        let answer = try #require(JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        return try #require(answer["settings"] as? [String: Any])
    }

    @Test("apps create prints an admin key; without options the defaults are shown; options set one figure each and keep the rest")
    func showAndSet() throws {
        let (directory, db, keys) = try database()
        #expect(keys["adminKey"]?.hasPrefix("fsa_") == true)
        #expect(try CLI.run(["apps", "create", "Other", "--db", db]).stdout.contains("admin key: fsa_"))

        let shown = try CLI.run(["apps", "thresholds", "shop", "--db", db])
        #expect(shown.exitCode == 0 && shown.stderr.isEmpty, "\(shown.stderr)")
        #expect(shown.stdout.contains("hitchRatio") && shown.stdout.contains("default (Apple's guidance)"))
        #expect(shown.stdout.contains("verdict: a change of at least 5 % of the baseline (default), at least 2 visits on each side (default)"), "\(shown.stdout)")

        let set = try CLI.run(["apps", "thresholds", "shop", "--hitch-ratio", "3,6", "--frame-duration-p95", "17.5ms,34ms",
                               "--min-change", "10%", "--min-visits", "30", "--db", db])
        #expect(set.exitCode == 0, "\(set.stderr)")
        #expect(set.stdout.hasPrefix("updated the thresholds of shop"))
        var current = try settings(db)
        var bands = try #require(current["bands"] as? [String: [String: Double]])
        #expect(bands["hitchRatio"] == ["goodBelow": 3, "criticalAbove": 6])
        #expect(bands["frameDuration.p95"] == ["goodBelow": 0.0175, "criticalAbove": 0.034])
        #expect(current["verdict"] as? [String: Double] == ["minimumChange": 0.1, "minimumVisits": 30])

        // One more option keeps the others; `default` clears one.
        #expect(try CLI.run(["apps", "thresholds", "shop", "--hang-rate", "1,5", "--hitch-ratio", "default", "--min-change", "default", "--db", db]).exitCode == 0)
        current = try settings(db)
        bands = try #require(current["bands"] as? [String: [String: Double]])
        #expect(bands.keys.sorted() == ["frameDuration.p95", "hangRate"])
        #expect(current["verdict"] as? [String: Double] == ["minimumVisits": 30])
        let table = try CLI.run(["apps", "thresholds", "shop", "--db", db]).stdout
        #expect(table.contains("at least 5 % of the baseline (default), at least 30 visits on each side (app)"), "\(table)")
        #expect(table.contains("alerts: versions sent by at least 20 installations (default), at most"), "\(table)")

        // The alert rule: set, shown as the app's, in the JSON as PUT takes it, and cleared.
        #expect(try CLI.run(["apps", "thresholds", "shop", "--min-installations", "50", "--db", db]).exitCode == 0)
        #expect(try settings(db)["alerts"] as? [String: Int] == ["minimumInstallations": 50])
        #expect(try CLI.run(["apps", "thresholds", "shop", "--db", db]).stdout
            .contains("alerts: versions sent by at least 50 installations (app)"))
        #expect(try CLI.run(["apps", "thresholds", "shop", "--min-installations", "default", "--db", db]).exitCode == 0)
        #expect((try settings(db)["alerts"] as? [String: Int])?["minimumInstallations"] == nil)
        #expect(try CLI.run(["apps", "thresholds", "shop", "--db", db]).stdout.contains("at least 20 installations (default)"))
        _ = directory
    }

    @Test("Bad values exit 64 naming the option; an unknown app 65; a database that cannot be opened 74; nothing changes", arguments: [
        (["--hitch-ratio", "6,3"], 64, "--hitch-ratio"),
        (["--hitch-ratio", "5"], 64, "--hitch-ratio"),
        (["--hitch-ratio", "five,ten"], 64, "--hitch-ratio"),
        (["--hang-rate", "-1,5"], 64, "--hang-rate"),
        (["--hang-rate", "nan,5"], 64, "--hang-rate"),
        (["--frozen-frames", "1,1e400"], 64, "--frozen-frames"),
        (["--hitch-ratio-motion", "5,2000"], 64, "--hitch-ratio-motion"),
        (["--frame-duration-p95", "17xs,34ms"], 64, "--frame-duration-p95"),
        (["--min-change", "-5%"], 64, "--min-change"),
        (["--min-change", "lots"], 64, "--min-change"),
        (["--min-visits", "1"], 64, "--min-visits"),
        (["--min-visits", "2.5"], 64, "--min-visits"),
        (["--min-installations", "-1"], 64, "--min-installations"),
        (["--min-installations", "many"], 64, "--min-installations"),
    ])
    func badValues(_ options: [String], exitCode: Int32, mentions: String) throws {
        let (directory, db, _) = try database()
        #expect(try CLI.run(["apps", "thresholds", "shop", "--hang-rate", "2,9", "--db", db]).exitCode == 0)
        let before = try settings(db)
        let result = try CLI.run(["apps", "thresholds", "shop"] + options + ["--db", db])
        #expect(result.exitCode == exitCode, "\(options): \(result.stderr)")
        #expect(result.stderr.contains(mentions), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(NSDictionary(dictionary: try settings(db)).isEqual(to: before))
        _ = directory
    }

    @Test("--help names every figure an app may band with the registry's label, unit and default bands")
    func helpFromRegistry() throws {
        let help = try CLI.run(["apps", "thresholds", "--help"])
        #expect(help.exitCode == 0)
        // ArgumentParser wraps the discussion: compare with the line breaks undone.
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for expected in ["Hitch ratio (ms/s, default 5,10)", "Hitch ratio in motion (ms/s, default 5,10)", "Hang rate (s/h, no default bands)",
                         "Frozen frames (per 1000 frames, no default bands)", "--frozen-frames <good,critical|default> Frozen-frame bands, per 1000 frames."] {
            #expect(text.contains(expected), "\(expected)")
        }
    }

    @Test("An unknown app is 65, a database that cannot be opened 74")
    func unknownAppAndMissingDatabase() throws {
        let (directory, db, _) = try database()
        let unknown = try CLI.run(["apps", "thresholds", "nope", "--hang-rate", "1,5", "--db", db])
        #expect(unknown.exitCode == 65 && unknown.stderr.contains("no app 'nope'"), "\(unknown.stderr)")
        let missing = try CLI.run(["apps", "thresholds", "shop", "--db", directory.url.appendingPathComponent("no/such/dir/x.sqlite").path])
        #expect(missing.exitCode == 74 && missing.stderr.contains("cannot open the database"), "\(missing.stderr)")
    }

    @Test("The CLI and PUT /v1/apps/{app}/thresholds on a real server agree; rotate --key admin ends the old admin key")
    func throughServer() async throws {
        let (directory, db, keys) = try database()
        #expect(try CLI.run(["apps", "thresholds", "shop", "--hitch-ratio", "2,4", "--db", db]).exitCode == 0)
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let read = try #require(keys["readKey"])
        let admin = try #require(keys["adminKey"])
        let (status, body) = try await server.request("/v1/apps/shop/thresholds", key: read)
        #expect(status == 200)
        let answer = try #require(JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(((answer["settings"] as? [String: Any])?["bands"] as? [String: [String: Double]])?["hitchRatio"] == ["goodBelow": 2, "criticalAbove": 4])
        let put = Data(#"{"bands": {"frozenFramesPerThousand": {"goodBelow": 0.5, "criticalAbove": 2}}}"#.utf8)
        #expect(try await server.request("/v1/apps/shop/thresholds", method: "PUT", key: read, body: put).0 == 403)
        #expect(try await server.request("/v1/apps/shop/thresholds", method: "PUT", key: admin, body: put).0 == 200)
        #expect(try await server.request("/v1/apps/shop/screens", key: admin).0 == 403)
        let shown = try settings(db)
        #expect((shown["bands"] as? [String: Any])?.keys.sorted() == ["frozenFramesPerThousand"])

        let rotated = try CLI.run(["apps", "rotate", "shop", "--key", "admin", "--db", db, "--format", "json"])
        #expect(rotated.exitCode == 0, "\(rotated.stderr)")
        let newAdmin = try #require((JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: Any])?["key"] as? String)
        #expect(newAdmin.hasPrefix("fsa_"))
        #expect(try await server.request("/v1/apps/shop/thresholds", method: "PUT", key: admin, body: put).0 == 401)
        #expect(try await server.request("/v1/apps/shop/thresholds", method: "PUT", key: newAdmin, body: put).0 == 200)
        #expect(try CLI.run(["apps", "rotate", "shop", "--key", "admin", "--grace-days", "3", "--db", db]).exitCode == 64)
        _ = directory
    }
}
