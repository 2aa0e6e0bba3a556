import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Declared tag keys (``DeclaredTags``): the `app_tag_keys` table and the tag rollups'
/// value lists.
extension SQLiteStore {
    /// The `app_tag_keys` rows of `app`, by key; `nil` for an unknown app.
    public func tagKeys(app: String) async throws -> [DeclaredTagKey]? {
        try await database.read { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [app]) ?? false else { return nil }
            return try Row.fetchAll(db, sql: "SELECT tag_key, declared_at FROM app_tag_keys WHERE app_id = ? ORDER BY tag_key", arguments: [app])
                .map { DeclaredTagKey(key: $0["tag_key"], declaredAt: $0["declared_at"]) }
        }
    }

    /// Inserts the key unless the app has it or already has ``DeclaredTags/maximumKeys``.
    public func declareTagKey(app: String, key: String, now: Double) async throws -> Bool? {
        let key = CanonicalText.nfc(key)
        if let error = DeclaredTags.declarationError(key: key) { throw error }
        return try await database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [app]) ?? false else { return nil }
            let keys = try String.fetchAll(db, sql: "SELECT tag_key FROM app_tag_keys WHERE app_id = ?", arguments: [app])
            if keys.contains(key) { return false }
            guard keys.count < DeclaredTags.maximumKeys else { throw DeclaredTags.tooManyKeysError(app: app, keys: keys) }
            try db.execute(sql: "INSERT INTO app_tag_keys (app_id, tag_key, declared_at) VALUES (?, ?, ?)", arguments: [app, key, now])
            return true
        }
    }

    /// Deletes the key's row; its rollup rows stay.
    public func removeTagKey(app: String, key: String) async throws -> Bool {
        let key = CanonicalText.nfc(key)
        return try await database.write { db in
            try db.execute(sql: "DELETE FROM app_tag_keys WHERE app_id = ? AND tag_key = ?", arguments: [app, key])
            return db.changesCount > 0
        }
    }

    /// `SELECT DISTINCT tag_value` over the tag's daily rollups.
    public func tagValues(app: String, key: String, from: Double, to: Double) async throws -> [String] {
        let dayFrom = RollupLevel.floor(Int64(from.rounded(.down)), to: 86_400)
        let end = Int64(to.rounded(.up))
        return try await database.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT tag_value FROM rollups_tag_daily WHERE app_id = ? AND tag_key = ? AND bucket >= ? AND bucket < ? ORDER BY 1",
                                arguments: [app, key, dayFrom, end])
        }
    }

    /// The keys `app` declared, inside a transaction (read once per app and flush).
    static func declaredTagKeys(app: String, _ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT tag_key FROM app_tag_keys WHERE app_id = ? ORDER BY tag_key", arguments: [app])
    }
}

/// The key of one row of a declared tag's rollups: the tag's key and value, and the
/// dimension key it shares with the other rollups.
struct TagRollupKey: Hashable {
    var tag: TagFilter
    var key: RollupKey

    /// Byte equality of the tag's key and value (``StoredText``) and of the rollup key.
    static func == (lhs: TagRollupKey, rhs: TagRollupKey) -> Bool {
        StoredText(lhs.tag.key) == StoredText(rhs.tag.key) && StoredText(lhs.tag.value) == StoredText(rhs.tag.value) && lhs.key == rhs.key
    }

    func hash(into hasher: inout Hasher) {
        StoredText.hashBytes(of: tag.key, into: &hasher)
        StoredText.hashBytes(of: tag.value, into: &hasher)
        hasher.combine(key)
    }
}
