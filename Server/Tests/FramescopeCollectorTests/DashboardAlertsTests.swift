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

@Suite("Dashboard: regression alerts")
struct DashboardAlertsTests {
    static let now = AlertTests.now

    func withDashboard(_ store: SQLiteStore, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let pages = try DashboardPages(store: store)
        let router = Collector(store: store, clock: { Self.now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { Self.now }).register(on: router)
        }).router
        try await Application(router: router).test(.router) { client in try await body(client) }
    }

    func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    @Test("The demo's alerts are listed with screen, figure, versions and change, linking to the compare page filtered to Feed, which shows the alert's figures")
    func demoAlerts() async throws {
        let (temporary, demo) = try await AlertTests.demoStore()
        let store = temporary.store
        let raised = try await AlertEvaluator(store: store).evaluate(now: Self.now)
        try await withDashboard(store) { client in
            let (_, cookie) = try await signIn(client, key: demo.readKey)
            let page = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/alerts", method: .get, headers: cookie).body)
            #expect(page.contains("id=\"alerts-table\""))
            #expect(page.contains("\(raised.count) open, 0 acknowledged"))
            #expect(page.contains("aria-current=\"page\">Alerts</a>"))
            #expect(page.contains("at least 20 distinct installations sent visits of it (the default)"))
            #expect(page.contains("one pass raises at most \(AlertEvaluator.maximumAlertsPerPass) alerts"))
            // The app's own rule, once set.
            var settings = try await store.thresholds(app: "demo") ?? AppThresholds()
            settings.minimumInstallations = 1500
            _ = try await store.setThresholds(settings, app: "demo")
            let changed = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/alerts", method: .get, headers: cookie).body)
            #expect(changed.contains("at least 1\u{202F}500 distinct installations sent visits of it (set for this app)"), "\(changed)")
            let link = "/dashboard/apps/demo/compare?days=30&amp;baseline=3.0.0&amp;candidate=3.1.0&amp;screen=Feed"
            for alert in raised {
                #expect(page.contains("data-alert=\"\(alert.id)\" data-screen=\"Feed\" data-metric=\"\(alert.metric)\""))
                #expect(page.contains(formatFigure(alert.figures.change, unit: alert.figures.unit)))
            }
            #expect(page.contains("<a href=\"\(link)\">3.0.0 → 3.1.0</a>"))
            // The link: the compare page with Feed's row only, the same figures as the alert.
            let compare = String(buffer: try await client.execute(uri: link.replacingOccurrences(of: "&amp;", with: "&"), method: .get, headers: cookie).body)
            #expect(count("<tr data-screen=", in: compare) == 1)
            #expect(compare.contains("<tr data-screen=\"Feed\" data-verdict=\"regressed\">"))
            #expect(compare.contains("id=\"only-screen\""))
            for alert in raised {
                let low = try #require(alert.figures.changeLow), high = try #require(alert.figures.changeHigh)
                #expect(compare.contains("interval \(formatFigure(low)) to \(formatFigure(high)) \(alert.figures.unit)"), "\(alert.metric)")
            }
            // Without the screen, every screen is back.
            let all = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/compare?days=30&baseline=3.0.0&candidate=3.1.0", method: .get, headers: cookie).body)
            #expect(count("<tr data-screen=", in: all) > 1)
        }
    }

    @Test("Acknowledging from the page: the session's CSRF token and the app's admin key are both required; the key is never kept")
    func acknowledge() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let shop = try await store.createApp(name: "Shop", id: "shop")
        let other = try await store.createApp(name: "Other", id: "other")
        let alert = try #require(try await store.raiseAlerts([AlertStoreContractTests().alert()], now: Self.now).first)
        try await withDashboard(store) { client in
            let (_, cookie) = try await signIn(client, key: shop.readKey)
            let page = String(buffer: try await client.execute(uri: "/dashboard/apps/shop/alerts", method: .get, headers: cookie).body)
            let token = try #require(csrfField(page))
            #expect(page.contains("action=\"/dashboard/apps/shop/alerts/\(alert.id)/acknowledge\""))
            #expect(page.contains("type=\"password\" name=\"adminKey\""))
            var headers = cookie
            headers[.contentType] = "application/x-www-form-urlencoded"
            func post(_ body: String, id: Int64 = alert.id, headers: HTTPFields = headers) async throws -> TestResponse {
                try await client.execute(uri: "/dashboard/apps/shop/alerts/\(id)/acknowledge", method: .post, headers: headers, body: ByteBuffer(string: body))
            }
            // Without the session's token: refused, nothing changes.
            #expect(try await post("adminKey=\(shop.adminKey)&csrf=wrong").status == .forbidden)
            #expect(try await post("adminKey=\(shop.adminKey)").status == .forbidden)
            // Without a session: to the sign-in form.
            #expect(try await post("adminKey=\(shop.adminKey)&csrf=\(token)", headers: [.contentType: "application/x-www-form-urlencoded"]).headers[.location]?.hasPrefix("/dashboard/sign-in") == true)
            // The read key, another app's admin key, garbage: not acknowledged, said in fixed words.
            for key in [shop.readKey, other.adminKey, "fsa_nope", "", "<script>"] {
                let response = try await post("adminKey=\(percentEncode(key))&csrf=\(token)")
                #expect(response.status == .seeOther && response.headers[.location] == "/dashboard/apps/shop/alerts?problem=key", "\(key.prefix(4))")
            }
            #expect(try await store.alerts(app: "shop", limit: 1).first?.acknowledgedAt == nil)
            let refused = String(buffer: try await client.execute(uri: "/dashboard/apps/shop/alerts?problem=key", method: .get, headers: cookie).body)
            #expect(refused.contains("Not acknowledged: that is not this app&#39;s admin key") || refused.contains("Not acknowledged: that is not this app&#x27;s admin key"))
            #expect(try await post("adminKey=\(shop.adminKey)&csrf=\(token)", id: 999).headers[.location] == "/dashboard/apps/shop/alerts?problem=unknown")
            // The admin key: acknowledged; the redirect carries only the id.
            let done = try await post("adminKey=\(shop.adminKey)&csrf=\(token)")
            #expect(done.headers[.location] == "/dashboard/apps/shop/alerts?done=\(alert.id)")
            #expect(done.headers[values: .setCookie].isEmpty)
            #expect(try await store.alerts(app: "shop", limit: 1).first?.acknowledgedAt == ISO8601.format(unixSeconds: Self.now))
            let after = String(buffer: try await client.execute(uri: "/dashboard/apps/shop/alerts?done=\(alert.id)", method: .get, headers: cookie).body)
            #expect(after.contains("Alert \(alert.id) is acknowledged.") && after.contains("0 open, 1 acknowledged"))
            #expect(!after.contains("name=\"adminKey\"") && !after.contains(shop.adminKey))
            // Another app's session cannot reach this app's alerts.
            let (_, otherCookie) = try await signIn(client, key: other.readKey)
            #expect(try await client.execute(uri: "/dashboard/apps/shop/alerts", method: .get, headers: otherCookie).status == .seeOther)
        }
    }

    @Test("Hostile screen names and versions in alerts are escaped on the page and encoded in its links")
    func hostile() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let shop = try await store.createApp(name: "Shop", id: "shop")
        let screens = ["<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>", "'\u{301} onmouseover='alert(3)", "<\u{301}b>bold"]
        var hostile = screens.map { screen in
            var alert = AlertStoreContractTests().alert(screen: screen)
            alert.candidate = "1.1\"><svg onload=alert(4)>"
            return alert
        }
        hostile[0].baseline = "<i>1.0"
        _ = try await store.raiseAlerts(hostile, now: Self.now)
        try await withDashboard(store) { client in
            let (_, cookie) = try await signIn(client, key: shop.readKey)
            let page = String(buffer: try await client.execute(uri: "/dashboard/apps/shop/alerts", method: .get, headers: cookie).body)
            #expect(count("<tr data-alert=", in: page) == screens.count)
            for injected in ["<script>alert", "<img", "<svg", "<i>", "<b>", "' onmouseover", "<\u{301}b>"] {
                #expect(!page.contains(injected), "\(injected)")
            }
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(page.contains("screen=%3Cscript%3Ealert%281%29%3C%2Fscript%3E"))
        }
    }
}
