import Hummingbird
import Prometheus

/// The collector's own metrics, served at `GET /metrics` in Prometheus' text format:
///
/// - `framescope_http_requests_total{method, route, status}`
/// - `framescope_http_request_duration_seconds{method, route}` (histogram)
/// - `framescope_ingested_events_total{app}` and `framescope_rejected_events_total{app}`
///
/// Each collector owns its registry (nothing global is bootstrapped), so tests and
/// several collectors in one process do not share counts.
public final class CollectorMetrics: Sendable {
    /// The registry the metrics live in.
    public let registry: PrometheusCollectorRegistry

    private static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]

    /// Metrics in a fresh registry.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// Counts one answered request and its latency.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        registry.makeCounter(descriptor: Self.requests, labels: [("method", method), ("route", route), ("status", String(status))]).increment()
        registry.makeDurationHistogram(descriptor: Self.latency, labels: [("method", method), ("route", route)], buckets: Self.latencyBuckets)
            .record(duration)
    }

    /// Counts a batch's accepted and rejected events.
    func recordIngest(app: String, accepted: Int, rejected: Int, folded: [String: Int] = [:]) {
        registry.makeCounter(descriptor: Self.ingested, labels: [("app", app)]).increment(by: Int64(accepted))
        registry.makeCounter(descriptor: Self.rejected, labels: [("app", app)]).increment(by: Int64(rejected))
        for (dimension, count) in folded.sorted(by: { $0.key < $1.key }) {
            registry.makeCounter(descriptor: Self.folded, labels: [("app", app), ("dimension", dimension)]).increment(by: Int64(count))
        }
    }

    /// The text exposition of every metric.
    public func exposition() -> String {
        registry.emitToString()
    }

    private static var requests: MetricNameDescriptor { MetricNameDescriptor(namespace: "framescope", subsystem: "http", metricName: "requests", unitName: "total", helpText: "HTTP requests answered") }
    private static var latency: MetricNameDescriptor { MetricNameDescriptor(namespace: "framescope", subsystem: "http", metricName: "request_duration", unitName: "seconds", helpText: "Time to answer an HTTP request") }
    private static var folded: MetricNameDescriptor { MetricNameDescriptor(namespace: "framescope", metricName: "folded_values", unitName: "total", helpText: "Dimension values over an app's daily cardinality limit, stored as (other)") }
    private static var ingested: MetricNameDescriptor { MetricNameDescriptor(namespace: "framescope", metricName: "ingested_events", unitName: "total", helpText: "Screen-visit events stored") }
    private static var rejected: MetricNameDescriptor { MetricNameDescriptor(namespace: "framescope", metricName: "rejected_events", unitName: "total", helpText: "Screen-visit events refused") }
}

/// Times every request and counts it by method, route pattern and status.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext
    let metrics: CollectorMetrics

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let method = request.method.rawValue
        do {
            let response = try await next(request, context)
            metrics.recordRequest(method: method, route: context.endpointPath ?? "unmatched", status: response.status.code, duration: clock.now - start)
            return response
        } catch let error as CollectorError {
            metrics.recordRequest(method: method, route: context.endpointPath ?? "unmatched", status: error.status.code, duration: clock.now - start)
            throw error
        }
    }
}
