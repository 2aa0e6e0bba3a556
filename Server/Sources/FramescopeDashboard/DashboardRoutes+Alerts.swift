import Foundation
import FramescopeCollector
import FramescopeCore
import Hummingbird

/// The alerts page's routes:
///
/// - `GET /dashboard/apps/{app}/alerts`: the app's regression alerts (``DashboardPages/alerts(app:filters:now:csrfToken:outcome:)``);
///   `?done=ID` or `?problem=key|unknown` say how an acknowledgement went, in fixed words.
/// - `POST /dashboard/apps/{app}/alerts/{id}/acknowledge` (form fields `csrf`, the session's
///   token, and `adminKey`): acknowledging needs the app's admin key, which a read-key
///   session does not hold, so the form asks for it each time; it is checked like an API
///   key and never kept (not in a cookie, not in the session, not in the redirect). Then back
///   to the alerts page. A form without the session's token is refused with 403, so another
///   site cannot post it (the cookie is `SameSite=Strict` as well).
extension DashboardRoutes {
    /// The form the acknowledge button posts.
    struct AcknowledgeForm: Decodable {
        var csrf: String?
        var adminKey: String?
    }

    func registerAlerts(on router: Router<CollectorRequestContext>) {
        router.get("/dashboard/apps/:app/alerts") { request, context in
            let outcome = AlertOutcome(parameters: request.uri.queryParameters)
            return try await page(request, context) { app, filters, now, csrf in
                try await pages.alerts(app: app, filters: filters, now: now, csrfToken: csrf, outcome: outcome)
            }
        }
        router.post("/dashboard/apps/:app/alerts/:id/acknowledge") { request, context in
            let app = try context.parameters.require("app")
            let back = "/dashboard/apps/\(percentEncode(app))/alerts"
            guard let grant = try await grant(request), grant.app == app else {
                return Self.redirect("/dashboard/sign-in?next=" + percentEncode(back))
            }
            let body = try await request.body.collect(upTo: 16 * 1024)
            let form = try? URLEncodedFormDecoder().decode(AcknowledgeForm.self, from: String(buffer: body))
            guard let sent = form?.csrf, AccessTokens.equal(sent, grant.csrfToken) else {
                throw HTTPError(.forbidden, message: "the acknowledge form's token does not match this session")
            }
            guard let text = context.parameters.get("id"), text.utf8.count <= 19, let id = Int64(text), id > 0 else {
                return Self.redirect(back + "?problem=unknown")
            }
            let key = (form?.adminKey ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !key.isEmpty, key.count <= 200, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
                  let keyGrant = try await pages.store.authenticate(key: key, now: clock()), keyGrant.kind == .admin, keyGrant.app == app else {
                return Self.redirect(back + "?problem=key")
            }
            guard try await pages.store.acknowledgeAlert(app: app, id: id, now: clock()) != nil else {
                return Self.redirect(back + "?problem=unknown")
            }
            return Self.redirect(back + "?done=\(id)")
        }
    }
}

/// How an acknowledgement went, as the alerts page says it: in fixed words, never text
/// from the request.
public enum AlertOutcome: Sendable, Hashable {
    /// The alert with this id was acknowledged.
    case acknowledged(Int64)
    /// The key was not this app's admin key.
    case wrongKey
    /// The app has no such alert.
    case unknownAlert

    /// The outcome a redirect's query names (`done=ID`, `problem=key`, `problem=unknown`), or `nil`.
    init?(parameters: Parameters) {
        if let done = parameters["done"], done.utf8.count <= 19, let id = Int64(done), id > 0 {
            self = .acknowledged(id)
        } else if parameters["problem"] == "key" {
            self = .wrongKey
        } else if parameters["problem"] == "unknown" {
            self = .unknownAlert
        } else {
            return nil
        }
    }

    /// The sentence shown.
    var message: String {
        switch self {
        case .acknowledged(let id): "Alert \(id) is acknowledged."
        case .wrongKey: "Not acknowledged: that is not this app's admin key (fsa_…). The read key you signed in with cannot change anything."
        case .unknownAlert: "Not acknowledged: this app has no such alert."
        }
    }

    /// Whether it went wrong.
    var isProblem: Bool {
        if case .acknowledged = self { return false }
        return true
    }
}
