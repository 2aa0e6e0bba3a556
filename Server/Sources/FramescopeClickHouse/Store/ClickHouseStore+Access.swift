import Foundation
import FramescopeStore

/// Key rotation and dashboard sessions as control records: kind `session` (app = "", id =
/// the session id's SHA-256), beside the `key` records of ``ClickHouseStore/StoredKey``.
extension ClickHouseStore {
    /// A dashboard session as stored under kind `session`, its id the session id's SHA-256 (hex).
    struct StoredSession: Codable, Sendable {
        /// The app whose read key opened it.
        var app: String
        /// The SHA-256 of that read key: the session ends when the key record does.
        var keyHash: String
        /// The CSRF token its forms carry.
        var csrf: String
        /// When it ends, Unix seconds.
        var expiresAt: Double
    }

    /// Replaces one kind of an app's key with a fresh one and returns it; `nil` for an
    /// unknown or revoked app.
    ///
    /// What happens to the app's other keys is ``KeyRotation``'s rule, carried out as new
    /// versions of their records: a key removed is tombstoned, an old ingest key in its
    /// grace period gets its end written (`gracePeriod` seconds from `now`, Unix seconds,
    /// or an earlier end it already has), and a new read key ends every dashboard session
    /// of the app. The new key and the old keys' new versions are one insert.
    public func rotateKey(app: String, kind: KeyGrant.Kind, gracePeriod: Double, now: Double) async throws -> String? {
        guard let stored = try await storedApp(app), stored.revokedAt == nil else { return nil }
        let key = AccessKeys.newKey(kind)
        var records: [(app: String, id: String, value: StoredKey?)] = []
        for row in try await liveKeys(app: app) {
            var value = row.value
            switch KeyRotation.fate(of: StoredKeyState(kind: value.kind, expiresAt: value.expiresAt), rotating: kind, gracePeriod: gracePeriod, now: now) {
            case .keep:
                continue
            case .expire(let end):
                value.expiresAt = end
                records.append((app: "", id: row.id, value: value))
            case .remove:
                records.append((app: "", id: row.id, value: nil))
            }
        }
        let hash = AccessKeys.hash(key)
        records.append((app: "", id: hash, value: StoredKey(app: app, kind: kind, expiresAt: nil)))
        try await putControl("key", records)
        if KeyRotation.endsSessions(rotating: kind) { try await endSessions(app: app) }
        try await sealKeys(app: app, hashes: [hash])
        return key
    }

    /// Opens a dashboard session for `readKey` when ``KeyRotation/grant(for:presentedHash:now:)``
    /// grants it as a read key at `now` (Unix seconds) and its app is live; `nil` otherwise.
    /// It lasts `lifetime` seconds.
    public func createSession(readKey: String, lifetime: Double, now: Double) async throws -> DashboardSession? {
        let keyHash = AccessKeys.hash(readKey)
        guard let key = try await control(StoredKey.self, "key", app: "", id: keyHash),
              let app = try await storedApp(key.app),
              let grant = KeyRotation.grant(for: StoredKeyRecord(hash: keyHash, app: key.app, state: StoredKeyState(kind: key.kind, expiresAt: key.expiresAt),
                                                                  appRevoked: app.revokedAt != nil), presentedHash: keyHash, now: now),
              grant.kind == .read else { return nil }
        let session = DashboardSession(id: AccessTokens.random(), app: key.app, csrfToken: AccessTokens.random(), expiresAt: now + lifetime)
        try await putControl("session", app: "", id: AccessKeys.hash(session.id),
                             StoredSession(app: key.app, keyHash: keyHash, csrf: session.csrfToken, expiresAt: session.expiresAt))
        return session
    }

    /// The grant of a live session: its record not expired at `now` (Unix seconds), and the
    /// record of the read key that opened it still in place (a rotation or revocation
    /// tombstones it, so this also says the app is not revoked). Two reads.
    public func session(id: String, now: Double) async throws -> SessionGrant? {
        guard let session = try await control(StoredSession.self, "session", app: "", id: AccessKeys.hash(id)), session.expiresAt > now,
              let key = try await control(StoredKey.self, "key", app: "", id: session.keyHash), key.app == session.app else { return nil }
        return SessionGrant(app: session.app, csrfToken: session.csrf)
    }

    /// Ends the session `id` (sign-out): tombstones its record when it has one, so that
    /// signing out with made-up ids writes nothing.
    public func deleteSession(id: String) async throws {
        let hash = AccessKeys.hash(id)
        guard try await control(StoredSession.self, "session", app: "", id: hash) != nil else { return }
        try await putControl("session", app: "", id: hash, StoredSession?.none)
    }

    /// Tombstones the sessions that ended at or before `now` (Unix seconds) and the keys
    /// whose grace period is over by then.
    func pruneExpiredAccess(now: Double) async throws {
        let sessions = try await control(StoredSession.self, "session", app: "").filter { $0.value.expiresAt <= now }
        try await putControl("session", sessions.map { (app: "", id: $0.id, value: StoredSession?.none) })
        let keys = try await control(StoredKey.self, "key", app: "").filter { row in row.value.expiresAt.map { $0 <= now } ?? false }
        try await putControl("key", keys.map { (app: "", id: $0.id, value: StoredKey?.none) })
    }

    /// Tombstones every session of `app` (its read keys changed, or it was revoked).
    func endSessions(app: String) async throws {
        let sessions = try await control(StoredSession.self, "session", app: "").filter { $0.value.app == app }
        try await putControl("session", sessions.map { (app: "", id: $0.id, value: StoredSession?.none) })
    }
}
