import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Apps and their keys: creation, listing, revocation, authentication (the key material,
/// random keys and their SHA-256 hashes, is ``AccessKeys``).
extension SQLiteStore {
    /// Inserts the app and the SHA-256 hashes of three fresh keys (ingest, read, admin) in
    /// one transaction; fails if the id exists.
    public func createApp(name: String, id: String?) async throws -> AppCredentials {
        let appId = id ?? AccessKeys.slug(name)
        let credentials = AccessKeys.newCredentials(app: appId, name: name)
        try await database.write { db in
            try db.execute(sql: "INSERT INTO apps (id, name, created_at) VALUES (?, ?, ?)", arguments: [appId, name, Date().timeIntervalSince1970])
            try Self.insertKeys(credentials, db)
        }
        return credentials
    }

    /// Deletes the app's key hashes, clears a revocation and stores three fresh keys; `nil` for an unknown app.
    public func rotateKeys(app: String) async throws -> AppCredentials? {
        try await database.write { db in
            guard let name = try String.fetchOne(db, sql: "SELECT name FROM apps WHERE id = ?", arguments: [app]) else { return nil }
            try db.execute(sql: "DELETE FROM keys WHERE app_id = ?", arguments: [app])
            try db.execute(sql: "DELETE FROM sessions WHERE app_id = ?", arguments: [app])
            try db.execute(sql: "UPDATE apps SET revoked_at = NULL WHERE id = ?", arguments: [app])
            let credentials = AccessKeys.newCredentials(app: app, name: name)
            try Self.insertKeys(credentials, db)
            return credentials
        }
    }

    /// Every app, by id.
    public func apps() async throws -> [AppRecord] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, created_at, revoked_at FROM apps ORDER BY id").map { row in
                AppRecord(app: row["id"], name: row["name"], createdAt: ISO8601.format(unixSeconds: row["created_at"]),
                          revoked: (row["revoked_at"] as Double?) != nil)
            }
        }
    }

    /// Marks the app revoked and deletes its key hashes and dashboard sessions; its data stays.
    public func revokeApp(_ id: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "UPDATE apps SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [Date().timeIntervalSince1970, id])
            let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [id]) ?? false
            if exists {
                try db.execute(sql: "DELETE FROM keys WHERE app_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM sessions WHERE app_id = ?", arguments: [id])
            }
            return exists
        }
    }

    /// Looks the key's SHA-256 up and grants what ``KeyRotation/grant(for:presentedHash:now:)``
    /// allows: a key of an unrevoked app that has not expired (an old ingest key in its
    /// grace period after a rotation still works).
    public func authenticate(key: String, now: Double) async throws -> KeyGrant? {
        let hash = AccessKeys.hash(key)
        return try await database.read { db in
            KeyRotation.grant(for: try Self.keyRecord(hash: hash, db), presentedHash: hash, now: now)
        }
    }

    /// The key record stored under `hash`, with its app's revocation; `nil` when there is
    /// none (or its kind is not one this collector knows).
    static func keyRecord(hash: String, _ db: Database) throws -> StoredKeyRecord? {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT keys.hash, keys.app_id, keys.kind, keys.expires_at, apps.revoked_at IS NOT NULL AS revoked
            FROM keys JOIN apps ON apps.id = keys.app_id WHERE keys.hash = ?
            """, arguments: [hash]), let kind = KeyGrant.Kind(rawValue: row["kind"]) else { return nil }
        return StoredKeyRecord(hash: row["hash"], app: row["app_id"], state: StoredKeyState(kind: kind, expiresAt: row["expires_at"]),
                               appRevoked: row["revoked"])
    }

    /// Inserts the SHA-256 hashes of `credentials`' three keys for its app.
    static func insertKeys(_ credentials: AppCredentials, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO keys (hash, app_id, kind) VALUES (?, ?, 'ingest'), (?, ?, 'read'), (?, ?, 'admin')",
                       arguments: [AccessKeys.hash(credentials.ingestKey), credentials.app, AccessKeys.hash(credentials.readKey), credentials.app,
                                   AccessKeys.hash(credentials.adminKey), credentials.app])
    }
}
