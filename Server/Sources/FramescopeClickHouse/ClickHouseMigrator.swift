/// The ClickHouse schema's timeline, as GRDB's migrator is SQLite's: versions appended and
/// never edited, each a list of frozen statements (one per request: the HTTP interface
/// takes one statement at a time), applied in order and recorded in the database's
/// `schema_migrations` table. Every statement is idempotent (`IF NOT EXISTS`), so two
/// collectors starting at once, or a migration cut short and run again, converge.
///
/// A statement depends on two things only, both identifiers checked when the location was
/// read (``ClickHouseSQL/isIdentifier(_:)``): the database, and the cluster when there is
/// one (``ClickHouseTopology``). On one server the tables are plain MergeTree engines. On a
/// cluster every table is a replicated `…_local` table on each shard (created `ON CLUSTER`,
/// kept in ZooKeeper, whose block deduplication makes a retried batch count once) with a
/// `Distributed` table under the plain name over them, so every query is the same on both.
public struct ClickHouseMigrator: Sendable {
    /// One version of the schema.
    public struct Migration: Sendable {
        /// Its number, from 1, one more than the one before.
        public let version: Int
        /// What it does, in a few words.
        public let name: String
        /// Its statements for a topology, in order.
        public let statements: @Sendable (ClickHouseTopology) -> [String]
    }

