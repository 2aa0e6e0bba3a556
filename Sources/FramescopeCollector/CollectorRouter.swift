import Foundation
import FramescopeCore
import HTTPTypes
import Hummingbird
import CompressNIO
import Logging
import NIOCore

/// The request context of the collector's routes.
public struct CollectorRequestContext: RequestContext {
    /// Hummingbird's per-request storage (logger with request id, parameters).
    public var coreContext: CoreRequestContextStorage

    /// Creates a context for one request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// Builds the collector's routes over `store`.
///
/// - `GET /health`: `{"status": "ok"}`.
/// - `GET /openapi.json`: the ``OpenAPIDocument``.
/// - `GET /metrics`: the collector's own metrics in Prometheus' text format (``CollectorMetrics``),
///   with `Authorization: Bearer <admin token>`; 403 when no `adminToken` is configured (they
///   name every app and its volume, so they are never public).
/// - `POST /v1/events`: an ``EventBatch`` with `Authorization: Bearer <ingest key>`;
///   202 with ``IngestResponse`` once the valid events are committed.
/// - Read routes, with `Authorization: Bearer <read key>` and the common parameters
///   `from`, `to` (ISO 8601; default the last 30 days) and the filters `appVersion`,
///   `osVersion`, `deviceModel`, `network`, `lowPower`, `screen`:
///   - `GET /v1/apps/{app}/screens`: per-screen reports (``ScreensResponse``);
///   - `GET /v1/apps/{app}/timeseries?metric&interval`: ``TimeSeriesResponse``;
///   - `GET /v1/apps/{app}/compare?baseline&candidate`: ``ComparisonResponse``;
///   - `GET /v1/apps/{app}/worst?by&limit&minVisits`: ``WorstScreensResponse``;
///   - `GET /v1/apps/{app}/percentiles`: ``PercentilesResponse``.
///
/// Every error is JSON: `{"error": {"code", "field", "message"}}`.
///
/// `additionalRoutes` adds more routes (the dashboard's pages) with the same middleware.
/// Last, ``MethodNotAllowedMiddleware`` answers other methods on known paths with 405.
public func makeCollectorRouter(store: any CollectorStore, limits: IngestLimits = IngestLimits(),
                                metrics: CollectorMetrics = CollectorMetrics(),
                                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                                adminToken: String? = nil,
                                additionalRoutes: (Router<CollectorRequestContext>) -> Void = { _ in }) -> Router<CollectorRequestContext> {
    let router = Router(context: CollectorRequestContext.self)
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorShapeMiddleware())
    let limiter = RateLimiter(requestsPerSecond: limits.requestsPerSecond, burst: limits.burst)
    let groupCommit = GroupCommit(store: store, maximumWaitingBytes: limits.maximumWaitingBytes)
    let budget = ByteBudget(capacity: limits.maximumBytesInFlight)
    let queries = CollectorQueries(store: store)

    router.get("/health") { _, _ in
        HealthResponse(status: "ok")
    }

