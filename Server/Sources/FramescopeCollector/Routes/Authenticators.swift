import FramescopeCore
import HTTPTypes
import Hummingbird

/// Reads `Authorization: Bearer <key>` and checks that the key is of `kind` and live at `now`.
func authenticate(_ request: Request, store: any AppAccess, kind: KeyGrant.Kind, now: Double) async throws -> KeyGrant {
    try await authenticate(request, store: store, kinds: [kind], now: now)
}

/// Reads `Authorization: Bearer <key>` and checks that the key is of one of `kinds` and live at `now`.
/// - Throws: 401 without a key or with an unknown or revoked one, 403 (`wrong_key_kind`)
///   for a key of another kind, saying which key to use.
func authenticate(_ request: Request, store: any AppAccess, kinds: Set<KeyGrant.Kind>, now: Double) async throws -> KeyGrant {
    guard let header = request.headers[.authorization], header.hasPrefix("Bearer "), header.count > 7 else {
        throw CollectorError(.unauthorized, .unauthorized, field: "Authorization", message: "send 'Authorization: Bearer <key>'")
    }
    guard let grant = try await store.authenticate(key: String(header.dropFirst(7)), now: now) else {
        throw CollectorError(.unauthorized, .unauthorized, field: "Authorization", message: "unknown or revoked key")
    }
    guard kinds.contains(grant.kind) else {
        throw CollectorError(.forbidden, .wrongKeyKind, field: "Authorization", message: wrongKindMessage(grant.kind, accepted: kinds))
    }
    return grant
}

/// Why a key of kind `presented` is refused where `accepted` kinds are wanted, and which key to use.
func wrongKindMessage(_ presented: KeyGrant.Kind, accepted: Set<KeyGrant.Kind>) -> String {
    let article = presented == .read ? "a" : "an"
    if accepted == [.ingest] { return "\(article) \(presented.rawValue) key cannot send events; use the ingest key" }
    if accepted == [.read] {
        return presented == .admin ? "an admin key cannot read data; use the read key" : "an ingest key cannot read; use the read key"
    }
    if accepted == [.admin] { return "\(article) \(presented.rawValue) key cannot change the app's settings; use the app's admin key" }
    let names = KeyGrant.Kind.allCases.filter(accepted.contains).map { "the \($0.rawValue) key" }.joined(separator: " or ")
    return "\(article) \(presented.rawValue) key cannot do this; use \(names)"
}

/// Checks `Authorization: Bearer <admin token>` against `expected` in constant time.
/// - Throws: 403 when no admin token is configured, 401 when the header is missing or wrong.
func checkAdminToken(_ request: Request, expected: String?) throws {
    guard let expected, !expected.isEmpty else {
        throw CollectorError(.forbidden, .adminDisabled, field: "Authorization",
                             message: "no admin token is configured; start the collector with FRAMESCOPE_ADMIN_TOKEN or --admin-token-file")
    }
    guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
          constantTimeEqual(Array(header.utf8.dropFirst(7)), Array(expected.utf8)) else {
        throw CollectorError(.unauthorized, .unauthorized, field: "Authorization", message: "send 'Authorization: Bearer <admin token>'")
    }
}


/// Lets a request through only with a live ingest key (`Authorization: Bearer fsi_…`),
/// and puts its ``KeyGrant`` in ``CollectorRequestContext/grant``.
/// - Throws: 401 without a key or with an unknown or revoked one, 403 for a read key.
struct IngestKeyAuthenticator: RouterMiddleware {
    typealias Context = CollectorRequestContext
    let store: any AppAccess
    let clock: @Sendable () -> Double

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.grant = try await authenticate(request, store: store, kind: .ingest, now: clock())
        return try await next(request, context)
    }
}

/// Lets a request through only with a live read key of the app the path names
/// (`/v1/apps/{app}/…`), and puts its ``KeyGrant`` in ``CollectorRequestContext/grant``.
/// - Throws: 401 without a key or with an unknown or revoked one, 403 for an ingest or
///   admin key, or another app's key.
struct ReadKeyAuthenticator: RouterMiddleware {
    typealias Context = CollectorRequestContext
    let store: any AppAccess
    let clock: @Sendable () -> Double

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let app = try context.parameters.require("app")
        let grant = try await authenticate(request, store: store, kind: .read, now: clock())
        guard grant.app == app else {
            throw CollectorError(.forbidden, .wrongApp, field: "app", message: "this read key does not belong to app '\(app)'")
        }
        var context = context
        context.grant = grant
        return try await next(request, context)
    }
}

/// Lets a request through only with a live key of one of `kinds` belonging to the app the
/// path names (`/v1/apps/{app}/…`), and puts its ``KeyGrant`` in ``CollectorRequestContext/grant``.
/// - Throws: 401 without a key or with an unknown or revoked one, 403 for a key of another
///   kind or of another app.
struct AppKeyAuthenticator: RouterMiddleware {
    typealias Context = CollectorRequestContext
    let store: any AppAccess
    let kinds: Set<KeyGrant.Kind>
    let clock: @Sendable () -> Double

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let app = try context.parameters.require("app")
        let grant = try await authenticate(request, store: store, kinds: kinds, now: clock())
        guard grant.app == app else {
            throw CollectorError(.forbidden, .wrongApp, field: "app", message: "this \(grant.kind.rawValue) key does not belong to app '\(app)'")
        }
        var context = context
        context.grant = grant
        return try await next(request, context)
    }
}

/// Lets a request through only with the admin token (`Authorization: Bearer <token>`),
/// compared in constant time.
/// - Throws: 403 when the collector has no admin token, 401 when it is missing or wrong.
struct AdminTokenAuthenticator: RouterMiddleware {
    typealias Context = CollectorRequestContext
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try checkAdminToken(request, expected: token)
        return try await next(request, context)
    }
}

/// Refuses a request with 429 and `Retry-After` once its app has used up its share of
/// ``IngestLimits/requestsPerSecond`` (token buckets per app, ``RateLimiter``). Runs after
/// an authenticator, whose grant names the app.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext
    let limiter: RateLimiter
    let clock: @Sendable () -> Double

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let app = context.grant?.app ?? ""
        if let wait = await limiter.acquire(app + "/ingest", now: clock()) {
            throw CollectorError(.tooManyRequests, .rateLimited, message: "too many requests for this key; retry in \(wait) s",
                                 headers: [.retryAfter: String(wait)])
        }
        return try await next(request, context)
    }
}
