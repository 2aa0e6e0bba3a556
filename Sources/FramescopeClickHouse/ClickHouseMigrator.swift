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
    ]

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