    router.get("/openapi.json") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.served(now: clock()))))
    }

    router.get("/metrics") { request, _ in
        try checkAdminToken(request, expected: adminToken)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
    }

    /// Reads, decodes, validates and stores one batch; `held` is the budget reserved for it.
    @Sendable func ingestBody(_ request: Request, _ context: CollectorRequestContext, app: String,
                              held: inout Int) async throws -> EditedResponse<IngestResponse> {
        var body = try await request.body.collect(upTo: limits.maximumBodyBytes)
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity":
            break
        case "gzip":
            guard await budget.reserve(limits.maximumDecompressedBytes) else { throw CollectorError.saturated }
            held += limits.maximumDecompressedBytes
            body = try gunzip(body, limit: limits.maximumDecompressedBytes)
        case let encoding?:
            throw CollectorError(.unsupportedMediaType, code: "unsupported_encoding", field: "Content-Encoding",
                                 message: "Content-Encoding '\(encoding)' is not accepted; send plain JSON or gzip")
        }
        let (batch, rawEvents) = try decodeBatch(body)
        let (ingest, rejected) = try IngestValidator(limits: limits, now: clock()).validate(batch, app: app, rawEvents: rawEvents)
        var result = IngestResult(stored: 0, duplicate: false)
        if !ingest.events.isEmpty { result = try await groupCommit.ingest(ingest) }
        metrics.recordIngest(app: app, accepted: result.stored, rejected: rejected.count, folded: result.folded)
        context.logger.debug("batch ingested", metadata: [
            "app": .string(app), "batch": .string(ingest.batchId), "stored": .stringConvertible(result.stored),
            "rejected": .stringConvertible(rejected.count), "duplicate": .stringConvertible(result.duplicate),
        ])
        return EditedResponse(status: .accepted, response: IngestResponse(
            batchId: ingest.batchId, accepted: ingest.events.count, duplicate: result.duplicate, rejected: rejected))
    }

    router.post("/v1/events") { request, context -> EditedResponse<IngestResponse> in
        let grant = try await authenticate(request, store: store, kind: .ingest)
        if let wait = await limiter.acquire(grant.app + "/ingest", now: clock()) {
            throw CollectorError(.tooManyRequests, code: "rate_limited", message: "too many requests for this key; retry in \(wait) s",
                                 headers: [.retryAfter: String(wait)])
        }
        // Reserve the body's bytes before reading it (all of the limit when no length is given).
        let declared = request.headers[.contentLength].flatMap { Int($0) }.map { min(max($0, 0), limits.maximumBodyBytes) }
        var held = declared ?? limits.maximumBodyBytes
        guard await budget.reserve(held) else { throw CollectorError.saturated }
        do {
            let response = try await ingestBody(request, context, app: grant.app, held: &held)
            await budget.release(held)
            return response
        } catch {
            await budget.release(held)
            throw error
        }
    }

    router.get("/v1/apps/:app/screens") { request, context -> ScreensResponse in
        let (app, query) = try await readQuery(request, context, store: store, now: clock())
        return ScreensResponse(screens: try await store.screens(app: app, query: query))
    }

    router.get("/v1/apps/:app/timeseries") { request, context -> TimeSeriesResponse in
        let (app, query) = try await readQuery(request, context, store: store, now: clock())
        let parameters = request.uri.queryParameters
        let figure = try figureParameter(parameters, name: "metric", default: "hitchRatio")
        let intervalText = parameters["interval"].map(String.init) ?? "day"
        guard let interval = BucketInterval(rawValue: intervalText) else {
            throw CollectorError(.badRequest, code: "invalid_parameter", field: "interval", message: "interval must be hour or day")
        }
        guard (query.to - query.from) / interval.seconds <= 10_000 else {
            throw CollectorError(.badRequest, code: "invalid_parameter", field: "interval", message: "the range has more than 10 000 \(interval.rawValue)s; use day or a shorter range")
        }
        return try await queries.timeSeries(app: app, query: query, figure: figure, interval: interval)
    }

    router.get("/v1/apps/:app/compare") { request, context -> ComparisonResponse in
        let (app, query) = try await readQuery(request, context, store: store, now: clock())
        let parameters = request.uri.queryParameters
        guard let baseline = parameters["baseline"].map(String.init), !baseline.isEmpty else {
            throw CollectorError(.badRequest, code: "missing_parameter", field: "baseline", message: "name the baseline app version: baseline=3.0")
        }
        guard let candidate = parameters["candidate"].map(String.init), !candidate.isEmpty else {
            throw CollectorError(.badRequest, code: "missing_parameter", field: "candidate", message: "name the candidate app version: candidate=3.1")
        }
        return try await queries.compare(app: app, query: query, baseline: baseline, candidate: candidate)
    }

    router.get("/v1/apps/:app/worst") { request, context -> WorstScreensResponse in
        let (app, query) = try await readQuery(request, context, store: store, now: clock())
        let parameters = request.uri.queryParameters
        let figure = try figureParameter(parameters, name: "by", default: "hitchRatio")
        let limit = try integerParameter(parameters, name: "limit", default: 10, range: 1...1000)
        let minimumVisits = try integerParameter(parameters, name: "minVisits", default: 20, range: 0...1_000_000_000)
        return try await queries.worstScreens(app: app, query: query, figure: figure, limit: limit, minimumVisits: minimumVisits)
    }

    router.get("/v1/apps/:app/percentiles") { request, context -> PercentilesResponse in
        let (app, query) = try await readQuery(request, context, store: store, now: clock())
        return try await queries.percentiles(app: app, query: query)
    }

    additionalRoutes(router)
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ($0.method.rawValue, $0.path.description) }))
    return router
}

