import Crypto
import Foundation
import FramescopeCore
import GRDB

/// The embedded store: one SQLite file in WAL mode, through GRDB.
///
/// Raw events are appended to `events`; rollups at four levels (``RollupLevel``: hour
/// or day × screen × every dimension, hour or day × screen) hold the
/// merged reports and per-visit statistics. The batches of one group commit, their raw
/// events and all their rollup updates commit in one transaction, so a batch is either
/// counted whole or not at all. Schema changes are migrations, appended and never edited.
public final class SQLiteStore: CollectorStore {
    let pool: DatabasePool
    private let rowCache = RollupRowCache(capacity: 8192)
    /// A connection of its own for ``checkpoint()`` with background checkpoints, so that
    /// copying the WAL into the database file never runs on the writer.
    private let checkpointer: DatabaseQueue?

    /// WAL pages (4 KiB each) past which the writer checkpoints as it commits even with
    /// background checkpoints, should ``checkpoint()`` stop being called (80 MiB).
    public static let backgroundCheckpointLimit = 20_000

    /// Opens (and migrates) the database at `path`.
    /// - Parameter cardinality: The per-app, per-day limits on distinct dimension values.
    /// - Parameter backgroundCheckpoints: When `false` (the default), the writer copies the
    ///   WAL back into the database file itself once it holds 1000 pages, as part of a
    ///   commit (SQLite's default). When `true`, ``checkpoint()`` does it on a connection
    ///   of its own and should be called often (``WALCheckpointService``, every 50 ms in
    ///   `framescope serve`); the writer then checkpoints only past
    ///   ``backgroundCheckpointLimit`` pages. Either way every commit is fsynced.
    /// How many distinct values of each dimension an app may create per day.
    public let cardinality: CardinalityLimits

    public init(path: String, backgroundCheckpoints: Bool = false, cardinality: CardinalityLimits = CardinalityLimits()) throws {
        self.cardinality = cardinality
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // FULL: each commit (one group-commit flush) is fsynced before the 202 goes out,
            // so an acknowledged batch survives a power loss, not only a crash.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            if backgroundCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.backgroundCheckpointLimit)") }
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
        checkpointer = backgroundCheckpoints ? try DatabaseQueue(path: path, configuration: configuration) : nil
    }

