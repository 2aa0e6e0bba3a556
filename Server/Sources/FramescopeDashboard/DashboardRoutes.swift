import Foundation
import FramescopeCollector
import FramescopeCore
import Hummingbird

/// The dashboard's routes, added to the collector's router:
///
/// - `GET /` and `GET /dashboard`: to the signed-in app's overview, or to the sign-in form.
/// - `GET /dashboard/sign-in`: the form, with a CSRF token in a hidden field and in the
///   cookie ``DashboardRoutes/csrfCookieName`` (double submit).
/// - `POST /dashboard/sign-in` (form fields `key`, a read key, and `csrf`): opens a
///   server-side session (``DashboardSession``, 12 hours) whose random id goes into the
///   HTTP-only, `SameSite=Strict` cookie ``DashboardRoutes/cookieName``, scoped to
///   `/dashboard`, `Secure` when the request came over TLS as a trusted proxy says. The
///   read key itself is never stored in the browser; rotating it ends the session.
/// - `POST /dashboard/sign-out` (form field `csrf`, the session's token): ends the session.
/// - `GET /dashboard/dashboard.js`: the pages' script (the CSP allows scripts from this
///   origin only, none inline).
/// - `GET /dashboard/apps/{app}`, `…/screens`, `…/screens/{screen}`, `…/compare`: the pages,
///   for the session's app only; without a live session, a redirect to the sign-in form.
public struct DashboardRoutes: Sendable {
    /// The cookie that holds the session id.
    public static let cookieName = "framescope_session"
    /// The cookie that holds the sign-in form's CSRF token.
    public static let csrfCookieName = "framescope_csrf"

    let pages: DashboardPages
    let clock: @Sendable () -> Double
    let trustProxy: Bool

    /// Routes that render `pages`, with `clock` giving the current time (Unix seconds).
    /// - Parameter trustProxy: Whether a proxy in front sets `X-Forwarded-Proto`; its
    ///   `https` then marks cookies `Secure`.
    public init(pages: DashboardPages, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, trustProxy: Bool = false) {
        self.pages = pages
        self.clock = clock
        self.trustProxy = trustProxy
    }

    /// Adds the routes to `router`.
    public func register(on router: Router<CollectorRequestContext>) {
        router.get("/") { _, _ in Self.redirect("/dashboard") }
        router.get("/dashboard") { request, _ in
            guard let grant = try await grant(request) else { return Self.redirect("/dashboard/sign-in") }
            return Self.redirect("/dashboard/apps/\(percentEncode(grant.app))")
        }
        router.get("/dashboard/dashboard.js") { _, _ in
            Response(status: .ok, headers: [
                .contentType: "text/javascript; charset=utf-8",
                .cacheControl: "no-cache",
                .init("X-Content-Type-Options")!: "nosniff",
            ], body: .init(byteBuffer: ByteBuffer(string: pages.script)))
        }
        router.get("/dashboard/sign-in") { request, _ in
            signInForm(request, error: nil, next: Self.safeNext(request.uri.queryParameters["next"].map(String.init)))
        }
        router.post("/dashboard/sign-in") { request, _ in
            let body = try await request.body.collect(upTo: 16 * 1024)
            guard let form = try? URLEncodedFormDecoder().decode(SignInForm.self, from: String(buffer: body)) else {
                return signInForm(request, error: "Enter the app's read key.", next: "", status: .badRequest)
            }
            let next = Self.safeNext(form.next)
            guard let expected = request.cookies[Self.csrfCookieName]?.value, !expected.isEmpty, let sent = form.csrf,
                  AccessTokens.equal(sent, expected) else {
                return signInForm(request, error: "The sign-in form expired; please sign in again.", next: next, status: .forbidden)
            }
            let key = form.key.trimmingCharacters(in: .whitespacesAndNewlines)
            guard key.count <= 200, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
                  let grant = try await pages.store.authenticate(key: key, now: clock()) else {
                return signInForm(request, error: "That key is unknown or revoked.", next: next, status: .unauthorized)
            }
            guard grant.kind == .read else {
                return signInForm(request, error: "That is an \(grant.kind.rawValue) key; the dashboard needs the app's read key.", next: next, status: .unauthorized)
            }
            guard let session = try await pages.store.createSession(readKey: key, lifetime: AccessLifetimes.session, now: clock()) else {
                return signInForm(request, error: "That key is unknown or revoked.", next: next, status: .unauthorized)
            }
            let appPath = "/dashboard/apps/\(percentEncode(session.app))"
            var response = Self.redirect(next.hasPrefix(appPath) ? next : appPath)
            response.setCookie(cookie(request, Self.cookieName, session.id, maxAge: Int(AccessLifetimes.session)))
            response.setCookie(cookie(request, Self.csrfCookieName, "", maxAge: 0))
            return response
        }
        router.post("/dashboard/sign-out") { request, _ in
            let body = try await request.body.collect(upTo: 16 * 1024)
            let form = try? URLEncodedFormDecoder().decode(SignOutForm.self, from: String(buffer: body))
            guard let id = request.cookies[Self.cookieName]?.value, !id.isEmpty,
                  let session = try await pages.store.session(id: id, now: clock()) else {
                return Self.redirect("/dashboard/sign-in")
            }
            guard let sent = form?.csrf, AccessTokens.equal(sent, session.csrfToken) else {
                throw HTTPError(.forbidden, message: "the sign-out form's token does not match this session")
            }
            try await pages.store.deleteSession(id: id)
            var response = Self.redirect("/dashboard/sign-in")
            response.setCookie(cookie(request, Self.cookieName, "", maxAge: 0))
            return response
        }
        router.get("/dashboard/apps/:app") { request, context in
            try await page(request, context) { app, filters, now, csrf in try await pages.overview(app: app, filters: filters, now: now, csrfToken: csrf) }
        }
        router.get("/dashboard/apps/:app/screens") { request, context in
            try await page(request, context) { app, filters, now, csrf in
                try await pages.screens(app: app, filters: filters, sort: request.uri.queryParameters["sort"].map(String.init),
                                        page: request.uri.queryParameters["page"].flatMap { Int($0) } ?? 1, now: now, csrfToken: csrf)
            }
        }
        router.get("/dashboard/apps/:app/screens/:screen") { request, context in
            let screen = CanonicalText.nfc(try context.parameters.require("screen").removingPercentEncoding ?? "")
            return try await page(request, context) { app, filters, now, csrf in
                try await pages.screen(app: app, screen: screen, filters: filters, now: now, csrfToken: csrf)
            }
        }
        router.get("/dashboard/apps/:app/compare") { request, context in
            let parameters = request.uri.queryParameters
            return try await page(request, context) { app, filters, now, csrf in
                try await pages.compare(app: app, filters: filters, baseline: parameters["baseline"].map { CanonicalText.nfc(String($0)) },
                                        candidate: parameters["candidate"].map { CanonicalText.nfc(String($0)) }, now: now, csrfToken: csrf,
                                        screen: parameters["screen"].map { CanonicalText.nfc(String($0)) })
            }
        }
        router.get("/dashboard/apps/:app/hangs") { request, context in
            let screen = request.uri.queryParameters["screen"].map { CanonicalText.nfc(String($0)) }
            return try await page(request, context) { app, filters, now, csrf in
                try await pages.hangs(app: app, filters: filters, now: now, csrfToken: csrf, screen: screen)
            }
        }
        registerAlerts(on: router)
    }

