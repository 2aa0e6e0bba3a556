import Foundation
import FramescopeStore
import GRDB

/// Key rotation, dashboard sessions and the pruning of access records.
extension SQLiteStore {
    /// Replaces one kind of an app's key with a fresh one and returns it; `nil` for an
    /// unknown or revoked app.
    ///
    /// What happens to the app's other keys is ``KeyRotation``'s rule: a new ingest key
    /// leaves the old ones working for `gracePeriod` seconds (0 ends them now); a new read
    /// key ends the old read keys and every dashboard session at once; a new admin key ends
    /// the old admin keys at once; keys whose grace period is over go. One transaction.
    public func rotateKey(app: String, kind: KeyGrant.Kind, gracePeriod: Double, now: Double) async throws -> String? {
        let key = AccessKeys.newKey(kind)
        let found = try await database.write { db -> Bool in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ? AND revoked_at IS NULL)", arguments: [app]) ?? false else {
                return false
            }
            if KeyRotation.endsSessions(rotating: kind) {
                try db.execute(sql: "DELETE FROM sessions WHERE app_id = ?", arguments: [app])
            }
            for row in try Row.fetchAll(db, sql: "SELECT hash, kind, expires_at FROM keys WHERE app_id = ?", arguments: [app]) {
                guard let stored = KeyGrant.Kind(rawValue: row["kind"]) else { continue }
                let hash: String = row["hash"]
                switch KeyRotation.fate(of: StoredKeyState(kind: stored, expiresAt: row["expires_at"]), rotating: kind, gracePeriod: gracePeriod, now: now) {
                case .keep: break
                case .expire(let end): try db.execute(sql: "UPDATE keys SET expires_at = ? WHERE hash = ?", arguments: [end, hash])
                case .remove: try db.execute(sql: "DELETE FROM keys WHERE hash = ?", arguments: [hash])
                }
            }
            try db.execute(sql: "INSERT INTO keys (hash, app_id, kind) VALUES (?, ?, ?)", arguments: [AccessKeys.hash(key), app, kind.rawValue])
            return true
        }
        return found ? key : nil
    }

    /// Opens a dashboard session for `readKey` when it is a live read key; `nil` otherwise.
    public func createSession(readKey: String, lifetime: Double, now: Double) async throws -> DashboardSession? {
        let keyHash = AccessKeys.hash(readKey)
        let session = DashboardSession(id: Self.randomToken(), app: "", csrfToken: Self.randomToken(), expiresAt: now + lifetime)
        let app = try await database.write { db -> String? in
            guard let grant = KeyRotation.grant(for: try Self.keyRecord(hash: keyHash, db), presentedHash: keyHash, now: now),
                  grant.kind == .read else { return nil }
            let app = grant.app
            try db.execute(sql: "INSERT INTO sessions (hash, app_id, key_hash, csrf, expires_at) VALUES (?, ?, ?, ?, ?)",
                           arguments: [AccessKeys.hash(session.id), app, keyHash, session.csrfToken, session.expiresAt])
            return app
        }
        guard let app else { return nil }
        var opened = session
        opened.app = app
        return opened
    }

    /// The grant of a live session: not expired, its read key still in place, its app not revoked.
    public func session(id: String, now: Double) async throws -> SessionGrant? {
        let hash = AccessKeys.hash(id)
        return try await database.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT sessions.app_id, sessions.csrf FROM sessions
                JOIN keys ON keys.hash = sessions.key_hash
                JOIN apps ON apps.id = sessions.app_id
                WHERE sessions.hash = ? AND sessions.expires_at > ? AND apps.revoked_at IS NULL
                """, arguments: [hash, now]) else { return nil }
            return SessionGrant(app: row["app_id"], csrfToken: row["csrf"])
        }
    }

    /// Ends a session (sign-out).
    public func deleteSession(id: String) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE hash = ?", arguments: [AccessKeys.hash(id)])
        }
    }

    /// Forgets batch ids received before `cutoff` (at most `limit` of them), the distinct
    /// dimension values of days before it (and, from the cardinality window, values last
    /// used before it), expired sessions and keys whose grace period is
    /// over; returns how many batch ids went.
    public func pruneAccessRecords(batchesReceivedBefore cutoff: Double, now: Double, limit: Int) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: """
                DELETE FROM batches WHERE rowid IN (SELECT rowid FROM batches WHERE received_at < ? ORDER BY received_at LIMIT ?)
                """, arguments: [cutoff, limit])
            let batches = db.changesCount
            try db.execute(sql: "DELETE FROM sessions WHERE expires_at <= ?", arguments: [now])
            try db.execute(sql: "DELETE FROM keys WHERE expires_at IS NOT NULL AND expires_at <= ?", arguments: [now])
            // Days no event can land on any more (events start at most 30 days back).
            let day = Int64((cutoff / 86_400).rounded(.down)) * 86_400
            try db.execute(sql: "DELETE FROM dimension_values WHERE day < ?", arguments: [day])
            // Values the app has not used since: they leave the cardinality window.
            try db.execute(sql: "DELETE FROM dimension_window WHERE last_day < ?", arguments: [day])
            return batches
        }
    }

    /// 192 random bits in hex, for session ids and CSRF tokens.
    static func randomToken() -> String { AccessTokens.random() }
}
