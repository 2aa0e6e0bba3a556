import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 14, item 5: what a device sends is shown, never run.
@Suite("Hostile strings in the dashboard")
struct HostileDashboardTests {
    /// Strings whose markup character and a combining or prepend neighbour form one `Character`.
    static let model = "x\"\u{301} autofocus onfocus=alert(1) y=\"\u{301}"
    static let screen = "<\u{301}img src=x onerror=alert(2)>"

    @Test("escapeMarkup escapes per scalar: a quote or '<' inside a grapheme cluster is escaped too")
    func escapesScalars() {
        #expect(escapeMarkup("a\"\u{301}b") == "a&quot;\u{301}b")
        #expect(escapeMarkup("<\u{301}img>") == "&lt;\u{301}img&gt;")
        #expect(escapeMarkup("'&'") == "&#39;&amp;&#39;")
        // The library's own HTML escaping compares Characters: this is the bug the content type works around.
        #expect(ScalarHTMLContentType().escapeText("\"\u{301}") == "&quot;\u{301}")
    }

    @Test("Every page renders a hostile device model and screen name as text: no raw quote or tag from the data survives")
    func pagesEscapeDeviceStrings() async throws {
        let now = CollectorRouteTests.now
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop <b>\"\u{301}", id: "shop")
        var batch = makeBatch(id: "xss", app: "shop", screen: Self.screen, count: 3, start: now - 3600)
        batch.device.model = Self.model
        batch.app.version = "3.0\"\u{301} onmouseover=alert(3)"
        // A hang whose stack names an image by markup (issue 33): the Hangs page shows it.
        var stack = HangStackFixtures.stack(site: 0x215c)
        stack.images[0].name = "Shop<\u{301}img src=x onerror=alert(1)> \"\u{301} autofocus"
        batch.events[0].hangs = [HangRecord(offset: 0.5, duration: 0.75, stack: stack)]
        let body = try jsonData(batch)
        let pages = try DashboardPages(store: temporary.store)
        let router = Collector(store: temporary.store, clock: { now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { now }).register(on: router)
        }).router
        try await Application(router: router).test(.router) { client in
            let posted = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                  body: ByteBuffer(data: body))
            #expect(posted.status == .accepted)
            let (_, cookie) = try await signIn(client, key: shop.readKey)
            let encodedScreen = percentEncode(Self.screen)
            for path in ["/dashboard/apps/shop?days=7", "/dashboard/apps/shop/screens?days=7", "/dashboard/apps/shop/screens/\(encodedScreen)?days=7",
                         "/dashboard/apps/shop/compare?days=7", "/dashboard/apps/shop/screens?days=7&deviceModel=\(percentEncode(Self.model))",
                         "/dashboard/apps/shop/hangs?days=7"] {
                let response = try await client.execute(uri: path, method: .get, headers: cookie)
                #expect(response.status == .ok, "\(path)")
                let csp = response.headers[.contentSecurityPolicy] ?? ""
                #expect(csp.contains("script-src 'self'") && !csp.contains("script-src 'unsafe-inline'"), "\(path)")
                let html = String(buffer: response.body)
                for raw in ["\"\u{301} autofocus", "<\u{301}img", "\"\u{301} onmouseover", "<b>"] {
                    #expect(!html.contains(raw), "\(path) contains \(raw.debugDescription) raw")
                }
                #expect(!html.contains("<script>"), "\(path) has an inline script")
                #expect(html.contains("<script src=\"/dashboard/dashboard.js\"></script>"), "\(path)")
            }
            let script = try await client.execute(uri: "/dashboard/dashboard.js", method: .get)
            #expect(script.status == .ok)
            #expect(script.headers[.contentType]?.hasPrefix("text/javascript") == true)
            #expect(String(buffer: script.body) == pages.script)
        }
    }
}

/// The value of cookie `name` among a response's `Set-Cookie` headers.
func setCookieValue(_ response: TestResponse, _ name: String) -> String? {
    for header in response.headers[values: .setCookie] {
        let pair = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        if pair.hasPrefix(name + "=") { return String(pair.dropFirst(name.count + 1)) }
    }
    return nil
}

/// The value of the hidden input `csrf` in a page.
func csrfField(_ html: String) -> String? {
    guard let range = html.range(of: "name=\"csrf\" value=\"") else { return nil }
    return String(html[range.upperBound...].prefix { $0 != "\"" })
}