    /// Copies the WAL's committed pages into the database file without waiting for the
    /// writer or readers (a passive checkpoint): on the checkpoint connection with
    /// background checkpoints, otherwise on the writer.
    /// - Returns: The WAL's size and how much of it is now copied, in pages (4 KiB each).
    @discardableResult
    public func checkpoint() async throws -> (walPages: Int, checkpointedPages: Int) {
        let result = if let checkpointer {
            try await checkpointer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        } else {
            try await pool.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        }
        return (result.walFrameCount, result.checkpointedFrameCount)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: apps, keys, batches, events, rollups") { db in
            try db.execute(sql: """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    revoked_at REAL
                );
                CREATE TABLE keys (
                    hash TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    kind TEXT NOT NULL CHECK (kind IN ('ingest', 'read'))
                );
                CREATE TABLE batches (
                    app_id TEXT NOT NULL,
                    batch_id TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    events INTEGER NOT NULL,
                    PRIMARY KEY (app_id, batch_id)
                );
                CREATE TABLE events (
                    id INTEGER PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    batch_id TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    started_at REAL NOT NULL,
                    screen TEXT NOT NULL,
                    app_version TEXT NOT NULL,
                    os_version TEXT NOT NULL,
                    device_model TEXT NOT NULL,
                    network TEXT NOT NULL,
                    low_power INTEGER NOT NULL,
                    payload TEXT NOT NULL
                );
                CREATE INDEX events_by_app_time ON events(app_id, started_at);
                CREATE TABLE rollups (
                    app_id TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    screen TEXT NOT NULL,
                    app_version TEXT NOT NULL,
                    os_version TEXT NOT NULL,
                    device_model TEXT NOT NULL,
                    network TEXT NOT NULL,
                    low_power INTEGER NOT NULL,
                    visits INTEGER NOT NULL,
                    report TEXT NOT NULL,
                    motion TEXT,
                    PRIMARY KEY (app_id, hour, screen, app_version, os_version, device_model, network, low_power)
                );
                """)
        }
        migrator.registerMigration("v2: rollup levels with per-visit statistics") { db in
            // Frozen: the table names as they were, not the live ones.
            for table in ["rollups_hourly", "rollups_daily", "rollups_screen_hourly", "rollups_screen_daily"] {
                try db.execute(sql: """
                    CREATE TABLE \(table) (
                        app_id TEXT NOT NULL,
                        bucket INTEGER NOT NULL,
                        screen TEXT NOT NULL,
                        app_version TEXT NOT NULL,
                        os_version TEXT NOT NULL,
                        device_model TEXT NOT NULL,
                        network TEXT NOT NULL,
                        low_power INTEGER NOT NULL,
                        visits INTEGER NOT NULL,
                        report BLOB NOT NULL,
                        motion BLOB,
                        stats BLOB NOT NULL,
                        PRIMARY KEY (app_id, bucket, screen, app_version, os_version, device_model, network, low_power)
                    ) WITHOUT ROWID
                    """)
            }
            try db.execute(sql: "CREATE INDEX events_by_start ON events(started_at)")
        }
        migrator.registerMigration("v3: device sketches in rollups; v1 rollups carried over") { db in
            // Frozen code of its own (Migrations/MigrationV3.swift), streaming v1's rows.
            try MigrationV3.run(db)
        }
        migrator.registerMigration("v4: event indexes that grow at their end") { db in
            // Indexed by exact start time, every new event landed at a random place among
            // recent start times and dirtied an index page of its own, in each of two
            // indexes: about 300 of the 390 pages a 100-event commit wrote. Keyed by app,
            // or by the start's hour, a new event goes to the end of its key's range
            // (entries with equal keys are in rowid order), so a commit dirties a few pages.
            try db.execute(sql: """
                DROP INDEX events_by_app_time;
                DROP INDEX events_by_start;
                CREATE INDEX events_by_app ON events(app_id);
                CREATE INDEX events_by_start_hour ON events(CAST(started_at / 3600 AS INTEGER));
                """)
        }
        migrator.registerMigration("v5: key expiry, dashboard sessions, batch ledger by receipt") { db in
            try db.execute(sql: """
                ALTER TABLE keys ADD COLUMN expires_at REAL;
                CREATE TABLE sessions (
                    hash TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    key_hash TEXT NOT NULL,
                    csrf TEXT NOT NULL,
                    expires_at REAL NOT NULL
                );
                CREATE INDEX sessions_by_key ON sessions(key_hash);
                CREATE INDEX batches_by_received ON batches(received_at);
                """)
        }
        migrator.registerMigration("v6: distinct dimension values per app and day") { db in
            try db.execute(sql: """
                CREATE TABLE dimension_values (
                    app_id TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    dimension TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (app_id, day, dimension, value)
                ) WITHOUT ROWID;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'screen', screen FROM rollups_daily;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'appVersion', app_version FROM rollups_daily;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'osVersion', os_version FROM rollups_daily;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'deviceModel', device_model FROM rollups_daily;
                """)
        }
        return migrator
    }

    // MARK: Apps and keys

    /// Inserts the app and the SHA-256 hashes of two fresh keys in one transaction; fails if the id exists.
    public func createApp(name: String, id: String?) async throws -> AppCredentials {
        let appId = id ?? Self.slug(name)
        let credentials = AppCredentials(app: appId, name: name, ingestKey: Self.newKey(.ingest), readKey: Self.newKey(.read))
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO apps (id, name, created_at) VALUES (?, ?, ?)", arguments: [appId, name, Date().timeIntervalSince1970])
            try Self.insertKeys(credentials, db)
        }
        return credentials
    }

    /// Deletes the app's key hashes, clears a revocation and stores two fresh keys; `nil` for an unknown app.
    public func rotateKeys(app: String) async throws -> AppCredentials? {
        try await pool.write { db in
            guard let name = try String.fetchOne(db, sql: "SELECT name FROM apps WHERE id = ?", arguments: [app]) else { return nil }
            try db.execute(sql: "DELETE FROM keys WHERE app_id = ?", arguments: [app])
            try db.execute(sql: "DELETE FROM sessions WHERE app_id = ?", arguments: [app])
            try db.execute(sql: "UPDATE apps SET revoked_at = NULL WHERE id = ?", arguments: [app])
            let credentials = AppCredentials(app: app, name: name, ingestKey: Self.newKey(.ingest), readKey: Self.newKey(.read))
            try Self.insertKeys(credentials, db)
            return credentials
        }
    }

    /// Every app, by id.
    public func apps() async throws -> [AppRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, created_at, revoked_at FROM apps ORDER BY id").map { row in
                AppRecord(app: row["id"], name: row["name"], createdAt: ISO8601.format(unixSeconds: row["created_at"]),
                          revoked: (row["revoked_at"] as Double?) != nil)
            }
        }
    }

    /// Marks the app revoked and deletes its key hashes and dashboard sessions; its data stays.
    public func revokeApp(_ id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE apps SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [Date().timeIntervalSince1970, id])
            let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [id]) ?? false
            if exists {
                try db.execute(sql: "DELETE FROM keys WHERE app_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM sessions WHERE app_id = ?", arguments: [id])
            }
            return exists
        }
    }

    /// Looks the key's SHA-256 up among unrevoked apps' keys that have not expired (an
    /// old ingest key in its grace period after a rotation still works).
    public func authenticate(key: String) async throws -> KeyGrant? {
        let hash = Self.hash(key)
        let now = Date().timeIntervalSince1970
        return try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT keys.hash, keys.app_id, keys.kind FROM keys JOIN apps ON apps.id = keys.app_id
                WHERE keys.hash = ? AND apps.revoked_at IS NULL AND (keys.expires_at IS NULL OR keys.expires_at > ?)
                """, arguments: [hash, now]) else { return nil }
            let stored: String = row["hash"]
            // The lookup is by hash; compare the digests in constant time all the same.
            guard Self.constantTimeEqual(stored, hash), let kind = KeyGrant.Kind(rawValue: row["kind"]) else { return nil }
            return KeyGrant(app: row["app_id"], kind: kind)
        }
    }

    // MARK: Ingest

    /// Merges the batches' events per hourly rollup key in memory, then in one write
    /// transaction records each new batch id, appends its raw events and upserts the
    /// rollups of every level; a known batch id writes nothing.
    public func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult] {
        let cache = rowCache
        return try await pool.write { db in
            db.afterNextTransaction(onCommit: { _ in cache.commit() }, onRollback: { _ in cache.rollback() })
            var results: [IngestResult] = []
            var seen: Set<[String]> = []
            let batchKnown = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM batches WHERE app_id = ? AND batch_id = ?)")
            let insertBatch = try db.cachedStatement(sql: "INSERT INTO batches (app_id, batch_id, received_at, events) VALUES (?, ?, ?, ?)")
            let insertEvent = try db.cachedStatement(sql: """
                INSERT INTO events (app_id, batch_id, received_at, started_at, screen, app_version, os_version, device_model, network, low_power, payload)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var groups: [String: [RollupKey: RollupValue]] = [:]
            var gate = CardinalityGate(limits: self.cardinality)
            for batch in batches {
                let id = [batch.app, batch.batchId]
                let known = try seen.contains(id) || (Bool.fetchOne(batchKnown, arguments: [batch.app, batch.batchId]) ?? false)
                if known {
                    results.append(IngestResult(stored: 0, duplicate: true))
                    continue
                }
                seen.insert(id)
                try insertBatch.execute(arguments: [batch.app, batch.batchId, batch.receivedAt, batch.events.count])
                let foldedBefore = gate.folded[batch.app] ?? [:]
                for (index, (event, startedAt)) in batch.events.enumerated() {
                    // Values past the app's daily limits fold into "(other)" (CardinalityLimits).
                    let day = RollupLevel.floor(Int64(startedAt.rounded(.down)), to: 86_400)
                    let screen = try gate.admit(event.screen, app: batch.app, day: day, dimension: "screen", db)
                    let appVersion = try gate.admit(batch.appVersion, app: batch.app, day: day, dimension: "appVersion", db)
                    let osVersion = try gate.admit(batch.osVersion, app: batch.app, day: day, dimension: "osVersion", db)
                    let deviceModel = try gate.admit(batch.deviceModel, app: batch.app, day: day, dimension: "deviceModel", db)
                    try insertEvent.execute(arguments: [batch.app, batch.batchId, batch.receivedAt, startedAt, screen, appVersion,
                                                        osVersion, deviceModel, event.context.network.rawValue, event.context.lowPowerMode,
                                                        batch.rawEvents[index]])
                    let key = RollupKey(bucketStart: RollupLevel.floor(Int64(startedAt.rounded(.down)), to: 3600), screen: screen,
                                        appVersion: appVersion, osVersion: osVersion, deviceModel: deviceModel,
                                        network: event.context.network.rawValue, lowPower: event.context.lowPowerMode)
                    groups[batch.app, default: [:]][key, default: RollupValue()].merge(RollupValue(visit: event, installationId: batch.installationId))
                }
                var folded: [String: Int] = [:]
                for (dimension, count) in gate.folded[batch.app] ?? [:] where count > foldedBefore[dimension] ?? 0 {
                    folded[dimension] = count - (foldedBefore[dimension] ?? 0)
                }
                results.append(IngestResult(stored: batch.events.count, duplicate: false, folded: folded))
            }
            for (app, values) in groups {
                for level in RollupLevel.allCases {
                    for (key, value) in level.regroup(values) {
                        try Self.upsert(level, app: app, key: key, adding: value, db, cache: cache)
                    }
                }
            }
            return results
        }
    }

    /// Adds `value` to the row of `key` in `level`'s table (read, merge, write).
    /// - Parameter cache: Rows as last committed; a hit skips the read and decode, and the
    ///   merged row is staged for the cache when the transaction commits.
    static func upsert(_ level: RollupLevel, app: String, key: RollupKey, adding value: RollupValue, _ db: Database,
                       cache: RollupRowCache? = nil) throws {
        let table = tableName(level)
        let keyArguments: StatementArguments = [app, key.bucketStart, key.screen, key.appVersion, key.osVersion, key.deviceModel, key.network, key.lowPower]
        var merged = value
        let cacheKey = RollupRowCache.Key(level: level, app: app, key: key)
        if var cached = cache?.lookup(cacheKey) {
            cached.merge(value)
            merged = cached
        } else {
            let select = try db.cachedStatement(sql: """
                SELECT visits, report, motion, stats, devices FROM \(table) WHERE app_id = ? AND bucket = ? AND screen = ? AND app_version = ?
                AND os_version = ? AND device_model = ? AND network = ? AND low_power = ?
                """)
            if let row = try Row.fetchOne(select, arguments: keyArguments) {
                var stored = try decodeValue(row)
                stored.merge(value)
                merged = stored
            }
        }
        cache?.stage(cacheKey, merged)
        let report = Data(merged.report.binaryEncoded())
        let motion = merged.motion.map { Data($0.binaryEncoded()) }
        let stats = Data(merged.statistics.binaryEncoded())
        let devices = merged.devices.storedBytes().map { Data($0) }
        try db.cachedStatement(sql: """
            INSERT INTO \(table) (app_id, bucket, screen, app_version, os_version, device_model, network, low_power, visits, report, motion, stats, devices)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, bucket, screen, app_version, os_version, device_model, network, low_power)
            DO UPDATE SET visits = excluded.visits, report = excluded.report, motion = excluded.motion, stats = excluded.stats, devices = excluded.devices
            """).execute(arguments: keyArguments + [merged.visits, report, motion, stats, devices])
    }

    /// A rollup value from a row's `visits` and binary `report`, `motion` and `stats` columns.
    static func decodeValue(_ row: Row) throws -> RollupValue {
        let report = try FrameReport(binary: row["report"] as Data)
        let motion = try (row["motion"] as Data?).map { try FrameReport(binary: $0) }
        let statistics = try VisitStatistics(binary: [UInt8](row["stats"] as Data))
        let devices = try (row["devices"] as Data?).map { try DeviceSketch(storedBytes: [UInt8]($0)) } ?? DeviceSketch()
        return RollupValue(visits: row["visits"], report: report, motion: motion, statistics: statistics, devices: devices)
    }

    /// The table that holds `level`.
    static func tableName(_ level: RollupLevel) -> String {
        switch level {
        case .hourly: "rollups_hourly"
        case .daily: "rollups_daily"
        case .screenHourly: "rollups_screen_hourly"
        case .screenDaily: "rollups_screen_daily"
        }
    }

    /// Writes precomputed rollups straight into every level, as if the visits they sum
    /// had been ingested (without raw events): for benchmarks over very large data.
    public func addRollups(app: String, hourly values: [RollupKey: RollupValue]) async throws {
        let cache = rowCache
        try await pool.write { db in
            // Rows written here bypass the cache; drop what it holds once they commit.
            db.afterNextTransaction(onCommit: { _ in cache.rollback() }, onRollback: { _ in cache.rollback() })
            for level in RollupLevel.allCases {
                for (key, value) in level.regroup(values) { try Self.upsert(level, app: app, key: key, adding: value, db) }
            }
        }
    }

    // MARK: Queries

    /// Plans the reads (``RollupRead/plan(for:)``), selects their rows and merges them
    /// per group in Swift.
    public func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate] {
        let filter = query.filter
        var statements: [(sql: String, arguments: StatementArguments, level: RollupLevel)] = []
        for read in RollupRead.plan(for: query) {
            var sql = "SELECT bucket, screen, app_version, os_version, device_model, network, low_power, visits, report, motion, stats, devices FROM \(Self.tableName(read.level)) WHERE app_id = ? AND bucket >= ? AND bucket < ?"
            var arguments: StatementArguments = [app, read.from, read.to]
            if let screen = filter.screen { sql += " AND screen = ?"; arguments += [screen] }
            if read.level.keepsDimensions {
                for (column, value) in [("app_version", filter.appVersion), ("os_version", filter.osVersion), ("device_model", filter.deviceModel), ("network", filter.network)] {
                    if let value { sql += " AND \(column) = ?"; arguments += [value] }
                }
                if let lowPower = filter.lowPower { sql += " AND low_power = ?"; arguments += [lowPower] }
            }
            statements.append((sql, arguments, read.level))
        }
        let planned = statements
        struct GroupKey: Hashable { var screen: String?; var bucket: Double?; var dimension: String? }
        let groups: [GroupKey: RollupValue] = try await pool.read { db in
            var groups: [GroupKey: RollupValue] = [:]
            for statement in planned {
                let rows = try Row.fetchCursor(db, sql: statement.sql, arguments: statement.arguments)
                while let row = try rows.next() {
                    let key = RollupKey(bucketStart: row["bucket"], screen: row["screen"], appVersion: row["app_version"], osVersion: row["os_version"],
                                        deviceModel: row["device_model"], network: row["network"], lowPower: row["low_power"])
                    let group = GroupKey(screen: query.byScreen ? key.screen : nil,
                                         bucket: query.interval.map { Double(RollupLevel.floor(key.bucketStart, to: Int64($0.seconds))) },
                                         dimension: query.dimension.map { key.value(of: $0) })
                    groups[group, default: RollupValue()].merge(try Self.decodeValue(row))
                }
            }
            return groups
        }
        return groups.map { RollupAggregate(screen: $0.key.screen, bucketStart: $0.key.bucket, dimensionValue: $0.key.dimension, rollup: $0.value) }
            .sorted { ($0.bucketStart ?? 0, $0.screen ?? "", $0.dimensionValue ?? "") < ($1.bucketStart ?? 0, $1.screen ?? "", $1.dimensionValue ?? "") }
    }

    /// `SELECT DISTINCT` over the daily rollups, without decoding any report.
    public func dimensionValues(app: String, dimension: RollupDimension, from: Double, to: Double) async throws -> [String] {
        let column = switch dimension {
        case .appVersion: "app_version"
        case .osVersion: "os_version"
        case .deviceModel: "device_model"
        case .network: "network"
        case .lowPower: "low_power"
        }
        let dayFrom = RollupLevel.floor(Int64(from.rounded(.down)), to: 86_400)
        let end = Int64(to.rounded(.up))
        return try await pool.read { db in
            if dimension == .lowPower {
                return try Bool.fetchAll(db, sql: "SELECT DISTINCT low_power FROM rollups_daily WHERE app_id = ? AND bucket >= ? AND bucket < ? ORDER BY 1",
                                         arguments: [app, dayFrom, end]).map { $0 ? "true" : "false" }
            }
            return try String.fetchAll(db, sql: "SELECT DISTINCT \(column) FROM rollups_daily WHERE app_id = ? AND bucket >= ? AND bucket < ? ORDER BY 1",
                                       arguments: [app, dayFrom, end])
        }
    }

    /// `SELECT COUNT(*)` over the app's raw events.
    public func rawEventCount(app: String) async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events WHERE app_id = ?", arguments: [app]) ?? 0 }
    }

    /// Deletes up to `limit` raw events that started before `cutoff`, oldest hours first,
    /// in one transaction. The walk follows `events_by_start_hour`; a cutoff on a whole
    /// hour (as ``RetentionService`` passes) reads no event it keeps.
    public func deleteRawEvents(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        // SQLite's CAST truncates toward zero, as Int64(_:) does.
        let cutoffHour = Int64(cutoff / 3600)
        let onWholeHour = cutoff > 0 && Double(cutoffHour) * 3600 == cutoff
        // The hours to walk: those before the cutoff's hour, and that hour too when the
        // cutoff falls inside it (`started_at < cutoff` then picks within it).
        let lastHour = onWholeHour ? cutoffHour : cutoffHour + 1
        return try await pool.write { db in
            try db.execute(sql: """
                DELETE FROM events WHERE id IN (
                    SELECT id FROM events
                    WHERE CAST(started_at / 3600 AS INTEGER) < ? AND started_at < ?
                    ORDER BY CAST(started_at / 3600 AS INTEGER) LIMIT ?)
                """, arguments: [lastHour, cutoff, limit])
            return db.changesCount
        }
    }

    // MARK: Helpers

    static func insertKeys(_ credentials: AppCredentials, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO keys (hash, app_id, kind) VALUES (?, ?, 'ingest'), (?, ?, 'read')",
                       arguments: [hash(credentials.ingestKey), credentials.app, hash(credentials.readKey), credentials.app])
    }

    /// A new random key: `fsi_` (ingest) or `fsr_` (read) and 48 hex digits (192 bits).
    static func newKey(_ kind: KeyGrant.Kind) -> String {
        var generator = SystemRandomNumberGenerator()
        return (kind == .ingest ? "fsi_" : "fsr_") + hex((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// SHA-256 of a key, hex.
    static func hash(_ key: String) -> String {
        hex(Array(SHA256.hash(data: Data(key.utf8))))
    }

    /// Bytes as lower-case hexadecimal, two digits each.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        FramescopeCollector.constantTimeEqual(Array(a.utf8), Array(b.utf8))
    }

    /// An app id from a name: lower-case letters, digits and dashes.
    static func slug(_ name: String) -> String {
        var result = ""
        for character in name.lowercased() {
            if character.isASCII && (character.isLetter || character.isNumber) { result.append(character) }
            else if !result.hasSuffix("-") && !result.isEmpty { result.append("-") }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return result.isEmpty ? "app" : String(result.prefix(40))
    }
}

/// Rollup rows as this process last committed them, so that an upsert of a hot row (this
/// hour's, today's) skips reading and decoding it.
///
/// Touched only on GRDB's writer queue: inside write transactions and in their commit and
/// rollback hooks, which GRDB runs on that same serial queue. That serialisation is what
/// makes the unchecked `Sendable` safe. Rows merged in a transaction are staged and enter
/// the cache only when it commits; a rollback empties the cache. It assumes this process
/// is the only writer of the rollups, as one collector per database file is.
final class RollupRowCache: @unchecked Sendable {
    struct Key: Hashable {
        var level: RollupLevel
        var app: String
        var key: RollupKey
    }

    private var rows: [Key: RollupValue] = [:]
    private var staged: [Key: RollupValue] = [:]
    private var bytes = 0
    private let capacity: Int
    private let capacityBytes: Int

    /// A cache of at most `capacity` rows holding at most `capacityBytes`
    /// (``RollupValue/approximateBytes``); emptied whole when full, as hot rows come back at once.
    init(capacity: Int, capacityBytes: Int = 64 << 20) {
        self.capacity = capacity
        self.capacityBytes = capacityBytes
    }

    func lookup(_ key: Key) -> RollupValue? {
        staged[key] ?? rows[key]
    }

    func stage(_ key: Key, _ value: RollupValue) {
        staged[key] = value
    }

    func commit() {
        let stagedBytes = staged.values.reduce(0) { $0 &+ $1.approximateBytes }
        if rows.count &+ staged.count > capacity || bytes &+ stagedBytes > capacityBytes {
            rows.removeAll(keepingCapacity: true)
            bytes = 0
        }
        for (key, value) in staged {
            if let old = rows.updateValue(value, forKey: key) { bytes = bytes &- old.approximateBytes }
            bytes = bytes &+ value.approximateBytes
        }
        staged.removeAll(keepingCapacity: true)
        if bytes > capacityBytes {
            // One transaction staged more than the whole budget: keep none of it.
            rows.removeAll()
            bytes = 0
        }
    }

    /// Rows and bytes held, for tests and metrics.
    var usage: (rows: Int, bytes: Int) { (rows.count, bytes) }

    func rollback() {
        staged.removeAll()
        rows.removeAll()
        bytes = 0
    }
}