    /// Every version, in order (docs/dev-notes/clickhouse-schema.md §1–4).
    public static let migrations: [Migration] = [
        Migration(version: 1, name: "raw events by month; the batch ledger; control records; distinct values per day") { topology in
            topology.table("events", columns: """
                app_id String, batch_id String, event_id UInt64, started_at Float64,
                hour DateTime('UTC') DEFAULT toDateTime(intDiv(toUInt32(started_at), 3600) * 3600, 'UTC'),
                screen String, app_version String, os_version String, device_model String, network String, low_power UInt8,
                thermal_state String, max_refresh_rate String, tag_keys Array(String), tag_values Array(String),
                event_tag_keys Array(String), event_tag_values Array(String), device_key String, device_register UInt16, device_rank UInt8,
                event_counts Array(UInt64), event_sums Array(Float64), event_mins Array(Float64), event_maxes Array(Float64),
                event_tally_keys Array(UInt64), event_tally_counts Array(UInt64), stability_band Float64, payload String
                """, engine: "MergeTree", clause: "PARTITION BY toYYYYMM(hour) ORDER BY (app_id, hour, screen)",
                settings: "replicated_deduplication_window = 10000", shardKey: "cityHash64(app_id, device_key)")
            + topology.table("batches", columns: "app_id String, batch_id String, received_at Float64, events UInt32, recorded_at Float64",
                             engine: "ReplacingMergeTree", clause: "ORDER BY (app_id, batch_id)", shardKey: "cityHash64(app_id, batch_id)")
            + topology.table("control", columns: "kind String, app_id String, id String, version UInt64, deleted UInt8, body String",
                             engine: "ReplacingMergeTree", engineArgument: "version", clause: "ORDER BY (kind, app_id, id)",
                             shardKey: "cityHash64(kind, app_id, id)")
            + topology.table("dimension_values", columns: "app_id String, day UInt32, dimension String, value String",
                             engine: "ReplacingMergeTree", clause: "ORDER BY (app_id, day, dimension, value)", shardKey: "cityHash64(app_id, day)")
        },
        Migration(version: 2, name: "rollups merged in the engine: six levels fed by materialized views", statements: rollupStatements),
        Migration(version: 3, name: "hangs with their signatures and stacks") { topology in
            // One row per hang with a stack, and per fatal hang (issue 33); a retried insert
            // or a fatal hang sent twice has the same (app_id, hang_key), which
            // ReplacingMergeTree keeps once and reads with FINAL keep once before it merges.
            // The shard key puts copies of one hang on one shard.
            topology.table("hangs", columns: """
                app_id String, hang_key String, started_at Float64,
                hour DateTime('UTC') DEFAULT toDateTime(intDiv(toUInt32(started_at), 3600) * 3600, 'UTC'),
                screen String, app_version String, os_version String, device_model String, network String, low_power UInt8,
                thermal_state String, max_refresh_rate String, event_tag_keys Array(String), event_tag_values Array(String),
                duration Float64, fatal UInt8, source String, signature String, dominant_image_id String, dominant_image String,
                dominant_offset UInt64, samples UInt32, stack String
                """, engine: "ReplacingMergeTree", clause: "PARTITION BY toYYYYMM(hour) ORDER BY (app_id, hang_key)",
                shardKey: "cityHash64(app_id, hang_key)")
        },
        Migration(version: 4, name: "symbol tables") { topology in
            // One row per app and image (the latest upload wins: ReplacingMergeTree by
            // uploaded_at, read with FINAL); the symbols in base64 of their binary form
            // (FSY1), since query answers are text.
            topology.table("symbol_tables", columns: """
                app_id String, image_id String, name String, arch String, symbols String, count UInt32, uploaded_at Float64
                """, engine: "ReplacingMergeTree", engineArgument: "uploaded_at", clause: "ORDER BY (app_id, image_id)",
                shardKey: "cityHash64(app_id, image_id)")
        },
        Migration(version: 5, name: "visits per sample rate") { topology in
            // One row per batch and UTC day it has visits on: the batch's sample rate in parts
            // per million and those visits (issue 35). Inserted before the batch's events, so a
            // retried insert has the same (app_id, day, rate_ppm, batch_id) again, which
            // ReplacingMergeTree keeps once and reads with FINAL keep once before it merges; the
            // shard key puts copies of one batch's rows on one shard. A table, not a column of
            // `events`: ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS, and every statement
            // here must be idempotent (docs/decisions.md).
            let database = topology.database
            return topology.table("sample_rates", columns: "app_id String, day UInt32, rate_ppm UInt32, batch_id String, visits UInt32",
                                  engine: "ReplacingMergeTree", clause: "ORDER BY (app_id, day, rate_ppm, batch_id)",
                                  shardKey: "cityHash64(app_id, batch_id)") + [
                // The events stored before came from SDKs that did not sample: each batch's
                // visits per day at 1 000 000. Only batches with no row yet: run again (a
                // second collector starting beside one that has migrated and ingests sampled
                // batches), it adds nothing, not a second row at another rate.
                """
                INSERT INTO \(database).sample_rates (app_id, day, rate_ppm, batch_id, visits)
                SELECT app_id, toUInt32(intDiv(toUInt32(hour), 86400) * 86400) AS day, toUInt32(1000000), batch_id, toUInt32(count())
                FROM \(database).events
                WHERE (app_id, batch_id) GLOBAL NOT IN (SELECT app_id, batch_id FROM \(database).sample_rates)
                GROUP BY app_id, day, batch_id
                """,
            ]
        },
        Migration(version: 6, name: "symbol tables in chunks") { topology in
            // One row per app, image and chunk of its symbol table (issue 43, item 7), each
            // chunk a table of its own (FSY1) in base64; the image's `symbol_tables` row then
            // holds the chunks' index (FSI1). The latest upload's chunk wins (ReplacingMergeTree
            // by uploaded_at, read with FINAL); an upload with fewer chunks leaves the earlier
            // ones past its index's end, never read. Small granules, since 18.16 has no
            // adaptive granularity: a lookup reads 16 chunks' granule, not 8,192.
            topology.table("symbol_chunks", columns: "app_id String, image_id String, chunk UInt32, symbols String, uploaded_at Float64",
                           engine: "ReplacingMergeTree", engineArgument: "uploaded_at",
                           clause: "ORDER BY (app_id, image_id, chunk) SETTINGS index_granularity = 16",
                           shardKey: "cityHash64(app_id, image_id)")
        },
    ]

