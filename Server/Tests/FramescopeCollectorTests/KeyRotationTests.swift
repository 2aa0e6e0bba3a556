import FramescopeCollector
import Testing

/// `KeyRotation` alone, without any store: what a rotation does to each kind of key, and
/// which stored keys grant a request. The stores carry these answers out; the store
/// contract suite checks that they do, on SQLite and ClickHouse.
@Suite("Key rotation and grants: the rules as values")
struct KeyRotationTests {
    static let now = 1_750_000_000.0
    static let day = 86_400.0

    /// A rotation's fate for one key: its kind and end, the kind rotated, the grace
    /// period, and the expected fate.
    struct FateCase: Sendable, CustomTestStringConvertible {
        var label: String
        var kind: KeyGrant.Kind
        var expiresAt: Double?
        var rotated: KeyGrant.Kind
        var grace: Double
        var fate: KeyRotation.Fate
        var testDescription: String { label }
    }

    static let fateCases: [FateCase] = [
        FateCase(label: "an ingest key in use gets the grace period", kind: .ingest, expiresAt: nil, rotated: .ingest, grace: 30 * day,
                 fate: .expire(at: now + 30 * day)),
        FateCase(label: "an ingest key already in a shorter grace keeps its end", kind: .ingest, expiresAt: now + day, rotated: .ingest, grace: 30 * day,
                 fate: .expire(at: now + day)),
        FateCase(label: "an ingest key in a longer grace gets the new, earlier end", kind: .ingest, expiresAt: now + 40 * day, rotated: .ingest,
                 grace: 30 * day, fate: .expire(at: now + 30 * day)),
        FateCase(label: "a grace of 0 ends the old ingest keys now", kind: .ingest, expiresAt: nil, rotated: .ingest, grace: 0, fate: .remove),
        FateCase(label: "a negative grace ends the old ingest keys now", kind: .ingest, expiresAt: now + day, rotated: .ingest, grace: -5, fate: .remove),
        FateCase(label: "a new read key ends the old read keys now, whatever the grace", kind: .read, expiresAt: nil, rotated: .read, grace: 30 * day,
                 fate: .remove),
        FateCase(label: "a new admin key ends the old admin keys now, whatever the grace", kind: .admin, expiresAt: nil, rotated: .admin, grace: 30 * day,
                 fate: .remove),
        FateCase(label: "rotating ingest leaves a read key alone", kind: .read, expiresAt: nil, rotated: .ingest, grace: 30 * day, fate: .keep),
        FateCase(label: "rotating read leaves an ingest key in its grace alone", kind: .ingest, expiresAt: now + day, rotated: .read, grace: 0,
                 fate: .keep),
        FateCase(label: "rotating admin leaves an ingest key alone", kind: .ingest, expiresAt: nil, rotated: .admin, grace: 0, fate: .keep),
        FateCase(label: "an ingest key whose grace ended goes, whatever is rotated", kind: .ingest, expiresAt: now - 1, rotated: .read, grace: 0,
                 fate: .remove),
        FateCase(label: "a grace that ends exactly now is over", kind: .ingest, expiresAt: now, rotated: .ingest, grace: 30 * day, fate: .remove),
    ]

    @Test("A rotation's fate for each kind of key", arguments: fateCases)
    func fate(_ example: FateCase) {
        let key = StoredKeyState(kind: example.kind, expiresAt: example.expiresAt)
        #expect(KeyRotation.fate(of: key, rotating: example.rotated, gracePeriod: example.grace, now: Self.now) == example.fate)
    }

    @Test("Only a new read key ends the app's dashboard sessions")
    func sessions() {
        #expect(KeyRotation.endsSessions(rotating: .read))
        #expect(!KeyRotation.endsSessions(rotating: .ingest))
        #expect(!KeyRotation.endsSessions(rotating: .admin))
    }

    @Test("Rotating twice never lengthens an old ingest key's grace")
    func graceNeverGrows() {
        var key = StoredKeyState(kind: .ingest, expiresAt: nil)
        guard case .expire(let first) = KeyRotation.fate(of: key, rotating: .ingest, gracePeriod: 10 * Self.day, now: Self.now) else {
            Issue.record("the first rotation should start a grace period")
            return
        }
        key.expiresAt = first
        let later = KeyRotation.fate(of: key, rotating: .ingest, gracePeriod: 30 * Self.day, now: Self.now + Self.day)
        #expect(later == .expire(at: first))
    }

    static func record(hash: String = "aa", kind: KeyGrant.Kind = .ingest, expiresAt: Double? = nil, revoked: Bool = false) -> StoredKeyRecord {
        StoredKeyRecord(hash: hash, app: "shop", state: StoredKeyState(kind: kind, expiresAt: expiresAt), appRevoked: revoked)
    }

    @Test("A live key of a live app grants its app and kind")
    func grants() {
        for kind in KeyGrant.Kind.allCases {
            #expect(KeyRotation.grant(for: Self.record(kind: kind), presentedHash: "aa", now: Self.now) == KeyGrant(app: "shop", kind: kind))
        }
        #expect(KeyRotation.grant(for: Self.record(expiresAt: Self.now + 1), presentedHash: "aa", now: Self.now) == KeyGrant(app: "shop", kind: .ingest),
                "an old ingest key in its grace period still works")
    }

    @Test("Unknown, revoked, expired and mismatched keys grant nothing")
    func refusals() {
        #expect(KeyRotation.grant(for: nil, presentedHash: "aa", now: Self.now) == nil, "unknown")
        #expect(KeyRotation.grant(for: Self.record(revoked: true), presentedHash: "aa", now: Self.now) == nil, "revoked app")
        #expect(KeyRotation.grant(for: Self.record(expiresAt: Self.now), presentedHash: "aa", now: Self.now) == nil, "grace ends now")
        #expect(KeyRotation.grant(for: Self.record(expiresAt: Self.now - 1), presentedHash: "aa", now: Self.now) == nil, "grace over")
        #expect(KeyRotation.grant(for: Self.record(hash: "ab"), presentedHash: "aa", now: Self.now) == nil, "another hash")
    }

    @Test("A key is live until its end, not at it")
    func liveness() {
        #expect(KeyRotation.isLive(expiresAt: nil, now: Self.now))
        #expect(KeyRotation.isLive(expiresAt: Self.now + 0.5, now: Self.now))
        #expect(!KeyRotation.isLive(expiresAt: Self.now, now: Self.now))
    }
}
