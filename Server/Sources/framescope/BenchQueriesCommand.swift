import ArgumentParser
import Foundation
import FramescopeClickHouse
import FramescopeCollector
import FramescopeCore
import FramescopeSimulation

/// `framescope bench queries`: the collector's read queries over rollups that represent
/// a large fleet.
struct BenchQueriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queries",
        abstract: "Time the collector's queries over rollups that represent --events screen visits.",
        discussion: """
            Fills a fresh SQLite store (or, with --store, a new ClickHouse database) with rollups as if --events visits had been ingested \
            over --days days (without raw events): each hour, --keys-per-hour rollup keys \
            (screen × app version × OS version × device model × network × low-power mode × \
            thermal state × display maximum, drawn from the demo fleet's mix, and a declared \
            tag with three values) each get an equal share of the visits, built \
            from real simulated visit reports by exact merging. Then runs each query \
            --repeats times and prints the median and the slowest time. Build with \
            -c release for meaningful figures.
            """
    )

    @Option(help: "Screen visits the rollups represent.")
    var events = 100_000_000

    @Option(help: "Days of data, ending now.")
    var days = 30

    @Option(help: "Rollup keys with data per hour.")
    var keysPerHour = 150

    @Option(help: "Times each query runs.")
    var repeats = 7

    @Option(help: ArgumentHelp("The database to create; a temporary file by default (deleted afterwards).", valueName: "path"))
    var db: String?

    @Option(help: ArgumentHelp("Run on ClickHouse instead: clickhouse://USER@HOST:PORT/DATABASE[?cluster=NAME] (a database that does not exist yet).",
                               valueName: "location"))
    var store: String?

    mutating func validate() throws {
        if !(1...366).contains(days) { throw ValidationError("--days must be 1–366") }
        if !(1...5000).contains(keysPerHour) { throw ValidationError("--keys-per-hour must be 1–5000") }
        if events < days * 24 * keysPerHour { throw ValidationError("--events must be at least days × 24 × keys-per-hour") }
        if !(1...100).contains(repeats) { throw ValidationError("--repeats must be 1–100") }
        if store != nil && db != nil { throw ValidationError("give --store or --db, not both") }
        if let store { _ = try StoreOptions.parse(store) }
    }

    func run() async throws {
        let path = db ?? NSTemporaryDirectory() + "framescope-bench-queries-\(getpid()).sqlite"
        let store: any RollupBulkLoading
        var clickhouse: ClickHouseStore?
        if let text = self.store, case .clickhouse(let location) = try StoreOptions.parse(text) {
            let client = ClickHouseClient(location: location, timeout: 600)
            var server = location
            server.database = "system"
            if try await !ClickHouseClient(location: server).rows("SELECT name FROM databases WHERE name = \(ClickHouseSQL.quote(location.database))").isEmpty {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(location): the database exists; name a new one")
            }
            let made = try await ClickHouseStore(client: client)
            clickhouse = made
            store = made
        } else {
            if db != nil, FileManager.default.fileExists(atPath: path) {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): exists; name a new file")
            }
            store = try SQLiteStore(path: path)
        }
        defer {
            if db == nil && clickhouse == nil { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        }
        let clock = ContinuousClock()
        let now = (Date().timeIntervalSince1970 / 3600).rounded(.down) * 3600
        let start = now - Double(days) * 86_400

        // Real visits from one simulated day of the demo fleet, by their rollup key's parts.
        let fleet = FleetSimulation.demo(appId: "bench", start: start, days: 1, deviceCount: 60, seed: 5)
        var pool: [(key: RollupKey, value: RollupValue)] = []
        for batch in fleet.batches() {
            for event in batch.events {
                let facts = VisitFacts(appVersion: batch.app.version, osVersion: batch.device.osVersion, deviceModel: batch.device.model,
                                       maxRefreshRate: batch.device.maxRefreshRate, event: event)
                pool.append((RollupKey(bucketStart: 0, facts: facts), RollupValue(visit: event)))
            }
        }
        let versions = ["3.0.0", "3.1.0", "3.2.0"]
        var random = SeededGenerator(seed: 17)
        let hours = days * 24
        let rows = hours * keysPerHour
        let perRow = events / rows
        let remainder = events - perRow * rows
        var written = 0
        let fillTime = try await clock.measure {
            for hour in 0..<hours {
                var values: [RollupKey: RollupValue] = [:]
                var tagged: [(tag: TagFilter, key: RollupKey, value: RollupValue)] = []
                for slot in 0..<keysPerHour {
                    // Four real visits (one key's screen and context), repeated to the row's share.
                    let base = pool[Int(random.next() % UInt64(pool.count))]
                    var key = base.key
                    key.bucketStart = Int64(start) + Int64(hour) * 3600
                    key[.appVersion] = versions[min(2, hour * 3 / hours)]
                    var four = RollupValue()
                    for _ in 0..<4 { four.merge(pool[Int(random.next() % UInt64(pool.count))].value) }
                    let share = perRow + (hour * keysPerHour + slot < remainder ? 1 : 0)
                    var value = four.repeated(share / 4)
                    for _ in 0..<(share % 4) { value.merge(base.value) }
                    values[key, default: RollupValue()].merge(value)
                    // A declared tag with three arms, one per key: its own rollup rows.
                    tagged.append((TagFilter(key: "experiment", value: ["A", "B", DeclaredTags.none][slot % 3]), key, value))
                    written += share
                }
                try await store.addRollups(app: "bench", hourly: values, tagged: tagged)
                if isatty(STDERR_FILENO) == 1, hour % 24 == 23 {
                    writeToStandardError("\rfilled \(hour / 24 + 1) of \(days) days")
                }
            }
        }
        if isatty(STDERR_FILENO) == 1 { writeToStandardError("\n") }
        var size = ["", "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: path + $0)[.size] as? Int }.reduce(0, +)
        if let clickhouse {
            // The rows that stood for the visits go; the rollups stay. Merge the parts, as a
            // server does in the background.
            _ = try await clickhouse.deleteRawEvents(startedBefore: now + 86_400, limit: clickhouse.retentionChunk)
            // (On a cluster 18.16 fails OPTIMIZE … ON CLUSTER on replicated tables with Code 49,
            // "Unknown log entry type"; there the background merges are left to run.)
            if clickhouse.topology.cluster == nil {
                for table in ["rollups_hourly", "rollups_daily", "rollups_screen_hourly", "rollups_screen_daily", "rollups_tag_hourly", "rollups_tag_daily"] {
                    try await clickhouse.client.execute("OPTIMIZE TABLE \(table) FINAL")
                }
            } else {
                try await Task.sleep(for: .seconds(60))
            }
            size = Int(try await clickhouse.client.rows("""
                SELECT sum(bytes_on_disk) FROM system.parts WHERE database = \(ClickHouseSQL.quote(clickhouse.topology.database)) AND active
                """).first?.first ?? "0") ?? 0
        }

        let queries = CollectorQueries(store: store)
        let range = ScreenQuery(from: start, to: now)
        let cases: [(String, @Sendable () async throws -> Int)] = [
            ("screens, \(days) days, all screens", { try await store.screens(app: "bench", query: range).count }),
            ("screens, \(days) days, screen=Feed", { try await store.screens(app: "bench", query: ScreenQuery(from: start, to: now, [.screen: "Feed"])).count }),
            ("screens, \(days) days, appVersion=3.1.0", { try await store.screens(app: "bench", query: ScreenQuery(from: start, to: now, [.appVersion: "3.1.0"])).count }),
            ("screens, \(days) days, thermalState=serious, maxRefreshRate=120", {
                try await store.screens(app: "bench", query: ScreenQuery(from: start, to: now, [.thermalState: "serious", .maxRefreshRate: "120"])).count }),
            ("screens, \(days) days, tag.experiment=B", {
                var query = range
                query.tag = TagFilter(key: "experiment", value: "B")
                return try await store.screens(app: "bench", query: query).count }),
            ("screens, \(days) days, tag.experiment=B, appVersion=3.1.0", {
                var query = ScreenQuery(from: start, to: now, [.appVersion: "3.1.0"])
                query.tag = TagFilter(key: "experiment", value: "B")
                return try await store.screens(app: "bench", query: query).count }),
            ("break-down by tag experiment, \(days) days", {
                try await store.aggregate(app: "bench", query: AggregateQuery(filter: range, tagKey: "experiment")).count }),
            ("break-down by thermalState, \(days) days", {
                try await store.aggregate(app: "bench", query: AggregateQuery(filter: range, dimension: .thermalState)).count }),
            ("screens, \(days) days, partial first and last day", { try await store.screens(app: "bench", query: ScreenQuery(from: start + 5400, to: now - 1800)).count }),
            ("timeseries hitchRatio by day, \(days) days", { try await queries.timeSeries(app: "bench", query: range, figure: QueryFigure(.hitchRatio), interval: .day).points.count }),
            ("timeseries hitchRatio by hour, 7 days, Feed", { try await queries.timeSeries(app: "bench", query: ScreenQuery(from: now - 7 * 86_400, to: now, [.screen: "Feed"]), figure: QueryFigure(.hitchRatio), interval: .hour).points.count }),
            ("compare 3.0.0 → 3.1.0, \(days) days", { try await queries.compare(app: "bench", query: range, baseline: "3.0.0", candidate: "3.1.0").screens.count }),
            ("worst screens by hitchRatio, \(days) days", { try await queries.worstScreens(app: "bench", query: range, figure: QueryFigure(.hitchRatio), limit: 10, minimumVisits: 20).screens.count }),
            ("percentiles, \(days) days", { try await queries.percentiles(app: "bench", query: range).visits }),
        ]
        let total = try await store.screens(app: "bench", query: range).map(\.visits).reduce(0, +)
        print("""
            rollups:   \(rows) hourly rows representing \(written) screen visits over \(days) days (\(keysPerHour) keys per hour); stored visits \(total)
            database:  \(Metric.decimal(Double(size) / 1e6, digits: 1)) MB, filled in \(Metric.decimal(seconds(fillTime), digits: 1)) s
            """)
        for (name, query) in cases {
            var times: [Double] = []
            var answer = 0
            for _ in 0..<repeats {
                let elapsed = try await clock.measure { answer = try await query() }
                times.append(seconds(elapsed) * 1000)
            }
            times.sort()
            print("\(name.padding(toLength: 64, withPad: " ", startingAt: 0)) median \(Metric.decimal(times[times.count / 2], digits: 1)) ms, max \(Metric.decimal(times.last ?? 0, digits: 1)) ms (answer \(answer))")
        }
    }

}
