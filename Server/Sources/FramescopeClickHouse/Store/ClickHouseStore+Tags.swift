import FramescopeStore

/// Declared tag keys (``DeclaredTags``) as control records of kind `tagkey` (app = its id,
/// id = the key); removing a key tombstones its record, and its rollups stay.
extension ClickHouseStore {
    /// A declared tag key as stored.
    struct StoredTagKey: Codable, Sendable {
        /// When it was declared, Unix seconds.
        var declaredAt: Double
    }

    /// The tag keys `app` declared, by key (bytewise); `nil` for an unknown app.
    public func tagKeys(app: String) async throws -> [DeclaredTagKey]? {
        guard try await storedApp(app) != nil else { return nil }
        return try await control(StoredTagKey.self, "tagkey", app: app).map { DeclaredTagKey(key: $0.id, declaredAt: $0.value.declaredAt) }
    }

    /// Declares `key` for `app` at `now` (Unix seconds) unless the app has it already
    /// (`false`) or already has ``DeclaredTags/maximumKeys``; `nil` for an unknown app.
    /// - Throws: ``TagKeyError`` for a key the wire format refuses, or past the limit.
    public func declareTagKey(app: String, key: String, now: Double) async throws -> Bool? {
        let key = CanonicalText.nfc(key)
        if let error = DeclaredTags.declarationError(key: key) { throw error }
        guard try await storedApp(app) != nil else { return nil }
        let keys = try await declaredTagKeyNames(app: app)
        if keys.contains(key) { return false }
        guard keys.count < DeclaredTags.maximumKeys else { throw DeclaredTags.tooManyKeysError(app: app, keys: keys) }
        try await putControl("tagkey", app: app, id: key, StoredTagKey(declaredAt: now))
        return true
    }

    /// Tombstones the key's record; `false` when `app` has not declared `key`.
    public func removeTagKey(app: String, key: String) async throws -> Bool {
        let key = CanonicalText.nfc(key)
        guard try await control(StoredTagKey.self, "tagkey", app: app, id: key) != nil else { return false }
        try await putControl("tagkey", app: app, id: key, StoredTagKey?.none)
        return true
    }

    /// The keys `app` declares now, sorted bytewise (ClickHouse's order, as SQLite's), for ingest.
    func declaredTagKeyNames(app: String) async throws -> [String] {
        try await control(StoredTagKey.self, "tagkey", app: app).map(\.id)
    }
}