    /// Version 2's statements, frozen: for each level a table of aggregate states and the
    /// materialized view that feeds it from every insert into `events`
    /// (docs/dev-notes/clickhouse-schema.md §1–2): counters and sums by `sumForEach`,
    /// extremes by `minForEach`/`maxForEach`, histograms and tallies by `sumMap`, the device
    /// sketch as the set of `register·64 + rank` codes, the stability band of the earliest
    /// visit with frames.
    static func rollupStatements(_ topology: ClickHouseTopology) -> [String] {
        let hourBucket = "hour"
        let dayBucket = "toDateTime(intDiv(toUInt32(hour), 86400) * 86400, 'UTC')"
        let dimensions = "app_version, os_version, device_model, network, low_power, thermal_state, max_refresh_rate"
        let anyDimensions = "'*' AS app_version, '*' AS os_version, '*' AS device_model, '*' AS network, toUInt8(0) AS low_power, "
            + "'*' AS thermal_state, '*' AS max_refresh_rate"
        let states = """
            sumForEachState(event_counts) AS counts, sumForEachState(event_sums) AS sums, minForEachState(event_mins) AS mins,
            maxForEachState(event_maxes) AS maxes, sumMapState(event_tally_keys, event_tally_counts) AS tallies,
            groupUniqArrayStateIf(toUInt16(device_register * 64 + device_rank), device_rank > 0) AS devices,
            argMinIfState(stability_band, started_at, toUInt8(event_counts[2] + event_counts[5] + event_counts[17] > 0)) AS band
            """
        let columns = """
            screen String, app_version String, os_version String, device_model String, network String, low_power UInt8,
            thermal_state String, max_refresh_rate String,
            counts AggregateFunction(sumForEach, Array(UInt64)), sums AggregateFunction(sumForEach, Array(Float64)),
            mins AggregateFunction(minForEach, Array(Float64)), maxes AggregateFunction(maxForEach, Array(Float64)),
            tallies AggregateFunction(sumMap, Array(UInt64), Array(UInt64)), devices AggregateFunction(groupUniqArray, UInt16),
            band AggregateFunction(argMinIf, Float64, Float64, UInt8)
            """
        let key = "screen, \(dimensions)"
        var statements: [String] = []
        for (table, bucket, tagged, keepsDimensions) in [("rollups_hourly", hourBucket, false, true), ("rollups_daily", dayBucket, false, true),
                                                         ("rollups_screen_hourly", hourBucket, false, false), ("rollups_screen_daily", dayBucket, false, false),
                                                         ("rollups_tag_hourly", hourBucket, true, true), ("rollups_tag_daily", dayBucket, true, true)] {
            let tagColumns = tagged ? "tag_key String, tag_value String, " : ""
            let tagKey = tagged ? "tag_key, tag_value, " : ""
            statements += topology.table(table, columns: "app_id String, \(tagColumns)bucket DateTime('UTC'), \(columns)", engine: "AggregatingMergeTree",
                                         clause: "PARTITION BY toYYYYMM(bucket) ORDER BY (app_id, \(tagKey)bucket, \(key))", shardKey: nil)
            let selected = keepsDimensions ? dimensions : anyDimensions
            let database = topology.database
            statements.append("""
                CREATE MATERIALIZED VIEW IF NOT EXISTS \(database).\(table)_mv\(topology.localSuffix)\(topology.onCluster) TO \(database).\(table)\(topology.localSuffix) AS
                SELECT app_id, \(tagKey)\(bucket) AS bucket, screen, \(selected), \(states)
                FROM \(database).events\(topology.localSuffix)\(tagged ? " ARRAY JOIN tag_keys AS tag_key, tag_values AS tag_value" : "")
                GROUP BY app_id, \(tagKey)bucket, \(key)
                """)
        }
        return statements
    }

    /// The server and database to migrate.
    public let client: ClickHouseClient

    /// A migrator for `client`'s location.
    public init(client: ClickHouseClient) {
        self.client = client
    }

