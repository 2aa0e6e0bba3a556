import Foundation
import FramescopeStore

/// What went wrong talking to ClickHouse, and the ``StoreError`` it stands for.
///
/// ``unavailable(_:)`` is what a device should retry: the server could not be reached or
/// answered with an error that passes (a shard down, a timeout, ZooKeeper lost); it is
/// ``StoreError/unavailable(store:retryAfter:)`` (the collector answers 503 with
/// `Retry-After`, and the SDK keeps the batch and sends it again, so nothing measured is
/// lost). ``server(code:message:)`` is any other error ClickHouse reported (a bug:
/// ``StoreError/failed``, answered without ClickHouse's text, which may quote data).
public enum ClickHouseError: Error, Sendable, Hashable, StoreErrorConvertible, CustomStringConvertible {
    /// ClickHouse could not be reached, or answered with a passing error; the text says which.
    case unavailable(String)
    /// ClickHouse refused the statement: its error code (`Code: N`) and its message.
    case server(code: Int, message: String)

    /// The error codes of ClickHouse that pass, answered 503: 159 timeout exceeded, 202 too
    /// many simultaneous queries, 209 socket timeout, 210 network error (a shard down), 225
    /// no ZooKeeper, 242 table read-only (ZooKeeper lost), 252 too many parts, 279 all
    /// connection tries failed, 999 keeper exception.
    public static let passingCodes: Set<Int> = [159, 202, 209, 210, 225, 242, 252, 279, 999]

    /// The error an HTTP answer with `status` and `body` stands for, or `nil` for a success.
    /// ClickHouse 18.16 sends its code only in the body: `Code: 60, e.displayText() = …`.
    public static func from(status: Int, body: String) -> ClickHouseError? {
        guard status != 200 else { return nil }
        let message = String(body.prefix(2000)).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let code = code(in: body) else {
            return status >= 500 ? .unavailable("HTTP \(status): \(message.prefix(200))") : .server(code: 0, message: "HTTP \(status): \(message)")
        }
        return passingCodes.contains(code) ? .unavailable("ClickHouse error \(code): \(message.prefix(200))") : .server(code: code, message: message)
    }

    /// The number after a leading `Code: `, if any.
    static func code(in body: String) -> Int? {
        guard body.hasPrefix("Code: ") else { return nil }
        let digits = body.dropFirst(6).prefix { $0.isASCII && $0.isNumber }
        return digits.count <= 6 ? Int(digits) : nil
    }

    /// Whether a client should send the same request again later.
    public var isPassing: Bool {
        if case .unavailable = self { return true }
        return false
    }

    /// The store error this stands for: a passing error is
    /// ``StoreError/unavailable(store:retryAfter:)`` after 5 s (ClickHouse's passing errors
    /// clear in seconds), any other ``StoreError/failed`` (ClickHouse's own text stays in
    /// ``description``, for the log).
    public var storeError: StoreError {
        isPassing ? .unavailable(store: "ClickHouse", retryAfter: 5) : .failed
    }

    /// What went wrong, with ClickHouse's code and text (for logs).
    public var description: String {
        switch self {
        case .unavailable(let text): "ClickHouse unavailable: \(text)"
        case .server(let code, let message): "ClickHouse error \(code): \(message.prefix(300))"
        }
    }
}
