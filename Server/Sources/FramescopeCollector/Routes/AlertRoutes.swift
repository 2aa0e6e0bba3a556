import Foundation
import Hummingbird
import NIOCore

/// The routes of an app's regression alerts and webhooks, under `/v1/apps/{app}`:
/// - `GET …/alerts`: the newest alerts (at most ``AlertRoutes/listLimit``), with the app's read key;
/// - `POST …/alerts/{id}/acknowledge`: marks one acknowledged (kept if it was already),
///   with the app's admin key;
/// - `GET …/webhooks`, `POST …/webhooks` (`{"url": "https://…"}`; answers 201 with the
///   secret, shown this once) and `DELETE …/webhooks/{id}` (204): with the app's admin key.
///
/// A bad URL is 400 `invalid_field` naming `url`; an unknown alert or webhook is 404 naming `id`.
struct AlertRoutes: Sendable {
    let store: any AppAccess & AlertStore
    let clock: @Sendable () -> Double

    /// The most alerts `GET …/alerts` answers, newest first.
    static let listLimit = 500
    /// The largest body `POST …/webhooks` reads, in bytes.
    static let maximumBodyBytes = 8 * 1024

    func addRoutes(to router: Router<CollectorRequestContext>) {
        router.group("/v1/apps/:app")
            .add(middleware: AppKeyAuthenticator(store: store, kinds: [.read], clock: clock))
            .get("alerts") { _, context -> AlertsResponse in
                AlertsResponse(alerts: try await store.alerts(app: try context.authenticatedApp(), limit: Self.listLimit))
            }
        router.group("/v1/apps/:app")
            .add(middleware: AppKeyAuthenticator(store: store, kinds: [.admin], clock: clock))
            .post("alerts/:id/acknowledge") { _, context -> RegressionAlert in
                let app = try context.authenticatedApp()
                let id = try Self.id(context)
                guard let alert = try await store.acknowledgeAlert(app: app, id: id, now: clock()) else {
                    throw CollectorError(.notFound, .notFound, field: "id", message: "app '\(app)' has no alert \(id)")
                }
                return alert
            }
            .get("webhooks") { _, context -> WebhooksResponse in
                let app = try context.authenticatedApp()
                guard let webhooks = try await store.webhooks(app: app) else { throw Self.unknownApp(app) }
                return WebhooksResponse(webhooks: webhooks)
            }
            .post("webhooks") { request, context -> EditedResponse<WebhookCredentials> in
                let app = try context.authenticatedApp()
                let body = try await request.body.collect(upTo: Self.maximumBodyBytes)
                let url = try Self.webhookURL(body)
                let created: WebhookCredentials?
                do {
                    created = try await store.addWebhook(app: app, url: url, now: clock())
                } catch let error as WebhookURLError {
                    throw CollectorError(.badRequest, .invalidField, field: "url", message: error.message)
                }
                guard let created else { throw Self.unknownApp(app) }
                return EditedResponse(status: .created, response: created)
            }
            .delete("webhooks/:id") { _, context -> Response in
                let app = try context.authenticatedApp()
                let id = try Self.id(context)
                guard try await store.removeWebhook(app: app, id: id) else {
                    throw CollectorError(.notFound, .notFound, field: "id", message: "app '\(app)' has no webhook \(id)")
                }
                return Response(status: .noContent)
            }
    }

    /// The path's `id`: a whole number from 1 up.
    static func id(_ context: CollectorRequestContext) throws -> Int64 {
        let text = try context.parameters.require("id")
        guard text.utf8.count <= 19, let id = Int64(text), id > 0 else {
            throw CollectorError(.badRequest, .invalidParameter, field: "id", message: "id must be a whole number from 1, not '\(text.prefix(32))'")
        }
        return id
    }

    /// The `url` of a `{"url": "…"}` body; anything else is 400 naming the field.
    static func webhookURL(_ body: ByteBuffer) throws -> String {
        let data = Data(buffer: body)
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            throw CollectorError(.badRequest, .invalidJSON, message: "the body must be a JSON object like {\"url\": \"https://…\"}")
        }
        if let unknown = fields.keys.sorted().first(where: { $0 != "url" }) {
            throw CollectorError(.badRequest, .invalidField, field: String(unknown.prefix(64)), message: "unknown field; the body holds only url")
        }
        guard let url = fields["url"] as? String else {
            throw CollectorError(.badRequest, .invalidField, field: "url",
                                 message: fields["url"] == nil ? "url is required" : "url must be a string")
        }
        if let problem = WebhookURL.problem(url) {
            throw CollectorError(.badRequest, .invalidField, field: "url", message: problem.message)
        }
        return url
    }

    static func unknownApp(_ app: String) -> CollectorError {
        CollectorError(.notFound, .notFound, field: "app", message: "no app '\(app)'")
    }
}

/// The answer of `GET /v1/apps/{app}/alerts`: the newest alerts first.
public struct AlertsResponse: Sendable, Hashable, Codable, ResponseEncodable {
    /// The alerts, newest first.
    public var alerts: [RegressionAlert]

    /// An answer listing `alerts`.
    public init(alerts: [RegressionAlert]) { self.alerts = alerts }
}

/// The answer of `GET /v1/apps/{app}/webhooks`: the app's webhooks, without secrets.
public struct WebhooksResponse: Sendable, Hashable, Codable, ResponseEncodable {
    /// The webhooks by id.
    public var webhooks: [WebhookRecord]

    /// An answer listing `webhooks`.
    public init(webhooks: [WebhookRecord]) { self.webhooks = webhooks }
}

extension RegressionAlert: ResponseEncodable {}
extension WebhookCredentials: ResponseEncodable {}
