import Hummingbird

extension CollectorError {
    /// The stable, machine-readable code of an error answer (`invalid_field`): the words a
    /// client matches on, so each is declared once here and listed in docs/collector-api.md's
    /// error table (`CollectorErrorCodeTests` holds the two to each other).
    ///
    /// A struct with static members rather than an enum, so modules outside the collector
    /// (the ClickHouse store) name the same codes and a new code is one more line.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as sent in `{"error": {"code": …}}`.
        public let rawValue: String

        /// A code spelled `rawValue`; the collector's own errors use the static members.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// 400: the body is not JSON (or not the JSON object expected).
        public static let invalidJSON = Code(rawValue: "invalid_json")
        /// 400: a field of the body is wrong; `field` names it.
        public static let invalidField = Code(rawValue: "invalid_field")
        /// 400: a query or path parameter is wrong; `field` names it.
        public static let invalidParameter = Code(rawValue: "invalid_parameter")
        /// 400: a required query parameter is absent.
        public static let missingParameter = Code(rawValue: "missing_parameter")
        /// 400: the ClickHouse store cannot keep an event as sent (a start outside 1970–2106).
        public static let invalidEvent = Code(rawValue: "invalid_event")
        /// 400: a gzip body that does not inflate.
        public static let invalidGzip = Code(rawValue: "invalid_gzip")
        /// 400: a malformed `Transfer-Encoding`.
        public static let invalidTransferEncoding = Code(rawValue: "invalid_transfer_encoding")
        /// 400: more MetricKit payloads than one body may hold.
        public static let tooManyPayloads = Code(rawValue: "too_many_payloads")
        /// 401: no key, or an unknown or revoked one.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// 403: a key of the wrong kind for the route.
        public static let wrongKeyKind = Code(rawValue: "wrong_key_kind")
        /// 403: a key of another app.
        public static let wrongApp = Code(rawValue: "wrong_app")
        /// 403: the admin routes are off (no admin token configured).
        public static let adminDisabled = Code(rawValue: "admin_disabled")
        /// 404: no such route, app, alert or webhook.
        public static let notFound = Code(rawValue: "not_found")
        /// 405: a known path with another method.
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        /// 408: the body did not arrive in time.
        public static let bodyTooSlow = Code(rawValue: "body_too_slow")
        /// 409: an app with that id exists already.
        public static let appExists = Code(rawValue: "app_exists")
        /// 413: the body as sent is over the limit.
        public static let bodyTooLarge = Code(rawValue: "body_too_large")
        /// 413: the body inflates past the limit.
        public static let decompressedTooLarge = Code(rawValue: "decompressed_too_large")
        /// 413: more events than one batch may hold.
        public static let tooManyEvents = Code(rawValue: "too_many_events")
        /// 415: a `Content-Encoding` other than identity or gzip.
        public static let unsupportedEncoding = Code(rawValue: "unsupported_encoding")
        /// 429: the key is over its rate limit.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// 500: an error the collector did not expect; details only in its log.
        public static let `internal` = Code(rawValue: "internal")
        /// 500: the ClickHouse store failed in a way a retry does not cure.
        public static let storeError = Code(rawValue: "store_error")
        /// 501: a `Transfer-Encoding` other than `chunked`.
        public static let unsupportedTransferEncoding = Code(rawValue: "unsupported_transfer_encoding")
        /// 503: the collector holds as many request bytes or waiting batches as it may.
        public static let saturated = Code(rawValue: "saturated")
        /// 503: the store is full or cannot be reached.
        public static let storeUnavailable = Code(rawValue: "store_unavailable")

        /// Every declared code, in the order of the documentation's error table.
        public static let all: [Code] = [
            invalidJSON, invalidField, invalidParameter, missingParameter, invalidEvent, invalidGzip,
            invalidTransferEncoding, tooManyPayloads, unauthorized, wrongKeyKind, wrongApp, adminDisabled,
            notFound, methodNotAllowed, bodyTooSlow, appExists, bodyTooLarge, decompressedTooLarge, tooManyEvents,
            unsupportedEncoding, rateLimited, `internal`, storeError, unsupportedTransferEncoding, saturated,
            storeUnavailable,
        ]

        /// The code of an HTTP error the router raised itself: `not_found` for 404,
        /// `http_<status>` (`http_400`) for any other status.
        public static func http(_ status: HTTPResponse.Status) -> Code {
            status == .notFound ? .notFound : Code(rawValue: "http_\(status.code)")
        }

        /// The raw value.
        public var description: String { rawValue }
    }

    /// Creates an error with a declared ``Code``.
    public init(_ status: HTTPResponse.Status, _ code: Code, field: String? = nil, message: String, headers: HTTPFields = [:]) {
        self.init(status, code: code.rawValue, field: field, message: message, headers: headers)
    }
}