/// Signs in through the form as a browser does: GET for the CSRF cookie and field, then
/// POST with both. Returns the POST's response and the session cookie to send after it.
func signIn(_ client: any TestClientProtocol, key: String, next: String = "") async throws -> (response: TestResponse, cookie: HTTPFields) {
    let form = try await client.execute(uri: "/dashboard/sign-in", method: .get)
    let token = try #require(csrfField(String(buffer: form.body)))
    #expect(setCookieValue(form, DashboardRoutes.csrfCookieName) == token)
    let body = "key=\(key)&csrf=\(token)" + (next.isEmpty ? "" : "&next=\(percentEncode(next))")
    let response = try await client.execute(uri: "/dashboard/sign-in", method: .post,
                                            headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "\(DashboardRoutes.csrfCookieName)=\(token)"],
                                            body: ByteBuffer(string: body))
    let session = setCookieValue(response, DashboardRoutes.cookieName) ?? ""
    return (response, [.cookie: "\(DashboardRoutes.cookieName)=\(session)"])
}

@Suite("Dashboard sessions")
struct DashboardSessionTests {
    static let now = CollectorRouteTests.now

    func withDashboard(trustProxy: Bool = false,
                       _ body: @escaping @Sendable (any TestClientProtocol, SQLiteStore, AppCredentials) async throws -> Void) async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        let pages = try DashboardPages(store: temporary.store)
        let router = Collector(store: temporary.store, clock: { Self.now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { Self.now }, trustProxy: trustProxy).register(on: router)
        }).router
        let store = temporary.store
        try await Application(router: router).test(.router) { client in try await body(client, store, shop) }
        _ = temporary
    }

    @Test("The cookie holds a random session id, never the read key; the session opens the pages")
    func sessionNotKey() async throws {
        try await withDashboard { client, _, shop in
            let (response, cookie) = try await signIn(client, key: shop.readKey)
            #expect(response.status == .seeOther)
            let session = try #require(setCookieValue(response, DashboardRoutes.cookieName))
            #expect(session.count == 48 && session != shop.readKey && !session.hasPrefix("fsr_"))
            #expect(try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).status == .ok)
            // The read key itself as a cookie opens nothing.
            let raw = try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: [.cookie: "\(DashboardRoutes.cookieName)=\(shop.readKey)"])
            #expect(raw.status == .seeOther)
        }
    }

    @Test("Sign-in without the form's CSRF token, or with another, is refused with 403")
    func signInCSRF() async throws {
        try await withDashboard { client, _, shop in
            let headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            let none = try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: headers, body: ByteBuffer(string: "key=\(shop.readKey)"))
            #expect(none.status == .forbidden)
            #expect(setCookieValue(none, DashboardRoutes.cookieName) == nil)
            var forged = headers
            forged[.cookie] = "\(DashboardRoutes.csrfCookieName)=aaaa"
            let mismatch = try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: forged,
                                                    body: ByteBuffer(string: "key=\(shop.readKey)&csrf=bbbb"))
            #expect(mismatch.status == .forbidden)
        }
    }

    @Test("Sign-out needs the session's CSRF token, and ends the session on the server")
    func signOutCSRF() async throws {
        try await withDashboard { client, _, shop in
            let (_, cookie) = try await signIn(client, key: shop.readKey)
            let page = String(buffer: try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).body)
            let token = try #require(csrfField(page))
            var form = cookie
            form[.contentType] = "application/x-www-form-urlencoded"
            let forged = try await client.execute(uri: "/dashboard/sign-out", method: .post, headers: form, body: ByteBuffer(string: "csrf=nope"))
            #expect(forged.status == .forbidden)
            #expect(try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).status == .ok)
            let out = try await client.execute(uri: "/dashboard/sign-out", method: .post, headers: form, body: ByteBuffer(string: "csrf=\(token)"))
            #expect(out.status == .seeOther)
            #expect(out.headers[values: .setCookie].contains { $0.contains("Max-Age=0") })
            // The old cookie no longer opens anything, even if the browser kept it.
            #expect(try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).status == .seeOther)
        }
    }

    @Test("Rotating the read key ends its sessions at once; rotating the ingest key keeps the old one for its grace period")
    func rotation() async throws {
        try await withDashboard { client, store, shop in
            let (_, cookie) = try await signIn(client, key: shop.readKey)
            let newIngest = try #require(try await store.rotateKey(app: "shop", kind: .ingest, gracePeriod: 3600, now: Self.now))
            // Ingest rotation leaves reading alone.
            #expect(try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).status == .ok)
            let newRead = try #require(try await store.rotateKey(app: "shop", kind: .read, gracePeriod: 0, now: Self.now))
            #expect(try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).status == .seeOther)
            #expect(try await store.authenticate(key: shop.readKey) == nil)
            #expect(try await store.authenticate(key: newRead) == KeyGrant(app: "shop", kind: .read))
            // Both ingest keys work now (the store checks grace against the real clock:
            // an hour from the test's fixed now has long passed, so use a fresh rotation).
            let fresh = try #require(try await store.rotateKey(app: "shop", kind: .ingest, gracePeriod: 3600, now: Date().timeIntervalSince1970))
            #expect(try await store.authenticate(key: newIngest) == KeyGrant(app: "shop", kind: .ingest))
            #expect(try await store.authenticate(key: fresh) == KeyGrant(app: "shop", kind: .ingest))
            // A rotation with no grace ends every older ingest key at once.
            let last = try #require(try await store.rotateKey(app: "shop", kind: .ingest, gracePeriod: 0, now: Date().timeIntervalSince1970))
            #expect(try await store.authenticate(key: fresh) == nil)
            #expect(try await store.authenticate(key: newIngest) == nil)
            #expect(try await store.authenticate(key: last) == KeyGrant(app: "shop", kind: .ingest))
            #expect(try await store.rotateKey(app: "nope", kind: .read, gracePeriod: 0, now: Self.now) == nil)
        }
    }

    @Test("Cookies are Secure when a trusted proxy says https, and only then")
    func secureCookies() async throws {
        for trust in [false, true] {
            try await withDashboard(trustProxy: trust) { client, _, _ in
                let form = try await client.execute(uri: "/dashboard/sign-in", method: .get, headers: [.init("X-Forwarded-Proto")!: "https"])
                let header = try #require(form.headers[values: .setCookie].first { $0.hasPrefix(DashboardRoutes.csrfCookieName) })
                #expect(header.contains("Secure") == trust)
            }
        }
    }

    @Test("The retention sweep forgets batch ids after the ledger window and expired sessions; a batch id inside it stays a duplicate")
    func ledgerRetention() async throws {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: "shop")
        let batch = makeBatch(id: "old", start: Self.now - 600)
        var ingest = IngestBatch(app: "shop", batchId: "old", appVersion: "1", osVersion: "18", deviceModel: "x",
                                 events: batch.events.map { ($0, ISO8601.parse($0.startedAt) ?? 0) }, rawEvents: batch.events.map { _ in "{}" },
                                 receivedAt: Self.now - 40 * 86_400)
        _ = try await temporary.store.ingest(ingest)
        ingest.batchId = "recent"
        ingest.receivedAt = Self.now - 10 * 86_400
        _ = try await temporary.store.ingest(ingest)
        let sweep = RetentionService(store: temporary.store, retention: 400 * 86_400, clock: { Self.now })
        _ = try await sweep.sweep()
        ingest.batchId = "old"
        #expect(try await temporary.store.ingest(ingest).duplicate == false, "forgotten after 32 days")
        ingest.batchId = "recent"
        #expect(try await temporary.store.ingest(ingest).duplicate == true, "remembered within 32 days")
    }
}

