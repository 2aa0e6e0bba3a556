import Hummingbird

/// `POST /v1/events`: an ``EventBatch`` with `Authorization: Bearer <ingest key>`; 202 with
/// ``IngestResponse`` once the valid events are committed. The route group authenticates
/// (``IngestKeyAuthenticator``) and rate-limits (``RateLimitMiddleware``); the
/// ``IngestService`` does the rest.
struct IngestRoutes: Sendable {
    let service: IngestService

    func addRoutes(to router: Router<CollectorRequestContext>, store: any CollectorStore, limiter: RateLimiter, clock: @escaping @Sendable () -> Double) {
        router.group("/v1/events")
            .add(middleware: IngestKeyAuthenticator(store: store, clock: clock))
            .add(middleware: RateLimitMiddleware(limiter: limiter, clock: clock))
            .post { request, context -> EditedResponse<IngestResponse> in
                let response = try await service.accept(request, app: try context.authenticatedApp(), logger: context.logger)
                return EditedResponse(status: .accepted, response: response)
            }
    }
}
