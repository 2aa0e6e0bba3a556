import Hummingbird
import NIOCore

/// The routes for operators and tools:
/// - `GET /health`: `{"status": "ok"}`;
/// - `GET /openapi.json`: the ``OpenAPIDocument``;
/// - `GET /metrics`: the collector's own metrics in Prometheus' text format
///   (``CollectorMetrics``), with `Authorization: Bearer <admin token>`
///   (``AdminTokenAuthenticator``); 403 when no admin token is configured (they name every
///   app and its volume, so they are never public).
struct OperationsRoutes: Sendable {
    let metrics: CollectorMetrics
    let adminToken: String?
    let clock: @Sendable () -> Double

    func addRoutes(to router: Router<CollectorRequestContext>) {
        router.get("/health") { _, _ in
            HealthResponse(status: "ok")
        }
        router.get("/openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.served(now: clock()))))
        }
        router.group("/metrics")
            .add(middleware: AdminTokenAuthenticator(token: adminToken))
            .get { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                         body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
            }
    }
}

/// `{"status": "ok"}`.
struct HealthResponse: ResponseEncodable {
    var status: String
}

extension IngestResponse: ResponseEncodable {}
