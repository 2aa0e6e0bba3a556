import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
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
        let body = try jsonData(batch)
        let pages = try DashboardPages(store: temporary.store)
        let router = makeCollectorRouter(store: temporary.store, clock: { now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { now }).register(on: router)
        })
        try await Application(router: router).test(.router) { client in
            let posted = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                  body: ByteBuffer(data: body))
            #expect(posted.status == .accepted)
            let cookie: HTTPFields = [.cookie: "\(DashboardRoutes.cookieName)=\(shop.readKey)"]
            let encodedScreen = percentEncode(Self.screen)
            for path in ["/dashboard/apps/shop?days=7", "/dashboard/apps/shop/screens?days=7", "/dashboard/apps/shop/screens/\(encodedScreen)?days=7",
                         "/dashboard/apps/shop/compare?days=7", "/dashboard/apps/shop/screens?days=7&deviceModel=\(percentEncode(Self.model))"] {
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
