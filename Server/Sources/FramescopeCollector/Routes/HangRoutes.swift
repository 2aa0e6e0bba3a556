import FramescopeCore
import Hummingbird

/// `GET /v1/apps/{app}/hangs` with the read key (``ReadKeyAuthenticator``): the app's hangs
/// grouped by their dominant app frame (``HangsResponse``). Parameters: `from`, `to` and
/// the filters of every read route (``screenQuery(_:now:)``), `tag.KEY=VALUE` on the
/// visit's tags (up to 8, as the export), and `limit` (groups per source, 1–1000, default 100).
struct HangRoutes: Sendable {
    let store: any AppAccess & HangStore
    let clock: @Sendable () -> Double

    func addRoutes(to router: Router<CollectorRequestContext>) {
        let group = router.group("/v1/apps/:app").add(middleware: ReadKeyAuthenticator(store: store, clock: clock))
        group.get("hangs") { request, context -> HangsResponse in
            let app = try context.authenticatedApp()
            let parameters = request.uri.queryParameters
            let query = try eventQuery(parameters, now: clock())
            let limit = try integerParameter(parameters, name: "limit", default: HangsResponse.defaultLimit, range: 1...HangsResponse.maximumLimit)
            async let sdk = store.hangGroups(app: app, query: query, source: .sdk, limit: limit)
            async let metricKit = store.hangGroups(app: app, query: query, source: .metrickit, limit: limit)
            return HangsResponse(sdk: try await sdk, metricKit: try await metricKit)
        }
    }
}
