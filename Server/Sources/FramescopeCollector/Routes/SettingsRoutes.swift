import Foundation
import Hummingbird
import NIOCore

/// The routes of an app's settings, under `/v1/apps/{app}`:
/// - `GET …/thresholds`: the bands and verdict rules the app set and those in effect
///   (``ThresholdsResponse``), with the app's read key or its admin key;
/// - `PUT …/thresholds`: replaces them with the body (``ThresholdsBody``), with the app's
///   admin key only (a read key gets 403), and answers like `GET`. A bad value is 400
///   `invalid_field` naming the field; a body over 16 KiB is 413.
struct SettingsRoutes: Sendable {
    let store: any AppAccess & SettingsStore
    let clock: @Sendable () -> Double

    func addRoutes(to router: Router<CollectorRequestContext>) {
        router.group("/v1/apps/:app")
            .add(middleware: AppKeyAuthenticator(store: store, kinds: [.read, .admin], clock: clock))
            .get("thresholds") { _, context -> ThresholdsResponse in
                let app = try context.authenticatedApp()
                return ThresholdsResponse(app: app, settings: try await settings(app))
            }
        router.group("/v1/apps/:app")
            .add(middleware: AppKeyAuthenticator(store: store, kinds: [.admin], clock: clock))
            .put("thresholds") { request, context -> ThresholdsResponse in
                let app = try context.authenticatedApp()
                let body = try await request.body.collect(upTo: ThresholdsBody.maximumBytes)
                let settings: AppThresholds
                do {
                    settings = try body.withUnsafeReadableBytes { bytes in try ThresholdsBody.decode(bytes) }
                } catch let failure as ThresholdsBody.Failure {
                    throw CollectorError(.badRequest, failure.errorCode, field: failure.field, message: failure.message)
                }
                guard try await store.setThresholds(settings, app: app) else { throw unknownApp(app) }
                return ThresholdsResponse(app: app, settings: settings)
            }
    }

    /// What `app` set; an app whose key authenticated always exists, unless it was deleted meanwhile.
    func settings(_ app: String) async throws -> AppThresholds {
        guard let settings = try await store.thresholds(app: app) else { throw unknownApp(app) }
        return settings
    }

    func unknownApp(_ app: String) -> CollectorError {
        CollectorError(.notFound, .notFound, field: "app", message: "no app '\(app)'")
    }
}

extension ThresholdsResponse: ResponseEncodable {}
