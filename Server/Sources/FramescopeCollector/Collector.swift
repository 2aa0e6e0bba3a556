import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// The collector, assembled once for `framescope serve` and for the tests alike: the store,
/// the ingest service (byte budget and group commit), the queries, the router with its
/// route groups and middleware, and the background services.
///
/// Routes, by area:
/// - ``OperationsRoutes``: `/health`, `/openapi.json`, `/metrics` (admin token);
/// - ``IngestRoutes``: `POST /v1/events` (ingest key, rate limit, ``IngestService``);
/// - ``QueryRoutes``: `GET /v1/apps/{app}/…` (read key of that app);
/// - ``SettingsRoutes``: `GET`/`PUT /v1/apps/{app}/thresholds` (read or admin key; admin key to change);
/// - ``AlertRoutes``: `GET /v1/apps/{app}/alerts` (read key), acknowledging an alert and
///   the app's webhooks (admin key);
/// - ``ExportRoutes``: `GET /v1/apps/{app}/events` (read key);
/// - ``HangRoutes``: `GET /v1/apps/{app}/hangs` (read key), `POST /v1/apps/{app}/symbols`
///   (admin key) and `GET /v1/apps/{app}/symbols` (read or admin key);
/// - whatever `additionalRoutes` adds (the dashboard's pages), under the same middleware.
///
/// Every error is JSON, `{"error": {"code", "field", "message"}}` (``ErrorShapeMiddleware``),
/// and a known path asked with another method answers 405 (``MethodNotAllowedMiddleware``).
public struct Collector {
    /// Where events and rollups are kept.
    public let store: any CollectorStore
    /// The collector's own metrics (`/metrics`).
    public let metrics: CollectorMetrics
    /// Every route, with its middleware.
    public let router: Router<CollectorRequestContext>
    /// Decode, validate, commit: what `POST /v1/events` calls.
    public let ingest: IngestService

    /// Assembles a collector over `store`.
    /// - Parameters:
    ///   - limits: Body sizes, byte budgets, rate limit and event rules.
    ///   - metrics: Where the collector counts requests and events.
    ///   - pace: How slowly an ingest body may arrive before it is refused with 408.
    ///   - clock: The current time, Unix seconds (tests fix it).
    ///   - adminToken: The token `/metrics` asks for; `nil` keeps `/metrics` closed (403).
    ///   - hangsTimeLimit: How long a hang read may take, in seconds, before it is answered
    ///     503 (`serve` passes ``HangsResponse/timeLimit``); nil: no bound.
    ///   - additionalRoutes: Adds more routes (the dashboard) before the 405 middleware.
    public init(store: any CollectorStore, limits: IngestLimits = IngestLimits(), metrics: CollectorMetrics = CollectorMetrics(),
                pace: BodyPace = BodyPace(), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, adminToken: String? = nil,
                hangsTimeLimit: Double? = nil, additionalRoutes: (Router<CollectorRequestContext>) -> Void = { _ in }) {
        self.store = store
        self.metrics = metrics
        var queries = CollectorQueries(store: store)
        queries.hangsTimeLimit = hangsTimeLimit
        ingest = IngestService(store: store, limits: limits, metrics: metrics, clock: clock, pace: pace,
                               symbols: (queries.symbols, store))
        let router = Router(context: CollectorRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
        router.add(middleware: ErrorShapeMiddleware())
        OperationsRoutes(metrics: metrics, adminToken: adminToken, clock: clock).addRoutes(to: router)
        IngestRoutes(service: ingest).addRoutes(to: router, store: store, limiter: RateLimiter(requestsPerSecond: limits.requestsPerSecond, burst: limits.burst), clock: clock)
        QueryRoutes(store: store, queries: queries, clock: clock).addRoutes(to: router)
        SettingsRoutes(store: store, clock: clock).addRoutes(to: router)
        AlertRoutes(store: store, clock: clock).addRoutes(to: router)
        ExportRoutes(store: store, clock: clock).addRoutes(to: router)
        HangRoutes(store: store, queries: queries, pace: pace, clock: clock).addRoutes(to: router)
        additionalRoutes(router)
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ($0.method.rawValue, $0.path.description) }))
        self.router = router
    }

    /// The jobs that run beside the server: retention (raw events older than `retention`
    /// seconds, old batch ids, expired sessions and keys), regression alerts and their
    /// webhooks (``AlertService``, links under `publicURL`) and, for a SQLite store with
    /// background checkpoints, WAL checkpoints.
    /// - Parameter jobs: `false` leaves out retention and alerts: for the other collectors
    ///   of a shared ClickHouse store, where one collector runs them (each would otherwise
    ///   send every webhook delivery once more).
    public func services(retention: Double, publicURL: String = "http://127.0.0.1:8080", jobs: Bool = true, logger: Logger) -> [any Service] {
        var services: [any Service] = jobs ? [RetentionService(store: store, retention: retention, chunk: store.retentionChunk, logger: logger),
                                              AlertService(store: store, publicURL: publicURL, logger: logger, metrics: metrics)] : []
        if let sqlite = store as? SQLiteStore, sqlite.backgroundCheckpoints {
            services.append(WALCheckpointService(store: sqlite, logger: logger))
        }
        return services
    }
}
