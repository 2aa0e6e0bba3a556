import Crypto
import Foundation
import FramescopeCore
import GRDB

/// The embedded store: one SQLite file in WAL mode, through GRDB.
///
/// Raw events are appended to `events`; hourly rollups keyed by app × hour × screen ×
/// app version × OS version × device model × network × low-power mode hold the merged
/// mergeable reports. A batch's events and its rollup updates commit in one transaction,
/// so a batch is either counted whole or not at all. Schema changes are migrations,
/// appended and never edited.
public final class SQLiteStore: CollectorStore {
    private let pool: DatabasePool

    /// Opens (and migrates) the database at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
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

    /// Marks the app revoked and deletes its key hashes; its data stays.
    public func revokeApp(_ id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE apps SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [Date().timeIntervalSince1970, id])
            let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [id]) ?? false
            if exists { try db.execute(sql: "DELETE FROM keys WHERE app_id = ?", arguments: [id]) }
            return exists
        }
    }

    /// Looks the key's SHA-256 up among unrevoked apps' keys.
    public func authenticate(key: String) async throws -> KeyGrant? {
        let hash = Self.hash(key)
        return try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT keys.hash, keys.app_id, keys.kind FROM keys JOIN apps ON apps.id = keys.app_id
                WHERE keys.hash = ? AND apps.revoked_at IS NULL
                """, arguments: [hash]) else { return nil }
            let stored: String = row["hash"]
            // The lookup is by hash; compare the digests in constant time all the same.
            guard Self.constantTimeEqual(stored, hash), let kind = KeyGrant.Kind(rawValue: row["kind"]) else { return nil }
            return KeyGrant(app: row["app_id"], kind: kind)
        }
    }

    // MARK: Ingest

    /// Merges the batch per rollup key in memory, then in one write transaction records the batch id,
    /// appends the raw events and upserts each rollup; a known batch id writes nothing.
    public func ingest(_ batch: IngestBatch) async throws -> IngestResult {
        // Merge the batch's events per rollup key before touching the database.
        var groups: [RollupKey: (visits: Int, report: FrameReport, motion: FrameReport?)] = [:]
        for (event, startedAt) in batch.events {
            let key = RollupKey(hour: Int64((startedAt / 3600).rounded(.down)) * 3600, screen: event.screen, appVersion: batch.appVersion,
                                osVersion: batch.osVersion, deviceModel: batch.deviceModel, network: event.context.network.rawValue,
                                lowPower: event.context.lowPowerMode)
            var group = groups[key] ?? (0, FrameReport(), nil)
            group.visits += 1
            group.report.merge(event.report)
            if let motion = event.motion { group.motion = (group.motion ?? FrameReport()).merging(motion) }
            groups[key] = group
        }
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let merged = groups
        return try await pool.write { db in
            let known = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM batches WHERE app_id = ? AND batch_id = ?)",
                                          arguments: [batch.app, batch.batchId]) ?? false
            if known { return IngestResult(stored: 0, duplicate: true) }
            try db.execute(sql: "INSERT INTO batches (app_id, batch_id, received_at, events) VALUES (?, ?, ?, ?)",
                           arguments: [batch.app, batch.batchId, batch.receivedAt, batch.events.count])
            let insert = try db.cachedStatement(sql: """
                INSERT INTO events (app_id, batch_id, received_at, started_at, screen, app_version, os_version, device_model, network, low_power, payload)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (index, (event, startedAt)) in batch.events.enumerated() {
                try insert.execute(arguments: [batch.app, batch.batchId, batch.receivedAt, startedAt, event.screen, batch.appVersion,
                                               batch.osVersion, batch.deviceModel, event.context.network.rawValue, event.context.lowPowerMode,
                                               batch.rawEvents[index]])
            }
            for (key, group) in merged {
                let arguments: StatementArguments = [batch.app, key.hour, key.screen, key.appVersion, key.osVersion, key.deviceModel, key.network, key.lowPower]
                var report = group.report
                var motion = group.motion
                var visits = group.visits
                if let row = try Row.fetchOne(db, sql: """
                    SELECT visits, report, motion FROM rollups WHERE app_id = ? AND hour = ? AND screen = ? AND app_version = ?
                    AND os_version = ? AND device_model = ? AND network = ? AND low_power = ?
                    """, arguments: arguments) {
                    visits += row["visits"] as Int
                    report = try decoder.decode(FrameReport.self, from: Data((row["report"] as String).utf8)).merging(report)
                    if let stored = row["motion"] as String? {
                        let storedMotion = try decoder.decode(FrameReport.self, from: Data(stored.utf8))
                        motion = motion.map { storedMotion.merging($0) } ?? storedMotion
                    }
                }
                let reportText = String(decoding: try encoder.encode(report), as: UTF8.self)
                let motionText = try motion.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
                try db.execute(sql: """
                    INSERT INTO rollups (app_id, hour, screen, app_version, os_version, device_model, network, low_power, visits, report, motion)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, hour, screen, app_version, os_version, device_model, network, low_power)
                    DO UPDATE SET visits = excluded.visits, report = excluded.report, motion = excluded.motion
                    """, arguments: arguments + [visits, reportText, motionText])
            }
            return IngestResult(stored: batch.events.count, duplicate: false)
        }
    }

    // MARK: Queries

    /// Selects the matching hourly rollups and merges them per screen, in Swift.
    public func screens(app: String, query: ScreenQuery) async throws -> [ScreenSummary] {
        var sql = "SELECT screen, visits, report, motion FROM rollups WHERE app_id = ? AND hour >= ? AND hour < ?"
        var arguments: StatementArguments = [app, Int64((query.from / 3600).rounded(.down)) * 3600, query.to]
        for (column, value) in [("app_version", query.appVersion), ("os_version", query.osVersion), ("device_model", query.deviceModel), ("network", query.network)] {
            if let value { sql += " AND \(column) = ?"; arguments += [value] }
        }
        if let lowPower = query.lowPower { sql += " AND low_power = ?"; arguments += [lowPower] }
        let rows = try await pool.read { db in try Row.fetchAll(db, sql: sql, arguments: arguments) }
        let decoder = JSONDecoder()
        var summaries: [String: ScreenSummary] = [:]
        for row in rows {
            let screen: String = row["screen"]
            let report = try decoder.decode(FrameReport.self, from: Data((row["report"] as String).utf8))
            let motion = try (row["motion"] as String?).map { try decoder.decode(FrameReport.self, from: Data($0.utf8)) }
            var summary = summaries[screen] ?? ScreenSummary(screen: screen, visits: 0, report: FrameReport(), motion: nil)
            summary.visits += row["visits"] as Int
            summary.report.merge(report)
            if let motion { summary.motion = (summary.motion ?? FrameReport()).merging(motion) }
            summaries[screen] = summary
        }
        return summaries.values.sorted { $0.screen < $1.screen }
    }

    /// `SELECT COUNT(*)` over the app's raw events.
    public func rawEventCount(app: String) async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events WHERE app_id = ?", arguments: [app]) ?? 0 }
    }

    // MARK: Helpers

    struct RollupKey: Hashable {
        var hour: Int64
        var screen: String
        var appVersion: String
        var osVersion: String
        var deviceModel: String
        var network: String
        var lowPower: Bool
    }

    private static func insertKeys(_ credentials: AppCredentials, _ db: Database) throws {
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
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
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