    /// The form the sign-in page posts.
    struct SignInForm: Decodable {
        var key: String
        var next: String?
        var csrf: String?
    }

    /// The form the sign-out button posts.
    struct SignOutForm: Decodable {
        var csrf: String?
    }

    /// The grant of the request's session cookie, if it names a live session.
    func grant(_ request: Request) async throws -> SessionGrant? {
        guard let id = request.cookies[Self.cookieName]?.value, !id.isEmpty, id.count <= 128 else { return nil }
        return try await pages.store.session(id: id, now: clock())
    }

    /// The sign-in form with a fresh CSRF token, in the page and in its cookie.
    func signInForm(_ request: Request, error: String?, next: String, status: HTTPResponse.Status = .ok) -> Response {
        let token = AccessTokens.random()
        var response = Self.html(pages.signIn(error: error, next: next, csrfToken: token), status: status)
        response.setCookie(cookie(request, Self.csrfCookieName, token, maxAge: 3600))
        return response
    }

    /// An HTTP-only, `SameSite=Strict` cookie for `/dashboard`, `Secure` over TLS.
    func cookie(_ request: Request, _ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/dashboard", secure: isSecure(request), httpOnly: true, sameSite: .strict)
    }

    /// Whether the browser reached us over TLS: the request's scheme, or a trusted proxy's `X-Forwarded-Proto`.
    func isSecure(_ request: Request) -> Bool {
        if request.uri.scheme == .https { return true }
        guard trustProxy, let proto = request.headers[.init("X-Forwarded-Proto")!] else { return false }
        return proto.split(separator: ",").first?.lowercased().trimmingCharacters(in: CharacterSet.whitespaces) == "https"
    }

    /// Renders a page for the path's app when the cookie's key belongs to it; otherwise
    /// sends the browser to the sign-in form, which comes back here afterwards.
    func page(_ request: Request, _ context: CollectorRequestContext,
              render: (String, DashboardFilters, Double, String) async throws -> String) async throws -> Response {
        let app = try context.parameters.require("app")
        let here = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        guard let grant = try await grant(request), grant.app == app else {
            return Self.redirect("/dashboard/sign-in?next=" + percentEncode(here))
        }
        var parameters: [String: String] = [:]
        // Values in NFC, as ingest stores them (``CanonicalText``).
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = CanonicalText.nfc(String(value)) }
        let started = ContinuousClock.now
        let declared = try await pages.queries.tagKeys(app: app)?.map(\.key) ?? []
        let html = try await render(app, DashboardFilters(parameters: parameters, declaredTags: declared), clock(), grant.csrfToken)
        let elapsed = ContinuousClock.now - started
        context.logger.debug("page rendered", metadata: ["path": .string(request.uri.path),
                                                         "ms": .stringConvertible(Double(elapsed / .microseconds(1)) / 1000)])
        var response = Self.html(html)
        response.headers[.init("Server-Timing")!] = "render;dur=\(Double(elapsed / .microseconds(1)) / 1000)"
        return response
    }

    /// A `next` value that stays on this dashboard (a path under `/dashboard/apps/`), or empty.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/dashboard/apps/"), !next.contains("//"), !next.contains("\\") else { return "" }
        return next
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            .init("X-Content-Type-Options")!: "nosniff",
            .init("Referrer-Policy")!: "same-origin",
        ], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
