import Foundation
@testable import FramescopeClickHouse
import FramescopeCollector
import FramescopeClickHouseTesting
import Testing

@Suite("ClickHouse: locations, literals and RowBinary")
struct ClickHouseTextTests {
    @Test("clickhouse:// locations: user, password, host, port, database and cluster", arguments: [
        ("clickhouse://default@127.0.0.1:8123/framescope", "default", "", "127.0.0.1", 8123, "framescope", nil),
        ("clickhouse://ops:s3cr:et@db.example.com/fs_prod?cluster=two_shards", "ops", "s3cr:et", "db.example.com", 8123, "fs_prod", "two_shards"),
        ("clickhouse://[::1]:18123/fs", "default", "", "::1", 18123, "fs", nil),
        ("clickhouse://localhost/fs", "default", "", "localhost", 8123, "fs", nil),
    ] as [(String, String, String, String, Int, String, String?)])
    func locations(text: String, user: String, password: String, host: String, port: Int, database: String, cluster: String?) throws {
        let location = try ClickHouseLocation(parsing: text)
        #expect(location == ClickHouseLocation(user: user, password: password, host: host, port: port, database: database, cluster: cluster))
        #expect(!location.description.contains("s3cr"), "the password is never printed")
    }

    @Test("Bad locations name the part at fault", arguments: [
        ("sqlite:/tmp/x", "clickhouse://"), ("clickhouse://127.0.0.1:8123", "database"), ("clickhouse://h:0/db", "port"),
        ("clickhouse://h:99999/db", "port"), ("clickhouse://h/db;DROP", "database"), ("clickhouse://h/db?cluster=a-b", "cluster"),
        ("clickhouse://h/db?shard=1", "cluster=NAME"), ("clickhouse://@h/db", "user"), ("clickhouse:///db", "host"),
        ("clickhouse://[::1/db", "IPv6"),
    ])
    func badLocations(text: String, named: String) {
        #expect(throws: ClickHouseLocationError.self) { try ClickHouseLocation(parsing: text) }
        do { _ = try ClickHouseLocation(parsing: text) } catch { #expect(error.message.contains(named), "\(text): \(error.message)") }
    }

    @Test("String literals escape only backslash and quote, per Unicode scalar")
    func literals() {
        #expect(ClickHouseSQL.quote("O'Brien") == #"'O\'Brien'"#)
        #expect(ClickHouseSQL.quote(#"back\slash"#) == #"'back\\slash'"#)
        #expect(ClickHouseSQL.quote("e\u{301}") == "'e\u{301}'")
        #expect(ClickHouseSQL.isIdentifier("fs_prod2") && !ClickHouseSQL.isIdentifier("2fs") && !ClickHouseSQL.isIdentifier("a-b") && !ClickHouseSQL.isIdentifier(""))
    }

    @Test("RowBinary: little-endian numbers, LEB128 lengths, UTF-8 strings")
    func rowBinary() {
        var writer = RowBinaryWriter()
        writer.append(UInt16(0x0102))
        writer.append("é")
        writer.appendLength(300)
        writer.append(1.0)
        writer.append([UInt64(1)])
        #expect(writer.bytes == [0x02, 0x01, 0x02, 0xC3, 0xA9, 0xAC, 0x02, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0x01, 1, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test("TabSeparated output: rows, columns and escapes")
    func tabSeparated() {
        let rows = TabSeparated.rows(Array("a\\tb\t1\nline\\nfeed\t\\\\\n".utf8))
        #expect(rows == [["a\tb", "1"], ["line\nfeed", "\\"]])
    }

    @Test("Errors: ClickHouse's code from the body; passing codes and HTTP 5xx without one are 503")
    func errors() {
        #expect(ClickHouseError.from(status: 200, body: "") == nil)
        #expect(ClickHouseError.from(status: 500, body: "Code: 60, e.displayText() = DB::Exception: Table x doesn't exist") == .server(code: 60, message: "Code: 60, e.displayText() = DB::Exception: Table x doesn't exist"))
        #expect(ClickHouseError.from(status: 500, body: "Code: 210, e.displayText() = DB::NetException: Connection refused")?.isPassing == true)
        #expect(ClickHouseError.from(status: 502, body: "Bad gateway")?.isPassing == true)
        #expect(ClickHouseError.from(status: 500, body: "Code: 62, syntax")?.storeError == .failed)
    }
}

@Suite("ClickHouse: a real server", .serialized)
struct ClickHouseServerTests {
    @Test("Hostile strings round-trip as literals; RowBinary floats are stored exactly; errors carry the code; a stopped server is unavailable")
    func realServer() async throws {
        let server = try await ClickHouseServer()
        defer { server.stop() }
        let admin = ClickHouseClient(location: server.location(database: "default"))
        try await admin.execute("CREATE DATABASE IF NOT EXISTS fs_test", inDatabase: false)
        let client = ClickHouseClient(location: server.location(database: "fs_test"))
        let hostile = ["O'Brien", #"back\slash"#, "'; DROP TABLE fs_test.t; --", "tab\tline\nfeed", "nul\u{0}byte", #"\'"#,
                       "emoji 🎉 画面", #"\N"#, #"trailing\"#, "e\u{301}\u{202E}rtl"]
        for text in hostile {
            let rows = try await client.rows("SELECT \(ClickHouseSQL.quote(text))")
            #expect(rows == [[text]], "\(text.debugDescription)")
        }
        try await client.execute("CREATE TABLE t (s String, x Float64, n UInt64) ENGINE = MergeTree ORDER BY n")
        // Values whose decimal text 18.16 parses one unit off; RowBinary carries the bits.
        let values = [1.639426889901609, 0.1 + 0.2, 1e-300, 123456789.123456789, Double.pi]
        var writer = RowBinaryWriter()
        for (index, value) in values.enumerated() {
            writer.append(hostile[index])
            writer.append(value)
            writer.append(UInt64(index))
        }
        try await client.insert(into: "t", columns: ["s", "x", "n"], rows: writer.bytes)
        // ClickHouse prints a Float64 in its shortest exact form, so the text reads back to the same bits.
        let stored = try await client.rows("SELECT s, x, n FROM t ORDER BY n")
        #expect(stored.map { $0[0] } == Array(hostile.prefix(values.count)))
        #expect(stored.map { Double($0[1])?.bitPattern } == values.map(\.bitPattern))
        await #expect(throws: ClickHouseError.server(code: 60, message: "")) {
            do { _ = try await client.rows("SELECT * FROM missing_table") } catch let error as ClickHouseError {
                if case .server(let code, _) = error { throw ClickHouseError.server(code: code, message: "") }
                throw error
            }
        }
        server.stop()
        // How soon it fails is timed in `ClickHouseRefusalTimingTests`, in a process of its own.
        do {
            try await client.execute("SELECT 1")
            Issue.record("a stopped server answered")
        } catch {
            #expect(error.isPassing, "\(error)")
            #expect(error.storeError == .unavailable(store: "ClickHouse", retryAfter: 5))
        }
    }

    @Test("Twenty queries of 2.5 s at once on one server all answer: none waits past the connect timeout for a connection")
    func manySlowQueries() async throws {
        let server = try await ClickHouseServer()
        defer { server.stop() }
        let client = ClickHouseClient(location: server.location(database: "default"))
        // With async-http-client's default of 8 connections a host, the ninth query waited
        // 2.5 s for one and failed with getConnectionFromPoolTimeout (the 2 s connect timeout).
        // Real time is the point: the queries must hold their connections past that timeout.
        let answers = try await withThrowingTaskGroup(of: [[String]].self) { group in
            for index in 0..<20 {
                group.addTask { try await client.rows("SELECT sleep(2.5) + \(index)") }
            }
            return try await group.reduce(into: [[[String]]]()) { $0.append($1) }
        }
        let numbers: [Int] = answers.compactMap { rows in rows.first?.first.flatMap { Int($0) } }
        #expect(numbers.sorted() == Array(0..<20))
    }
}

@Suite("ClickHouse: the schema's migrations on a real server", .serialized)
struct ClickHouseMigratorTests {
    @Test("A fresh server gets the database and every version; a second run applies nothing; a newer schema is refused")
    func migrate() async throws {
        let server = try await ClickHouseServer()
        defer { server.stop() }
        let client = ClickHouseClient(location: server.location(database: "fs_migrate"))
        let migrator = ClickHouseMigrator(client: client)
        let known = ClickHouseMigrator.migrations.map(\.version)
        #expect(known == Array(1...known.count), "versions are 1, 2, 3… in order")
        #expect(try await migrator.migrate() == known)
        #expect(try await migrator.appliedVersions() == known)
        let tables = try await client.rows("SELECT name FROM system.tables WHERE database = 'fs_migrate' ORDER BY name").map { $0[0] }
        let levels = ["rollups_daily", "rollups_hourly", "rollups_screen_daily", "rollups_screen_hourly", "rollups_tag_daily", "rollups_tag_hourly"]
        var expectedTables: [String] = ["batches", "control", "dimension_values", "events", "hangs"]
        for level in levels { expectedTables += [level, level + "_mv"] }
        expectedTables += ["sample_rates", "schema_migrations", "symbol_chunks", "symbol_tables"]
        #expect(tables == expectedTables)
        #expect(try await migrator.migrate() == [], "nothing applied twice")
        #expect(try await migrator.appliedVersions() == known)
        // Raw events in RowBinary: the server computes each hour, and the views merge them
        // into every level in the engine.
        func visit(_ row: inout RowBinaryWriter, start: Double, version: String, tags: [(String, String)], register: UInt16, rank: UInt8,
                   counts: [UInt64], minimum: Double, maximum: Double, tally: [(UInt64, UInt64)]) {
            row.append("shop"); row.append("b1"); row.append(UInt64(start)); row.append(start)
            for text in ["Feed", version, "18.1", "iPhone16,1", "wifi"] { row.append(text) }
            row.append(UInt8(0)); row.append("nominal"); row.append("120")
            row.appendLength(tags.count); for tag in tags { row.append(tag.0) }
            row.appendLength(tags.count); for tag in tags { row.append(tag.1) }
            row.appendLength(tags.count); for tag in tags { row.append(tag.0) }
            row.appendLength(tags.count); for tag in tags { row.append(tag.1) }
            row.append("device"); row.append(register); row.append(rank)
            row.append(counts); row.append([0.5, 0.25]); row.append([minimum]); row.append([maximum])
            row.append(tally.map(\.0)); row.append(tally.map(\.1)); row.append(0.2); row.append("{}")
        }
        var rows = RowBinaryWriter()
        visit(&rows, start: 1_700_003_725.5, version: "3.1.0", tags: [("experiment", "B")], register: 7, rank: 3,
              counts: [1, 120, 0, 0, 120], minimum: 0.016, maximum: 0.05, tally: [(5, 2), (9, 1)])
        visit(&rows, start: 1_700_004_000, version: "3.0.0", tags: [], register: 7, rank: 5,
              counts: [1, 60, 1, 0, 60], minimum: 0.008, maximum: 0.2, tally: [(5, 3)])
        try await client.insert(into: "events", columns: ["app_id", "batch_id", "event_id", "started_at", "screen", "app_version", "os_version", "device_model",
                                                          "network", "low_power", "thermal_state", "max_refresh_rate", "tag_keys", "tag_values", "event_tag_keys", "event_tag_values",
                                                          "device_key", "device_register", "device_rank", "event_counts", "event_sums", "event_mins",
                                                          "event_maxes", "event_tally_keys", "event_tally_counts", "stability_band", "payload"],
                                rows: rows.bytes)
        let raw: [[String]] = try await client.rows("SELECT toUInt32(hour), app_version, event_counts FROM events ORDER BY started_at")
        #expect(raw == [["1700002800", "3.1.0", "[1,120,0,0,120]"], ["1700002800", "3.0.0", "[1,60,1,0,60]"]])
        let merged = "sumForEachMerge(counts), sumForEachMerge(sums), minForEachMerge(mins), maxForEachMerge(maxes), sumMapMerge(tallies), arraySort(groupUniqArrayMerge(devices))"
        // Screen level: the two visits in one row, every dimension '*'.
        let screenLevel: [[String]] = try await client.rows("SELECT toUInt32(bucket), app_version, \(merged) FROM rollups_screen_hourly GROUP BY bucket, app_version")
        let expectedScreenLevel: [[String]] = [["1700002800", "*", "[2,180,1,0,180]", "[1,0.5]", "[0.008]", "[0.2]", "([5,9],[5,1])", "[451,453]"]]
        #expect(screenLevel == expectedScreenLevel)
        // Daily level with every dimension: a row per version; the tag level: the tagged visit alone.
        let daily: [[String]] = try await client.rows("SELECT toUInt32(bucket), app_version, sumForEachMerge(counts) FROM rollups_daily GROUP BY bucket, app_version ORDER BY app_version")
        #expect(daily == [["1699920000", "3.0.0", "[1,60,1,0,60]"], ["1699920000", "3.1.0", "[1,120,0,0,120]"]])
        let tagged: [[String]] = try await client.rows("SELECT tag_key, tag_value, sumForEachMerge(counts) FROM rollups_tag_hourly GROUP BY tag_key, tag_value")
        #expect(tagged == [["experiment", "B", "[1,120,0,0,120]"]])
        // A version from a newer Framescope: refused, naming it.
        try await client.execute("INSERT INTO fs_migrate.schema_migrations SELECT 999, 'from the future', now()")
        await #expect(throws: ClickHouseSchemaError.self) { _ = try await migrator.migrate() }
    }
    @Test("Version 5 counts the events stored before it at rate 1, per batch and day; its statements run again change nothing")
    func sampleRatesOfEarlierEvents() async throws {
        let server = try await SharedClickHouse.shared.server()
        let database = SharedClickHouse.freshDatabase()
        let client = ClickHouseClient(location: server.location(database: database))
        // The schema as a Framescope before version 5 left it, with events in it.
        let topology = ClickHouseTopology(location: client.location)
        try await client.execute("CREATE DATABASE IF NOT EXISTS \(database)", inDatabase: false)
        try await client.execute("""
            CREATE TABLE IF NOT EXISTS \(database).schema_migrations (version UInt32, name String, applied_at DateTime('UTC'))
            ENGINE = MergeTree ORDER BY version
            """)
        for migration in ClickHouseMigrator.migrations where migration.version < 5 {
            for statement in migration.statements(topology) { try await client.execute(statement) }
            try await client.execute("INSERT INTO \(database).schema_migrations SELECT \(migration.version), 'before', now()")
        }
        let day = 1_795_046_400  // 2026-11-19T00:00:00Z
        try await client.execute("""
            INSERT INTO \(database).events (app_id, batch_id, event_id, started_at, screen, payload) VALUES
            ('shop', 'b1', 1, \(day + 600), 'Feed', '{}'), ('shop', 'b1', 2, \(day + 86_390), 'Feed', '{}'),
            ('shop', 'b1', 3, \(day + 86_410), 'Feed', '{}'), ('shop', 'b2', 4, \(day + 7200), 'Chat', '{}'),
            ('other', 'b1', 5, \(day + 600), 'Feed', '{}')
            """)
        #expect(try await ClickHouseMigrator(client: client).migrate() == [5, 6])
        let rows = "SELECT app_id, toString(day), toString(rate_ppm), batch_id, toString(visits) FROM sample_rates FINAL ORDER BY app_id, day, batch_id"
        let expected = [["other", "\(day)", "1000000", "b1", "1"], ["shop", "\(day)", "1000000", "b1", "2"],
                        ["shop", "\(day)", "1000000", "b2", "1"], ["shop", "\(day + 86_400)", "1000000", "b1", "1"]]
        #expect(try await client.rows(rows) == expected)
        // Two collectors migrating at once both run it: the same rows, read once.
        for statement in ClickHouseMigrator.migrations[4].statements(topology) { try await client.execute(statement) }
        #expect(try await client.rows(rows) == expected)
        // One has migrated and stored a sampled batch (its row first, then its events) when
        // the other runs it: the sampled batch keeps its one row, at its rate.
        try await client.execute("INSERT INTO \(database).sample_rates (app_id, day, rate_ppm, batch_id, visits) VALUES ('shop', \(day), 100000, 'b3', 1)")
        try await client.execute("INSERT INTO \(database).events (app_id, batch_id, event_id, started_at, screen, payload) VALUES ('shop', 'b3', 6, \(day + 900), 'Feed', '{}')")
        for statement in ClickHouseMigrator.migrations[4].statements(topology) { try await client.execute(statement) }
        let withSampled = try await client.rows(rows)
        let expectedWithSampled = (expected + [["shop", "\(day)", "100000", "b3", "1"]]).sorted { ($0[0], $0[1], $0[3]) < ($1[0], $1[1], $1[3]) }
        #expect(withSampled == expectedWithSampled, "\(withSampled)")
        let store = try await ClickHouseStore(client: client)
        #expect(try await store.sampleRates(app: "shop", from: Double(day), to: Double(day + 2 * 86_400))
                == [SampleRateVisits(sampleRate: 0.1, visits: 1), SampleRateVisits(sampleRate: 1, visits: 4)])
    }
}

/// Times a refused connection, so it runs in the isolated timing process (scripts/test runs it
/// after the main run with `FRAMESCOPE_ISOLATED_TIMING=1`): in the whole run on two cores the
/// cooperative pool is starved, and one such wait once measured 211 s of queueing, not of
/// connecting.
@Suite("ClickHouse: a server that is down is refused at once", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_ISOLATED_TIMING"] != nil,
                "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --package-path Server --filter ClickHouseRefusalTimingTests"))
struct ClickHouseRefusalTimingTests {
    @Test("A refused connection fails the request at once: no retrying the connection until the pool's 2 s wait runs out")
    func refusedAtOnce() async throws {
        // A loopback port nothing listens on: every connection is refused.
        let port = try ClickHouseServer.freePort()
        let client = ClickHouseClient(location: ClickHouseLocation(host: "127.0.0.1", port: port, database: "default"))
        let clock = ContinuousClock()
        for _ in 0..<3 {
            let started = clock.now
            do {
                try await client.execute("SELECT 1")
                Issue.record("a closed port answered")
            } catch {
                #expect(error.storeError == .unavailable(store: "ClickHouse", retryAfter: 5), "\(error)")
            }
            // With async-http-client's default (`retryConnectionEstablishment`) the pool tries
            // the connection again until the 2 s wait for a pooled connection runs out: each
            // request then took 2 s here, against 5 ms without.
            #expect(clock.now - started < .seconds(1), "failed at once, not after retrying the connection")
        }
    }
}
