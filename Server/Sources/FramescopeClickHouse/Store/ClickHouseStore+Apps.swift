import Foundation
import FramescopeCore
import FramescopeStore

/// Apps and their keys as control records: kind `app` (app = its id, id = ""), and kind
/// `key` (app = "", id = the key's SHA-256), so that authenticating a request is one
/// point read of the key record.
///
/// Without transactions, the order of writes keeps a key from outliving its app's
/// revocation: a revocation writes the app record first and tombstones the app's keys
/// after it; whatever writes a key writes it first and reads the app record after it,
/// tombstoning the key again when the app was revoked meanwhile (``sealKeys(app:hashes:)``).
/// So a key record alone says its app is live, and ``authenticate(key:now:)`` reads nothing else.
extension ClickHouseStore {
    /// An app as stored under kind `app`.
    struct StoredApp: Codable, Sendable {
        /// The app's name.
        var name: String
        /// When it was created, Unix seconds.
        var createdAt: Double
        /// When it was revoked, Unix seconds, or `nil` while it is live.
        var revokedAt: Double?
        /// A random token of the `createApp` call that wrote the app first: two collectors
        /// creating one id at once tell which of them won by it.
        var creation: String
    }

    /// A key as stored under kind `key`, its id the key's SHA-256 (hex).
    struct StoredKey: Codable, Sendable {
        /// The app it belongs to.
        var app: String
        /// Ingest, read or admin.
        var kind: KeyGrant.Kind
        /// When it stops working, Unix seconds: set on an old ingest key by a rotation with a
        /// grace period; `nil` for a key in use.
        var expiresAt: Double?
    }

    /// Writes the app record and, once it is known to be this call's, the SHA-256 hashes of
    /// three fresh keys.
    /// - Throws: ``StoreError/appExists(id:)`` when the id is taken (by an app live or
    ///   revoked, or by a creation of the same id that won a race); ``ClickHouseError``.
    public func createApp(name: String, id: String?) async throws -> AppCredentials {
        let appId = id ?? AccessKeys.slug(name)
        if try await storedApp(appId) != nil { throw StoreError.appExists(id: appId) }
        let creation = AccessTokens.random()
        try await putControl("app", app: appId, id: "", StoredApp(name: name, createdAt: Date().timeIntervalSince1970, revokedAt: nil, creation: creation))
        // No unique key: of two creations of one id at once, the newer version wins, and the other one says so.
        if let winner = try await storedApp(appId), winner.creation != creation { throw StoreError.appExists(id: appId) }
        let credentials = AccessKeys.newCredentials(app: appId, name: name)
        try await putKeys(credentials)
        return credentials
    }

    /// Clears a revocation, replaces the app's keys with three fresh ones and ends its
    /// dashboard sessions; `nil` for an unknown app.
    public func rotateKeys(app: String) async throws -> AppCredentials? {
        guard var stored = try await storedApp(app) else { return nil }
        if stored.revokedAt != nil {
            // Unrevoked first: an app record that says revoked never sits beside new keys.
            stored.revokedAt = nil
            try await putControl("app", app: app, id: "", stored)
        }
        let credentials = AccessKeys.newCredentials(app: app, name: stored.name)
        let old = try await liveKeys(app: app).map { (app: "", id: $0.id, value: StoredKey?.none) }
        try await putControl("key", Self.keyRecords(credentials).map { (app: "", id: $0.id, value: Optional($0.value)) } + old)
        try await endSessions(app: app)
        try await sealKeys(app: app, hashes: Self.keyRecords(credentials).map(\.id))
        return credentials
    }

    /// Every app, by id (bytewise, as SQLite's `ORDER BY id`).
    public func apps() async throws -> [AppRecord] {
        try await control(StoredApp.self, "app").map { row in
            AppRecord(app: row.app, name: row.value.name, createdAt: ISO8601.format(unixSeconds: row.value.createdAt), revoked: row.value.revokedAt != nil)
        }
    }

    /// Marks the app revoked (keeping the first revocation's time), then tombstones its
    /// keys and dashboard sessions; its data stays. `false` for an unknown app.
    public func revokeApp(_ id: String) async throws -> Bool {
        guard var stored = try await storedApp(id) else { return false }
        if stored.revokedAt == nil {
            stored.revokedAt = Date().timeIntervalSince1970
            try await putControl("app", app: id, id: "", stored)
        }
        try await putControl("key", try await liveKeys(app: id).map { (app: "", id: $0.id, value: StoredKey?.none) })
        try await endSessions(app: id)
        return true
    }

    /// One read of the key record under the key's SHA-256, granted as
    /// ``KeyRotation/grant(for:presentedHash:now:)`` says (a key whose grace period ends
    /// after `now`). A revoked app's keys are tombstoned, so the record alone answers: it
    /// is passed as of a live app.
    public func authenticate(key: String, now: Double) async throws -> KeyGrant? {
        let hash = AccessKeys.hash(key)
        let record = try await control(StoredKey.self, "key", app: Optional(""), id: Optional(hash)).first.map { row in
            StoredKeyRecord(hash: row.id, app: row.value.app, state: StoredKeyState(kind: row.value.kind, expiresAt: row.value.expiresAt), appRevoked: false)
        }
        return KeyRotation.grant(for: record, presentedHash: hash, now: now)
    }

    /// The app record of `app`, revoked or not; `nil` for an unknown app.
    func storedApp(_ app: String) async throws -> StoredApp? {
        try await control(StoredApp.self, "app", app: app, id: "")
    }

    /// The live key records of `app`, hash as id (every app's key records are read: they
    /// are filed under no app, for ``authenticate(key:now:)``).
    func liveKeys(app: String) async throws -> [ControlRow<StoredKey>] {
        try await control(StoredKey.self, "key", app: Optional("")).filter { $0.value.app == app }
    }

    /// Writes the key records of `credentials` in one insert.
    func putKeys(_ credentials: AppCredentials) async throws {
        try await putControl("key", Self.keyRecords(credentials).map { (app: "", id: $0.id, value: Optional($0.value)) })
        try await sealKeys(app: credentials.app, hashes: Self.keyRecords(credentials).map(\.id))
    }

    /// The key records of `credentials`' three keys, by hash.
    static func keyRecords(_ credentials: AppCredentials) -> [(id: String, value: StoredKey)] {
        [(credentials.ingestKey, KeyGrant.Kind.ingest), (credentials.readKey, .read), (credentials.adminKey, .admin)].map { key, kind in
            (id: AccessKeys.hash(key), value: StoredKey(app: credentials.app, kind: kind, expiresAt: nil))
        }
    }

    /// Reads `app`'s record after its keys `hashes` were written, and tombstones them again
    /// when the app is gone or was revoked meanwhile (a revocation that listed the app's
    /// keys before they were written missed them).
    func sealKeys(app: String, hashes: [String]) async throws {
        guard try await storedApp(app).map({ $0.revokedAt != nil }) ?? true else { return }
        try await putControl("key", hashes.map { (app: "", id: $0, value: StoredKey?.none) })
    }
}
