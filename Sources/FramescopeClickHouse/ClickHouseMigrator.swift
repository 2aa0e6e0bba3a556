/// The ClickHouse schema's timeline, as GRDB's migrator is SQLite's: versions appended and
/// never edited, each a list of frozen statements (one per request: the HTTP interface
/// takes one statement at a time), applied in order and recorded in the database's
/// `schema_migrations` table. Every statement is idempotent (`IF NOT EXISTS`), so two
/// collectors starting at once, or a migration cut short and run again, converge.
///
/// A statement's only substitution is `{database}`: the location's database, an identifier
/// checked when the location was read (``ClickHouseSQL/isIdentifier(_:)``).
public struct ClickHouseMigrator: Sendable {
    /// One version of the schema.
    public struct Migration: Sendable {
        /// Its number, from 1, one more than the one before.
        public let version: Int
        /// What it does, in a few words.
        public let name: String
        /// Its statements, in order.
        public let statements: [String]
    }

    /// Every version, in order. The rollup tables and their materialized views follow the
    /// events table in later versions (docs/dev-notes/clickhouse-schema.md §2).
    public static let migrations: [Migration] = [
        Migration(version: 1, name: "raw events by month; the batch ledger", statements: [
            """
            CREATE TABLE IF NOT EXISTS {database}.events (
                app_id String,
                batch_id String,
                started_at Float64,
                hour DateTime('UTC') DEFAULT toDateTime(intDiv(toUInt32(started_at), 3600) * 3600, 'UTC'),
                screen String,
                app_version String,
                os_version String,
                device_model String,
                network String,
                low_power UInt8,
                thermal_state String,
                max_refresh_rate String,
                tag_keys Array(String),
                tag_values Array(String),
                device_key String,
                device_register UInt16,
                device_rank UInt8,
                event_counts Array(UInt64),
                event_sums Array(Float64),
                event_mins Array(Float64),
                event_maxes Array(Float64),
                event_tally_keys Array(UInt64),
                event_tally_counts Array(UInt64),
                stability_band Float64,
                payload String
            ) ENGINE = MergeTree
            PARTITION BY toYYYYMM(hour)
            ORDER BY (app_id, hour, screen)
            """,
            """
            CREATE TABLE IF NOT EXISTS {database}.batches (
                app_id String,
                batch_id String,
                received_at AggregateFunction(min, Float64),
                events AggregateFunction(max, UInt32)
            ) ENGINE = AggregatingMergeTree
            ORDER BY (app_id, batch_id)
            """,
        ]),
        Migration(version: 2, name: "rollups merged in the engine: six levels fed by materialized views", statements: rollupStatements),
    ]

    /// Version 2's statements, frozen: for each level a table of aggregate states and the
    /// materialized view that feeds it from every insert into `events`
    /// (docs/dev-notes/clickhouse-schema.md §1–2): counters and sums by `sumForEach`,
    /// extremes by `minForEach`/`maxForEach`, histograms and tallies by `sumMap`, the device
    /// sketch as the set of `register·64 + rank` codes, the stability band of the earliest
    /// visit with frames.
    static let rollupStatements: [String] = {
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
            statements.append("""
                CREATE TABLE IF NOT EXISTS {database}.\(table) (app_id String, \(tagColumns)bucket DateTime('UTC'), \(columns))
                ENGINE = AggregatingMergeTree PARTITION BY toYYYYMM(bucket) ORDER BY (app_id, \(tagKey)bucket, \(key))
                """)
            let selected = keepsDimensions ? dimensions : anyDimensions
            statements.append("""
                CREATE MATERIALIZED VIEW IF NOT EXISTS {database}.\(table)_mv TO {database}.\(table) AS
                SELECT app_id, \(tagKey)\(bucket) AS bucket, screen, \(selected), \(states)
                FROM {database}.events\(tagged ? " ARRAY JOIN tag_keys AS tag_key, tag_values AS tag_value" : "")
                GROUP BY app_id, \(tagKey)bucket, \(key)
                """)
        }
        return statements
    }()

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
        let database = client.location.database
        try await client.execute("CREATE DATABASE IF NOT EXISTS \(database)", inDatabase: false)
        try await client.execute("""
            CREATE TABLE IF NOT EXISTS \(database).schema_migrations (version UInt32, name String, applied_at DateTime('UTC'))
            ENGINE = MergeTree ORDER BY version
            """)
        let applied = try await appliedVersions()
        let known = Self.migrations.map(\.version)
        if let newest = applied.max(), newest > known.max() ?? 0 {
            throw ClickHouseSchemaError(message: "\(client.location) is at schema version \(newest); this Framescope knows up to \(known.max() ?? 0): upgrade Framescope")
        }
        var appliedNow: [Int] = []
        for migration in Self.migrations where !applied.contains(migration.version) {
            for statement in migration.statements {
                try await client.execute(statement.replacingOccurrences(of: "{database}", with: database))
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
