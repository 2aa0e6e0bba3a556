import Foundation
import FramescopeCollector
import Hummingbird

/// What went wrong talking to ClickHouse, and the answer a collector's client gets for it.
///
/// ``unavailable(_:)`` is what a device should retry: the server could not be reached or
/// answered with an error that passes (a shard down, a timeout, ZooKeeper lost); the
/// collector answers 503 with `Retry-After`, and the SDK keeps the batch and sends it again,
/// so nothing measured is lost. ``server(code:message:)`` is any other error ClickHouse
/// reported (a bug: 500, without ClickHouse's text, which may quote data).
public enum ClickHouseError: Error, Sendable, Hashable, HTTPResponseError, CollectorErrorConvertible, CustomStringConvertible {
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

    /// 503 for a passing error, 500 otherwise (``collectorError``).
    public var status: HTTPResponse.Status { collectorError.status }

    /// The collector's answer for this error: 503 `store_unavailable` with `Retry-After: 5`,
    /// or 500 `store_error`, without ClickHouse's own text (it may quote data).
    public var collectorError: CollectorError {
        isPassing
            ? CollectorError(.serviceUnavailable, .storeUnavailable,
                             message: "the collector's store (ClickHouse) cannot be reached; send again later", headers: [.retryAfter: "5"])
            : CollectorError(.internalServerError, .storeError, message: "the collector's store failed")
    }

    /// Answers as ``collectorError`` does.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try collectorError.response(from: request, context: context)
    }

    /// What went wrong, with ClickHouse's code and text (for logs).
    public var description: String {
        switch self {
        case .unavailable(let text): "ClickHouse unavailable: \(text)"
        case .server(let code, let message): "ClickHouse error \(code): \(message.prefix(300))"
        }
    }
}
