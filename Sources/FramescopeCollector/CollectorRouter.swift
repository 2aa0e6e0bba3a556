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
/// - `GET /metrics`: the collector's own metrics in Prometheus' text format (``CollectorMetrics``).
/// - `POST /v1/events`: an ``EventBatch`` with `Authorization: Bearer <ingest key>`;
///   202 with ``IngestResponse`` once the valid events are committed.
/// - `GET /v1/apps/{app}/screens?from&to&appVersion&osVersion&deviceModel&network&lowPower`:
///   per-screen reports with `Authorization: Bearer <read key>`.
///
/// Every error is JSON: `{"error": {"code", "field", "message"}}`.
public func makeCollectorRouter(store: any CollectorStore, limits: IngestLimits = IngestLimits(),
                                metrics: CollectorMetrics = CollectorMetrics(),
                                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) -> Router<CollectorRequestContext> {
    let router = Router(context: CollectorRequestContext.self)
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorShapeMiddleware())
    let limiter = RateLimiter(requestsPerSecond: limits.requestsPerSecond, burst: limits.burst)

    router.get("/health") { _, _ in
        HealthResponse(status: "ok")
    }

    router.get("/openapi.json") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.served(now: clock()))))
    }

    router.get("/metrics") { _, _ in
        Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
    }

    router.post("/v1/events") { request, context -> EditedResponse<IngestResponse> in
        let grant = try await authenticate(request, store: store, kind: .ingest)
        if let wait = await limiter.acquire(grant.app + "/ingest", now: clock()) {
            throw CollectorError(.tooManyRequests, code: "rate_limited", message: "too many requests for this key; retry in \(wait) s",
                                 headers: [.retryAfter: String(wait)])
        }
        var body = try await request.body.collect(upTo: limits.maximumBodyBytes)
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity":
            break
        case "gzip":
            body = try gunzip(body, limit: limits.maximumDecompressedBytes)
        case let encoding?:
            throw CollectorError(.unsupportedMediaType, code: "unsupported_encoding", field: "Content-Encoding",
                                 message: "Content-Encoding '\(encoding)' is not accepted; send plain JSON or gzip")
        }
        let batch: WireBatch
        do {
            batch = try JSONDecoder().decode(WireBatch.self, from: Data(buffer: body))
        } catch let error as DecodingError {
            let field = error.fieldPath
            if case .dataCorrupted = error, field.isEmpty {
                throw CollectorError(.badRequest, code: "invalid_json", message: "the body is not valid JSON")
            }
            throw CollectorError(.badRequest, code: "invalid_field", field: field.isEmpty ? nil : field, message: error.reason)
        }
        let (ingest, rejected) = try IngestValidator(limits: limits, now: clock()).validate(batch, app: grant.app)
        var result = IngestResult(stored: 0, duplicate: false)
        if !ingest.events.isEmpty { result = try await store.ingest(ingest) }
        metrics.recordIngest(app: grant.app, accepted: result.stored, rejected: rejected.count)
        context.logger.info("batch ingested", metadata: [
            "app": .string(grant.app), "batch": .string(ingest.batchId), "stored": .stringConvertible(result.stored),
            "rejected": .stringConvertible(rejected.count), "duplicate": .stringConvertible(result.duplicate),
        ])
        return EditedResponse(status: .accepted, response: IngestResponse(
            batchId: ingest.batchId, accepted: ingest.events.count, duplicate: result.duplicate, rejected: rejected))
    }

    router.get("/v1/apps/:app/screens") { request, context -> ScreensResponse in
        let app = try context.parameters.require("app")
        let grant = try await authenticate(request, store: store, kind: .read)
        guard grant.app == app else {
            throw CollectorError(.forbidden, code: "wrong_app", field: "app", message: "this read key does not belong to app '\(app)'")
        }
        let query = try screenQuery(request.uri.queryParameters, now: clock())
        return ScreensResponse(screens: try await store.screens(app: app, query: query))
    }

    return router
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
    return output
}

/// Reads `Authorization: Bearer <key>` and checks that the key is of `kind`.
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
    var lowPower: Bool?
    if let text = values["lowPower"] {
        guard let flag = Bool(text) else {
            throw CollectorError(.badRequest, code: "invalid_parameter", field: "lowPower", message: "lowPower must be true or false")
        }
        lowPower = flag
    }
    return ScreenQuery(from: from, to: to, appVersion: values["appVersion"], osVersion: values["osVersion"],
                       deviceModel: values["deviceModel"], network: values["network"], lowPower: lowPower)
}

/// Turns every error into the collector's JSON error shape.
struct ErrorShapeMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    /// The methods a known path allows ("GET"), or `nil` for a path the collector does not serve.
    static func allowedMethods(path: String) -> String? {
        switch path {
        case "/health", "/metrics", "/openapi.json": return "GET"
        case "/v1/events": return "POST"
        default:
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            return parts.count == 5 && parts[1] == "v1" && parts[2] == "apps" && !parts[3].isEmpty && parts[4] == "screens" ? "GET" : nil
        }
    }

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as CollectorError {
            throw error
        } catch let error as HTTPError {
            if error.status == .notFound, let allowed = Self.allowedMethods(path: request.uri.path) {
                throw CollectorError(.methodNotAllowed, code: "method_not_allowed", message: "use \(allowed) on this path", headers: [.allow: allowed])
            }
            throw CollectorError(error.status, code: error.status == .notFound ? "not_found" : "http_\(error.status.code)",
                                 message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        } catch is NIOTooManyBytesError {
            throw CollectorError(.contentTooLarge, code: "body_too_large", message: "the request body is larger than the collector accepts")
        } catch {
            context.logger.error("unhandled error", metadata: ["error": .string(String(describing: error))])
            throw CollectorError(.internalServerError, code: "internal", message: "internal error")
        }
    }
}