/// Answers a request for a known path with a method it does not serve with 405 and
/// `Allow`, instead of Hummingbird's 404.
///
/// Added after every route, so it wraps only the router's not-found responder; it knows
/// the paths from the router's own route table, and covers any method (schemathesis
/// also sends `QUERY`).
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    /// Path patterns (`/v1/apps/:app/screens`) split into components, with their allowed methods.
    let patterns: [(components: [Substring], allowed: String)]

    init(routes: [(method: String, path: String)]) {
        var methods: [String: Set<String>] = [:]
        for route in routes { methods[route.path, default: []].insert(route.method) }
        patterns = methods.map { path, served in
            (path.split(separator: "/"), served.sorted().joined(separator: ", "))
        }
    }

    /// The methods `path` allows, or `nil` for a path no route serves.
    func allowed(path: String) -> String? {
        let parts = path.split(separator: "/")
        return patterns.first { pattern in
            pattern.components.count == parts.count
                && zip(pattern.components, parts).allSatisfy { ($0.hasPrefix(":") || ($0.hasPrefix("{") && $0.hasSuffix("}"))) ? !$1.isEmpty : $0 == $1 }
        }?.allowed
    }

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = allowed(path: request.uri.path) else { throw error }
            throw CollectorError(.methodNotAllowed, code: "method_not_allowed", message: "use \(allowed) on this path", headers: [.allow: allowed])
        }
    }
}

/// `{"status": "ok"}`.
struct HealthResponse: ResponseEncodable {
    var status: String
}

/// `{"screens": [...]}`.
public struct ScreensResponse: ResponseEncodable, Decodable, Sendable {
    /// One entry per screen, by name.
    public var screens: [ScreenSummary]
}

extension IngestResponse: ResponseEncodable {}
extension TimeSeriesResponse: ResponseEncodable {}
extension ComparisonResponse: ResponseEncodable {}
extension WorstScreensResponse: ResponseEncodable {}
extension PercentilesResponse: ResponseEncodable {}

/// Checks the read key against the path's app and parses the common time range and filters.
func readQuery(_ request: Request, _ context: CollectorRequestContext, store: any CollectorStore, now: Double) async throws -> (app: String, query: ScreenQuery) {
    let app = try context.parameters.require("app")
    let grant = try await authenticate(request, store: store, kind: .read)
    guard grant.app == app else {
        throw CollectorError(.forbidden, code: "wrong_app", field: "app", message: "this read key does not belong to app '\(app)'")
    }
    return (app, try screenQuery(request.uri.queryParameters, now: now))
}

/// A figure named by the parameter `name` (``QueryFigure``), or 400 naming the parameter.
func figureParameter(_ parameters: Parameters, name: String, default fallback: String) throws -> QueryFigure {
    let text = parameters[Substring(name)].map(String.init) ?? fallback
    guard let figure = QueryFigure(name: text) else {
        throw CollectorError(.badRequest, code: "invalid_parameter", field: name,
                             message: "unknown metric '\(text)'; use a report metric such as hitchRatio, hangRate, averageFPS, frameDuration.p95, motion.hitchRatio or frozenFramesPerThousand")
    }
    return figure
}

