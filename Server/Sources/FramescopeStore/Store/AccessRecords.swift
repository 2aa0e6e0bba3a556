import Crypto
import Foundation

/// A dashboard session, as created at sign-in: the cookie's value and the token the
/// pages' forms carry against cross-site requests. Both are shown once; the store keeps
/// the session id only as a SHA-256 hash.
public struct DashboardSession: Sendable, Hashable {
    /// The random session id (the cookie's value), 192 bits in hex.
    public var id: String
    /// The app whose read key opened the session.
    public var app: String
    /// The random CSRF token the session's forms must send back.
    public var csrfToken: String
    /// When the session ends, Unix seconds.
    public var expiresAt: Double

    /// A session; see each property.
    public init(id: String, app: String, csrfToken: String, expiresAt: Double) {
        self.id = id
        self.app = app
        self.csrfToken = csrfToken
        self.expiresAt = expiresAt
    }
}

/// What a live session grants: reading one app, and the CSRF token its forms carry.
public struct SessionGrant: Sendable, Hashable {
    /// The app the session may read.
    public var app: String
    /// The session's CSRF token.
    public var csrfToken: String

    /// A grant; see each property.
    public init(app: String, csrfToken: String) {
        self.app = app
        self.csrfToken = csrfToken
    }
}

/// How long access records live, in seconds.
public enum AccessLifetimes {
    /// A dashboard session lasts 12 hours; signing in again starts a new one.
    public static let session: Double = 12 * 3600
    /// An old ingest key keeps working this long after a rotation by default (30 days),
    /// while a new build with the new key rolls out.
    public static let ingestKeyGrace: Double = 30 * 86_400
    /// Batch ids are remembered this long after receipt (32 days): longer than any event
    /// in a retried batch can still be accepted (``IngestLimits/maximumAge`` plus
    /// ``IngestLimits/maximumFutureSkew``, with a day to spare), so a retry after the id is
    /// forgotten has no event left that could be counted twice.
    public static let batchLedger: Double = 32 * 86_400
}

/// Random tokens for sessions and forms, and their comparison.
public enum AccessTokens {
    /// 192 random bits from the system's generator, as 48 lower-case hex digits.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(48)
        for _ in 0..<24 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether two tokens are equal, in time that depends only on their lengths.
    public static func equal(_ a: String, _ b: String) -> Bool {
        constantTimeEqual(Array(a.utf8), Array(b.utf8))
    }
}

/// App keys as every store makes and keeps them: random keys with a prefix naming their
/// kind, their SHA-256 hashes (the only form a store keeps, for keys and session ids
/// alike), and app ids derived from names.
public enum AccessKeys {
    /// Three fresh keys for `app` (ingest, read, admin).
    public static func newCredentials(app: String, name: String) -> AppCredentials {
        AppCredentials(app: app, name: name, ingestKey: newKey(.ingest), readKey: newKey(.read), adminKey: newKey(.admin))
    }

    /// A new random key: `fsi_` (ingest), `fsr_` (read) or `fsa_` (admin) and 48 hex digits (192 bits).
    public static func newKey(_ kind: KeyGrant.Kind) -> String {
        var generator = SystemRandomNumberGenerator()
        let prefix = switch kind {
        case .ingest: "fsi_"
        case .read: "fsr_"
        case .admin: "fsa_"
        }
        return prefix + hex((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// SHA-256 of a key (or a session id, or any text), as 64 lower-case hex digits.
    public static func hash(_ key: String) -> String {
        hex(Array(SHA256.hash(data: Data(key.utf8))))
    }

    /// Bytes as lower-case hexadecimal, two digits each.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    /// An app id from a name: lower-case ASCII letters and digits, other runs of
    /// characters as one dash, no dash at either end, at most 40 characters; `app` when
    /// nothing is left (`"Other App!"` → `other-app`).
    public static func slug(_ name: String) -> String {
        var result = ""
        for character in name.lowercased() {
            if character.isASCII && (character.isLetter || character.isNumber) { result.append(character) }
            else if !result.hasSuffix("-") && !result.isEmpty { result.append("-") }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return result.isEmpty ? "app" : String(result.prefix(40))
    }
}

/// Whether `a` and `b` are equal, in time that depends only on their lengths.
package func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}