@Suite("Long lists")
struct LongListTests {
    @Test("The screens page shows 50 screens at a time, with links to the neighbouring pages")
    func paging() async throws {
        let now = CollectorRouteTests.now
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        let report = makeBatch(id: "x", count: 1, start: now).events[0]
        var events: [(ScreenVisitEvent, Double)] = []
        for index in 0..<120 {
            var event = report
            event.screen = String(format: "Screen %03d", index)
            events.append((event, now - 3600 + Double(index)))
        }
        _ = try await temporary.store.ingest(IngestBatch(app: "shop", batchId: "many", appVersion: "1", osVersion: "18", deviceModel: "x",
                                                         events: events, rawEvents: events.map { _ in "{}" }, receivedAt: now))
        let pages = try DashboardPages(store: temporary.store)
        let router = Collector(store: temporary.store, clock: { now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { now }).register(on: router)
        }).router
        try await Application(router: router).test(.router) { client in
            let (_, cookie) = try await signIn(client, key: shop.readKey)
            var seen: [String] = []
            for page in 1...3 {
                let html = String(buffer: try await client.execute(uri: "/dashboard/apps/shop/screens?days=7&page=\(page)", method: .get, headers: cookie).body)
                let rows = DashboardTests().attributeValues(html, element: "tr", attribute: "data-screen")
                #expect(rows.count == (page < 3 ? 50 : 20), "page \(page)")
                seen += rows
                #expect(html.contains("rel=\"next\"") == (page < 3))
                #expect(html.contains("rel=\"prev\"") == (page > 1))
            }
            #expect(Set(seen).count == 120)
            let first = String(buffer: try await client.execute(uri: "/dashboard/apps/shop/screens?days=7", method: .get, headers: cookie).body)
            #expect(first.contains("Screens 1–50 of 120"))
        }
    }
}