    /// Creates the database if it is missing, then applies every version not yet recorded,
    /// in order; returns the versions applied now.
    /// - Throws: ``ClickHouseError``; ``ClickHouseSchemaError`` when the database was
    ///   migrated by a newer Framescope (a version this one does not know).
    public func migrate() async throws -> [Int] {
        let topology = ClickHouseTopology(location: client.location)
        let database = topology.database
        try await client.execute("CREATE DATABASE IF NOT EXISTS \(database)\(topology.onCluster)", inDatabase: false, timeout: ClickHouseClient.schemaTimeout)
        // Each server records what it applied; the statements are idempotent, so a server
        // that missed a record runs them again harmlessly.
        try await client.execute("""
            CREATE TABLE IF NOT EXISTS \(database).schema_migrations\(topology.onCluster) (version UInt32, name String, applied_at DateTime('UTC'))
            ENGINE = MergeTree ORDER BY version
            """, timeout: ClickHouseClient.schemaTimeout)
        let applied = try await appliedVersions()
        let known = Self.migrations.map(\.version)
        if let newest = applied.max(), newest > known.max() ?? 0 {
            throw ClickHouseSchemaError(message: "\(client.location) is at schema version \(newest); this Framescope knows up to \(known.max() ?? 0): upgrade Framescope")
        }
        var appliedNow: [Int] = []
        for migration in Self.migrations where !applied.contains(migration.version) {
            for statement in migration.statements(topology) {
                try await client.execute(statement, timeout: ClickHouseClient.schemaTimeout)
            }
            try await client.execute("INSERT INTO \(database).schema_migrations SELECT \(migration.version), \(ClickHouseSQL.quote(migration.name)), now()")
            appliedNow.append(migration.version)
        }
        return appliedNow
    }

    /// The versions recorded in `schema_migrations`, in order (each once).
    public func appliedVersions() async throws(ClickHouseError) -> [Int] {
        try await client.rows("SELECT DISTINCT version FROM \(client.location.database).schema_migrations ORDER BY version")
            .compactMap { $0.first.flatMap { Int($0) } }
    }
}

/// The database holds a schema this Framescope cannot work with; the message says why and what to do.
public struct ClickHouseSchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// Where the store's tables live: one server, or the shards of a cluster named in
/// `remote_servers` (with ZooKeeper, and the `shard` and `replica` macros on every server).
public struct ClickHouseTopology: Sendable, Hashable {
    /// The database.
    public var database: String
    /// The cluster, or `nil` for one server.
    public var cluster: String?

    /// The topology of `location`.
    public init(location: ClickHouseLocation) {
        database = location.database
        cluster = location.cluster
    }

    /// `_local` on a cluster (the shards' own tables), empty on one server.
    public var localSuffix: String { cluster == nil ? "" : "_local" }

    /// ` ON CLUSTER name` on a cluster, empty on one server.
    public var onCluster: String { cluster.map { " ON CLUSTER \($0)" } ?? "" }

    /// The statements that create `name`: on one server the table itself with `engine`; on a
    /// cluster the replicated `name_local` on every shard (its ZooKeeper path by shard,
    /// database and table) and a `Distributed` table `name` over them, inserting by
    /// `shardKey` (`nil` for tables written only by materialized views on the shards).
    /// - Parameter engineArgument: The engine's own argument (a version column), after the
    ///   replication arguments on a cluster.
    /// - Parameter settings: Table settings for the replicated form (deduplication window).
    func table(_ name: String, columns: String, engine: String, engineArgument: String? = nil, clause: String,
               settings: String? = nil, shardKey: String?) -> [String] {
        guard let cluster else {
            return ["CREATE TABLE IF NOT EXISTS \(database).\(name) (\(columns)) ENGINE = \(engine)\(engineArgument.map { "(\($0))" } ?? "") \(clause)"]
        }
        let arguments = ["'/clickhouse/tables/{shard}/\(database)/\(name)'", "'{replica}'"] + (engineArgument.map { [$0] } ?? [])
        return [
            """
            CREATE TABLE IF NOT EXISTS \(database).\(name)_local ON CLUSTER \(cluster) (\(columns))
            ENGINE = Replicated\(engine)(\(arguments.joined(separator: ", "))) \(clause)\(settings.map { " SETTINGS \($0)" } ?? "")
            """,
            """
            CREATE TABLE IF NOT EXISTS \(database).\(name) ON CLUSTER \(cluster) AS \(database).\(name)_local
            ENGINE = Distributed(\(cluster), \(database), \(name)_local\(shardKey.map { ", \($0)" } ?? ""))
            """,
        ]
    }
}
