import Hummingbird

/// `POST /v1/events`: an ``EventBatch`` with `Authorization: Bearer <ingest key>`; 202 with
/// ``IngestResponse`` once the valid events are committed. The route group authenticates
/// (``IngestKeyAuthenticator``) and rate-limits (``RateLimitMiddleware``); the
/// ``IngestService`` does the rest.
///
/// `POST /v1/metrickit`: MetricKit payload JSON (one `jsonRepresentation()` or a list),
/// with the same key, rate limit and byte budget; 202 with ``MetricKitResponse``.
struct IngestRoutes: Sendable {
    let service: IngestService

    func addRoutes(to router: Router<CollectorRequestContext>, store: any AppAccess, limiter: RateLimiter, clock: @escaping @Sendable () -> Double) {
        // Both take an ingest key and share its rate limit.
        func ingestGroup(_ path: RouterPath) -> RouterGroup<CollectorRequestContext> {
            router.group(path)
                .add(middleware: IngestKeyAuthenticator(store: store, clock: clock))
                .add(middleware: RateLimitMiddleware(limiter: limiter, clock: clock))
        }
        ingestGroup("/v1/events")
            .post { request, context -> EditedResponse<IngestResponse> in
                let response = try await service.accept(request, app: try context.authenticatedApp(), logger: context.logger)
                return EditedResponse(status: .accepted, response: response)
            }
        ingestGroup("/v1/metrickit")
            .post { request, context -> EditedResponse<MetricKitResponse> in
                let response = try await service.acceptMetricKit(request, app: try context.authenticatedApp(), logger: context.logger)
                return EditedResponse(status: .accepted, response: response)
            }
    }
}