/// A whole number parameter within `range`, or 400 naming the parameter.
func integerParameter(_ parameters: Parameters, name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
    guard let text = parameters[Substring(name)] else { return fallback }
    guard let value = Int(text), range.contains(value) else {
        throw CollectorError(.badRequest, code: "invalid_parameter", field: name, message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
    return value
}

/// The batch in `body` and each event's JSON as sent (`nil` when it cannot be sliced).
///
/// ``WireBatchDecoder`` decodes well-formed batches; any body it declines (an invalid
/// event, malformed JSON, an unusual spelling) is decoded by `JSONDecoder`, whose errors
/// become the 400 (`invalid_json`, or `invalid_field` with the field's path) and whose
/// per-event failures become the rejections.
func decodeBatch(_ body: ByteBuffer) throws -> (batch: WireBatch, rawEvents: [String]?) {
    if let decoded = body.withUnsafeReadableBytes({ WireBatchDecoder.decode($0) }) {
        return (decoded.batch, decoded.rawEvents)
    }
    let batch: WireBatch
    do {
        batch = try JSONDecoder().decode(WireBatch.self, from: Data(buffer: body))
    } catch let error as DecodingError {
        let field = error.fieldPath
        if case .dataCorrupted = error, field.isEmpty {
            throw CollectorError(.badRequest, code: "invalid_json", message: invalidJSONMessage(Data(buffer: body)))
        }
        throw CollectorError(.badRequest, code: "invalid_field", field: field.isEmpty ? nil : field, message: error.reason)
    }
    let rawEvents = body.withUnsafeReadableBytes { bytes in
        JSONEventSlicer.eventRanges(in: bytes)?.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
    }
    return (batch, rawEvents)
}

/// Decompresses a gzip body, refusing output over `limit` bytes (a gzip bomb) with 413
/// and damaged data with 400.
func gunzip(_ body: ByteBuffer, limit: Int) throws -> ByteBuffer {
    var input = body
    let output: ByteBuffer
    do {
        output = try input.decompress(with: .gzip(), maxSize: limit)
    } catch let error as CompressNIOError where error == .bufferOverflow {
        throw CollectorError(.contentTooLarge, code: "decompressed_too_large", field: "Content-Encoding",
                             message: "the body decompresses to more than \(limit >> 20) MiB")
    } catch {
        throw CollectorError(.badRequest, code: "invalid_gzip", field: "Content-Encoding", message: "the body is not valid gzip data")
    }
    // The decompressor may overshoot its limit by up to one buffer before it stops.
    guard output.readableBytes <= limit else {
        throw CollectorError(.contentTooLarge, code: "decompressed_too_large", field: "Content-Encoding",
                             message: "the body decompresses to more than \(limit >> 20) MiB")
    }
    // A stream cut short still inflates to what it held: its last four bytes (ISIZE, the
    // length modulo 2³²) then do not match, and the body is refused as gzip, not as JSON.
    let view = body.readableBytesView
    guard view.count >= 18 else {
        throw CollectorError(.badRequest, code: "invalid_gzip", field: "Content-Encoding", message: "the body is not valid gzip data")
    }
    let trailer = view.suffix(4)
    let size = trailer.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard size == UInt32(truncatingIfNeeded: output.readableBytes) else {
        throw CollectorError(.badRequest, code: "invalid_gzip", field: "Content-Encoding",
                             message: "the gzip data is cut short or damaged (its trailer does not match)")
    }
    return output
}

/// Reads `Authorization: Bearer <key>` and checks that the key is of `kind`.
/// What is wrong with a body that is not JSON, in the words of Foundation's parser, which
/// says where it stopped ("Invalid value around character 12.", "Number 1e400 is not
/// representable in Swift."): JSONDecoder on Linux does not. Parses again, on this error
/// path only.
func invalidJSONMessage(_ body: Data) -> String {
    do {
        _ = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    } catch {
        if let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String {
            return "the body is not valid JSON: \(detail.prefix(200))"
        }
    }
    return "the body is not valid JSON"
}

/// Checks `Authorization: Bearer <admin token>` against `expected` in constant time.
/// - Throws: 403 when no admin token is configured, 401 when the header is missing or wrong.
func checkAdminToken(_ request: Request, expected: String?) throws {
    guard let expected, !expected.isEmpty else {
        throw CollectorError(.forbidden, code: "admin_disabled", field: "Authorization",
                             message: "no admin token is configured; start the collector with FRAMESCOPE_ADMIN_TOKEN or --admin-token-file")
    }
    guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
          constantTimeEqual(Array(header.utf8.dropFirst(7)), Array(expected.utf8)) else {
        throw CollectorError(.unauthorized, code: "unauthorized", field: "Authorization", message: "send 'Authorization: Bearer <admin token>'")
    }
}

/// Whether `a` and `b` are equal, in time that depends only on their lengths.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}

func authenticate(_ request: Request, store: any CollectorStore, kind: KeyGrant.Kind) async throws -> KeyGrant {
    guard let header = request.headers[.authorization], header.hasPrefix("Bearer "), header.count > 7 else {
        throw CollectorError(.unauthorized, code: "unauthorized", field: "Authorization", message: "send 'Authorization: Bearer <key>'")
    }
    guard let grant = try await store.authenticate(key: String(header.dropFirst(7))) else {
        throw CollectorError(.unauthorized, code: "unauthorized", field: "Authorization", message: "unknown or revoked key")
    }
    guard grant.kind == kind else {
        throw CollectorError(.forbidden, code: "wrong_key_kind", field: "Authorization",
                             message: kind == .ingest ? "a read key cannot send events; use the ingest key" : "an ingest key cannot read; use the read key")
    }
    return grant
}

/// The screens query from URL parameters; `from` and `to` default to the last 30 days.
func screenQuery(_ parameters: some Sequence<(key: Substring, value: Substring)>, now: Double) throws -> ScreenQuery {
    var values: [String: String] = [:]
    for (key, value) in parameters { values[String(key)] = String(value) }
    func time(_ name: String, default fallback: Double) throws -> Double {
        guard let text = values[name] else { return fallback }
        guard let value = ISO8601.parse(text) else {
            throw CollectorError(.badRequest, code: "invalid_parameter", field: name, message: "\(name) must be an ISO 8601 date or date-time")
        }
        return value
    }
    let to = try time("to", default: now)
    let from = try time("from", default: to - 30 * 86_400)
    guard from < to else { throw CollectorError(.badRequest, code: "invalid_parameter", field: "from", message: "from must be before to") }
    if let network = values["network"], VisitContext.Network(rawValue: network) == nil {
        throw CollectorError(.badRequest, code: "invalid_parameter", field: "network",
                             message: "network must be one of \(VisitContext.Network.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    var lowPower: Bool?
    if let text = values["lowPower"] {
        guard let flag = Bool(text) else {
            throw CollectorError(.badRequest, code: "invalid_parameter", field: "lowPower", message: "lowPower must be true or false")
        }
        lowPower = flag
    }
    return ScreenQuery(from: from, to: to, appVersion: values["appVersion"], osVersion: values["osVersion"],
                       deviceModel: values["deviceModel"], network: values["network"], lowPower: lowPower, screen: values["screen"])
}

/// Turns every error into the collector's JSON error shape.
struct ErrorShapeMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    /// Logs a refused request with the context's request id (`hb.request.id`), its code and field.
    static func log(_ error: CollectorError, _ request: Request, _ context: CollectorRequestContext) {
        context.logger.log(level: error.status.code >= 500 ? .error : .info, "request refused", metadata: [
            "method": .string(request.method.rawValue), "path": .string(request.uri.path), "status": .stringConvertible(error.status.code),
            "code": .string(error.code), "field": .string(error.field ?? ""),
        ])
    }

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let shaped = Self.shape(error, request, context)
            Self.log(shaped, request, context)
            throw shaped
        }
    }

    /// The collector error for any error a route threw; unknown errors become a 500 that reveals nothing.
    static func shape(_ error: any Error, _ request: Request, _ context: CollectorRequestContext) -> CollectorError {
        switch error {
        case let error as CollectorError:
            return error
        case let error as HTTPError:
            return CollectorError(error.status, code: error.status == .notFound ? "not_found" : "http_\(error.status.code)",
                                  message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        case is NIOTooManyBytesError:
            return CollectorError(.contentTooLarge, code: "body_too_large", message: "the request body is larger than the collector accepts")
        default:
            context.logger.error("unhandled error", metadata: ["error": .string(String(describing: error))])
            return CollectorError(.internalServerError, code: "internal", message: "internal error")
        }
    }
}
