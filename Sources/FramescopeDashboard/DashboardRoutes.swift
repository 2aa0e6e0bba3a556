import Foundation
import FramescopeCollector
import FramescopeCore
import Hummingbird

/// The dashboard's routes, added to the collector's router:
///
/// - `GET /` and `GET /dashboard`: to the signed-in app's overview, or to the sign-in form.
/// - `GET /dashboard/sign-in`, `POST /dashboard/sign-in` (form field `key`, a read key):
///   on success the key goes into the HTTP-only, `SameSite=Strict` cookie
///   ``DashboardRoutes/cookieName``, scoped to `/dashboard`.
/// - `POST /dashboard/sign-out`: removes the cookie.
/// - `GET /dashboard/dashboard.js`: the pages' script (the CSP allows scripts from this
///   origin only, none inline).
/// - `GET /dashboard/apps/{app}`, `…/screens`, `…/screens/{screen}`, `…/compare`: the pages,
///   for the cookie's app only; without a valid cookie, a redirect to the sign-in form.
public struct DashboardRoutes: Sendable {
    /// The cookie that holds the read key.
    public static let cookieName = "framescope_read_key"

    let pages: DashboardPages
    let clock: @Sendable () -> Double

    /// Routes that render `pages`, with `clock` giving the current time (Unix seconds).
    public init(pages: DashboardPages, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.pages = pages
        self.clock = clock
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
            Self.html(pages.signIn(error: nil, next: Self.safeNext(request.uri.queryParameters["next"].map(String.init))))
        }
        router.post("/dashboard/sign-in") { request, context in
            let body = try await request.body.collect(upTo: 16 * 1024)
            guard let form = try? URLEncodedFormDecoder().decode(SignInForm.self, from: String(buffer: body)) else {
                return Self.html(pages.signIn(error: "Enter the app's read key.", next: ""), status: .badRequest)
            }
            let next = Self.safeNext(form.next)
            let key = form.key.trimmingCharacters(in: .whitespacesAndNewlines)
            guard key.count <= 200, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
                  let grant = try await pages.store.authenticate(key: key) else {
                return Self.html(pages.signIn(error: "That key is unknown or revoked.", next: next), status: .unauthorized)
            }
            guard grant.kind == .read else {
                return Self.html(pages.signIn(error: "That is an ingest key; the dashboard needs the app's read key.", next: next), status: .unauthorized)
            }
            let appPath = "/dashboard/apps/\(percentEncode(grant.app))"
            var response = Self.redirect(next.hasPrefix(appPath) ? next : appPath)
            response.setCookie(Cookie(name: Self.cookieName, value: key, maxAge: 30 * 86_400, path: "/dashboard", httpOnly: true, sameSite: .strict))
            return response
        }
        router.post("/dashboard/sign-out") { _, _ in
            var response = Self.redirect("/dashboard/sign-in")
            response.setCookie(Cookie(name: Self.cookieName, value: "", maxAge: 0, path: "/dashboard", httpOnly: true, sameSite: .strict))
            return response
        }
        router.get("/dashboard/apps/:app") { request, context in
            try await page(request, context) { app, filters, now in try await pages.overview(app: app, filters: filters, now: now) }
        }
        router.get("/dashboard/apps/:app/screens") { request, context in
            try await page(request, context) { app, filters, now in
                try await pages.screens(app: app, filters: filters, sort: request.uri.queryParameters["sort"].map(String.init), now: now)
            }
        }
        router.get("/dashboard/apps/:app/screens/:screen") { request, context in
            let screen = try context.parameters.require("screen").removingPercentEncoding ?? ""
            return try await page(request, context) { app, filters, now in try await pages.screen(app: app, screen: screen, filters: filters, now: now) }
        }
        router.get("/dashboard/apps/:app/compare") { request, context in
            let parameters = request.uri.queryParameters
            return try await page(request, context) { app, filters, now in
                try await pages.compare(app: app, filters: filters, baseline: parameters["baseline"].map(String.init),
                                        candidate: parameters["candidate"].map(String.init), now: now)
            }
        }
    }

    /// The form the sign-in page posts.
    struct SignInForm: Decodable {
        var key: String
        var next: String?
    }

    /// The read grant of the request's cookie, if it holds a valid read key.
    func grant(_ request: Request) async throws -> KeyGrant? {
        guard let key = request.cookies[Self.cookieName]?.value, !key.isEmpty,
              let grant = try await pages.store.authenticate(key: key), grant.kind == .read else { return nil }
        return grant
    }

    /// Renders a page for the path's app when the cookie's key belongs to it; otherwise
    /// sends the browser to the sign-in form, which comes back here afterwards.
    func page(_ request: Request, _ context: CollectorRequestContext,
              render: (String, DashboardFilters, Double) async throws -> String) async throws -> Response {
        let app = try context.parameters.require("app")
        let here = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        guard let grant = try await grant(request), grant.app == app else {
            return Self.redirect("/dashboard/sign-in?next=" + percentEncode(here))
        }
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        let started = ContinuousClock.now
        let html = try await render(app, DashboardFilters(parameters: parameters), clock())
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
