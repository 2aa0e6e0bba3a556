/// The access rules every store applies to app keys, as decisions: what a rotation does to
/// each of an app's keys, and whether a stored key grants a request at a given time.
///
/// No store is read or written here: a store loads its key records, asks these functions,
/// and carries the answers out with its own IO (an SQL statement per key on SQLite, a new
/// record version or a tombstone on ClickHouse), as `HangDetector` leaves the watchdog's
/// thread to its caller. Tests drive the rules with made-up keys and times
/// (`KeyRotationTests`).
///
/// The rules:
/// - A key whose end (``StoredKeyState/expiresAt``) is at or before `now` grants nothing,
///   and any rotation of its app removes it, whatever its kind.
/// - A new ingest key leaves the old ingest keys working for the grace period from `now`
///   (shipped builds keep delivering while a new build rolls out); an old key keeps an
///   earlier end it already has; a grace period of 0 (or less) ends them at once.
/// - A new read key ends the old read keys at once, and every dashboard session of the app
///   (a leaked read key is revoked without touching ingest).
/// - A new admin key ends the old admin keys at once.
/// - A key of a revoked app grants nothing.
public enum KeyRotation {
    /// What a rotation does to one of the app's stored keys.
    public enum Fate: Sendable, Hashable {
        /// The key stays as it is (another kind than the one rotated, still live).
        case keep
        /// The key keeps working until `at` (Unix seconds), then stops: an old ingest key
        /// in its grace period.
        case expire(at: Double)
        /// The key is removed now (its grace period is over, or its kind was rotated
        /// without one).
        case remove
    }

    /// What rotating `rotated` keys at `now` (Unix seconds) with `gracePeriod` seconds of
    /// grace does to the stored key `key` of the same app.
    /// - Complexity: O(1).
    public static func fate(of key: StoredKeyState, rotating rotated: KeyGrant.Kind, gracePeriod: Double, now: Double) -> Fate {
        if let expiresAt = key.expiresAt, expiresAt <= now { return .remove }
        guard key.kind == rotated else { return .keep }
        guard rotated == .ingest, gracePeriod > 0 else { return .remove }
        let end = now + gracePeriod
        return .expire(at: min(key.expiresAt ?? end, end))
    }

    /// Whether rotating `rotated` keys ends every dashboard session of the app (sessions are
    /// opened by read keys, so a new read key ends them).
    public static func endsSessions(rotating rotated: KeyGrant.Kind) -> Bool {
        rotated == .read
    }

    /// Whether a key that ends at `expiresAt` (Unix seconds; `nil` for a key in use) still
    /// works at `now`.
    public static func isLive(expiresAt: Double?, now: Double) -> Bool {
        expiresAt.map { $0 > now } ?? true
    }

    /// The grant of a request that presented a key whose SHA-256 is `presentedHash`, given
    /// the record a store found under that hash (`nil` when it found none): `nil` for an
    /// unknown key, a key of a revoked app, or one whose grace period ended at or before
    /// `now` (Unix seconds).
    ///
    /// The record was looked up by hash; the digests are compared again in constant time
    /// all the same.
    public static func grant(for record: StoredKeyRecord?, presentedHash: String, now: Double) -> KeyGrant? {
        guard let record, AccessTokens.equal(record.hash, presentedHash), !record.appRevoked,
              isLive(expiresAt: record.state.expiresAt, now: now) else { return nil }
        return KeyGrant(app: record.app, kind: record.state.kind)
    }
}

/// A stored key as the access rules see it: its kind and when it stops working.
public struct StoredKeyState: Sendable, Hashable {
    /// Ingest, read or admin.
    public var kind: KeyGrant.Kind
    /// When it stops working, Unix seconds: set on an old ingest key by a rotation with a
    /// grace period; `nil` for a key in use.
    public var expiresAt: Double?

    /// A key's state; see each property.
    public init(kind: KeyGrant.Kind, expiresAt: Double?) {
        self.kind = kind
        self.expiresAt = expiresAt
    }
}

/// What a store found under a key's SHA-256 when it authenticates a request.
public struct StoredKeyRecord: Sendable, Hashable {
    /// The SHA-256 (hex) the record is stored under.
    public var hash: String
    /// The app the key belongs to.
    public var app: String
    /// Its kind and end.
    public var state: StoredKeyState
    /// Whether the app is revoked (a store that removes a revoked app's keys passes `false`).
    public var appRevoked: Bool

    /// A record; see each property.
    public init(hash: String, app: String, state: StoredKeyState, appRevoked: Bool) {
        self.hash = hash
        self.app = app
        self.state = state
        self.appRevoked = appRevoked
    }
}
