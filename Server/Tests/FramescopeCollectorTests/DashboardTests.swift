import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
import FramescopeDemo
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Dashboard pages")
struct DashboardTests {
    static let now = QueryTests.day0 + 12 * 86_400 + 1800

    /// Values of `attribute` on elements matching a crude pattern, in document order.
    func attributeValues(_ html: String, element: String, attribute: String) -> [String] {
        let pattern = "<\(element)[^>]*\(attribute)=\"([^\"]*)\""
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: html, range: NSRange(html.startIndex..., in: html)).compactMap { match in
            Range(match.range(at: 1), in: html).map { String(html[$0]) }
        }
    }

    @Test("Every page over the demo data: sign-in required, the right screens in the right order, numbers equal to the query API's")
    func pagesOverDemoData() async throws {
        let temporary = try TemporaryStore()
        let (demo, _) = try await DemoData.prepare(store: temporary.store, now: Self.now, days: 12, deviceCount: 40)
        let other = try await temporary.store.createApp(name: "Other", id: "other")
        let pages = try DashboardPages(store: temporary.store)
        let router = Collector(store: temporary.store, clock: { Self.now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { Self.now }).register(on: router)
        }).router
        let store = temporary.store
        let queries = CollectorQueries(store: store)
        let filters = DashboardFilters(parameters: [:])
        let query = filters.query(now: Self.now)
        try await Application(router: router).test(.router) { client in
            // Without the cookie: to the sign-in form, which says what to enter.
            let unsigned = try await client.execute(uri: "/dashboard/apps/demo/screens?days=7", method: .get)
            #expect(unsigned.status == .seeOther)
            #expect(unsigned.headers[.location] == "/dashboard/sign-in?next=%2Fdashboard%2Fapps%2Fdemo%2Fscreens%3Fdays%3D7")
            let form = try await client.execute(uri: "/dashboard/sign-in", method: .get)
            #expect(String(buffer: form.body).contains("name=\"key\""))
            // Wrong keys are refused with a reason; the read key sets the cookie.
            for (key, reason) in [(demo.ingestKey, "ingest key"), ("fsr_nope", "unknown or revoked")] {
                let (refused, _) = try await signIn(client, key: key)
                #expect(refused.status == .unauthorized)
                #expect(String(buffer: refused.body).contains(reason))
            }
            let (signedIn, cookie) = try await signIn(client, key: demo.readKey, next: "/dashboard/apps/demo/screens")
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/dashboard/apps/demo/screens")
            let setCookie = try #require(signedIn.headers[values: .setCookie].first { $0.hasPrefix(DashboardRoutes.cookieName) })
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/dashboard"))
            // Another app's session does not open this app's pages.
            let (_, otherCookie) = try await signIn(client, key: other.readKey)
            let crossed = try await client.execute(uri: "/dashboard/apps/demo", method: .get, headers: otherCookie)
            #expect(crossed.status == .seeOther)

            // Overview: the tiles' values are the query API's.
            let overview = try await client.execute(uri: "/dashboard/apps/demo", method: .get, headers: cookie)
            #expect(overview.status == .ok)
            #expect(overview.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            let html = String(buffer: overview.body)
            let percentiles = try await queries.percentiles(app: "demo", query: query)
            for figure in percentiles.metrics {
                #expect(html.contains("data-metric=\"\(figure.metric)\" data-value=\"\(figure.value.map { String($0) } ?? "")\""), "\(figure.metric)")
                #expect(html.contains("median \(formatFigure(figure.median, unit: figure.unit))"), "\(figure.metric) median")
            }
            #expect(html.contains("Based on about \(groupThousands(percentiles.devices)) devices, \(groupThousands(percentiles.visits)) screen visits"))
            #expect(abs(percentiles.devices - 40) <= 3, "\(percentiles.devices) devices estimated for 40")
            #expect(attributeValues(html, element: "tr", attribute: "data-version") == ["3.0.0", "3.1.0", "3.2.0"])
            // The demo's newest release samples a quarter of its installations: the page says
            // which rates its figures come from, with the query API's counts.
            let rates = try await queries.sampleRates(app: "demo", from: query.from, to: query.to)
            #expect(rates.map(\.sampleRate) == [0.25, 1])
            #expect(rates.reduce(0) { $0 + $1.visits } == percentiles.visits, "every visit counted at one rate")
            let note = "Figures from installations sampled at 25\u{202F}% (\(groupThousands(rates[0].visits)) visits) and all installations"
                + " (\(groupThousands(rates[1].visits)) visits); visits are counted as they arrived, not scaled up."
            #expect(html.contains("<p class=\"basis\" id=\"sampling-note\">\(note)</p>"))
            #expect(html.components(separatedBy: "class=\"point\"").count - 1 >= 2 * 10, "trend points")

            // Screens: worst first, as the worst-screens query ranks them.
            let screens = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/screens", method: .get, headers: cookie).body)
            let worst = try await queries.worstScreens(app: "demo", query: query, figure: QueryFigure(.hitchRatio), limit: 100, minimumVisits: 0)
            #expect(attributeValues(screens, element: "tr", attribute: "data-screen") == worst.screens.map(\.screen))
            #expect(worst.screens.count == 6)
            // Every data value is in the API's unit: the p95 frame duration in seconds, as the screens route gives it.
            let apiScreens = try await store.screens(app: "demo", query: query)
            for screen in apiScreens {
                let p95 = try #require(screen.report.frameDuration(atQuantile: 0.95))
                #expect(screens.contains("data-metric=\"frameDuration.p95\" data-value=\"\(p95)\""), "\(screen.screen)")
            }
            // Sorting by a column knows which way is worse from the registry: lower FPS, higher hitch ratio.
            #expect(screens.contains("data-sort=\"averageFPS\" data-higher-is-worse=\"false\""))
            #expect(screens.contains("data-sort=\"hitchRatio\" data-higher-is-worse=\"true\""))
            let byFPS = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/screens?sort=averageFPS", method: .get, headers: cookie).body)
            let lowestFPS = try await queries.worstScreens(app: "demo", query: query, figure: QueryFigure(.averageFPS), limit: 100, minimumVisits: 0)
            #expect(attributeValues(byFPS, element: "tr", attribute: "data-screen") == lowestFPS.screens.map(\.screen))
            // A filter changes the figures.
            let filtered = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/screens?appVersion=3.1.0", method: .get, headers: cookie).body)
            let onlyNew = try await queries.worstScreens(app: "demo", query: DashboardFilters(parameters: ["appVersion": "3.1.0"]).query(now: Self.now),
                                                         figure: QueryFigure(.hitchRatio), limit: 100, minimumVisits: 0)
            #expect(attributeValues(filtered, element: "tr", attribute: "data-screen") == onlyNew.screens.map(\.screen))
            #expect(filtered.contains("<option value=\"3.1.0\" selected>"))
            let empty = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/screens?deviceModel=none", method: .get, headers: cookie).body)
            #expect(empty.contains("No data for these filters."))
            #expect(!empty.contains("class=\"point\""))

            // Screen detail: the distribution's markers are the merged report's percentiles.
            let feedPage = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/screens/Feed", method: .get, headers: cookie).body)
            let feed = try #require(try await store.screens(app: "demo", query: filters.query(now: Self.now, screen: "Feed")).first)
            #expect(attributeValues(feedPage, element: "g", attribute: "data-quantile") == ["p50", "p90", "p95", "p99"])
            let p95 = try #require(feed.report.frameDuration(atQuantile: 0.95))
            #expect(feedPage.contains("data-quantile=\"p95\" data-ms=\"\(p95 * 1000)\""))
            for breakdown in ["by-appVersion", "by-osVersion", "by-deviceModel", "by-network", "by-lowPower", "by-refreshClass", "by-refreshRate"] {
                #expect(feedPage.contains("id=\"\(breakdown)\""), "\(breakdown)")
            }

            #expect(attributeValues(feedPage, element: "g", attribute: "data-label").contains("capped at 60 Hz (low-power mode)"))
            // Compare: the newest version against the one before by default; regressions first.
            let fix = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/compare", method: .get, headers: cookie).body)
            #expect(fix.contains("<option value=\"3.1.0\" selected>") && fix.contains("3.2.0 against 3.1.0"))
            let regression = String(buffer: try await client.execute(uri: "/dashboard/apps/demo/compare?baseline=3.0.0&candidate=3.1.0", method: .get, headers: cookie).body)
            let answer = try await queries.compare(app: "demo", query: query, baseline: "3.0.0", candidate: "3.1.0")
            #expect(attributeValues(regression, element: "tr", attribute: "data-screen") == answer.screens.map(\.screen))
            #expect(attributeValues(regression, element: "tr", attribute: "data-verdict").first == "regressed")
            #expect(answer.screens.first?.screen == "Feed")

            // Sign-out (with the page's CSRF token) ends the session and clears the cookie.
            var signOutHeaders = cookie
            signOutHeaders[.contentType] = "application/x-www-form-urlencoded"
            let token = try #require(csrfField(fix))
            let signOut = try await client.execute(uri: "/dashboard/sign-out", method: .post, headers: signOutHeaders, body: ByteBuffer(string: "csrf=\(token)"))
            #expect(signOut.status == .seeOther)
            #expect(signOut.headers[values: .setCookie].contains { $0.contains("Max-Age=0") })
        }
    }

    @Test("The overview says which sample rates its figures come from when any is below 1, nothing when all are 1; a filtered page says the counts are before filters")
    func samplingNote() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let pages = try DashboardPages(store: store)
        let now = StoreContractTests.now
        func overview(_ parameters: [String: String] = [:]) async throws -> String {
            try await pages.overview(app: "shop", filters: DashboardFilters(parameters: parameters), now: now)
        }
        var full = StoreContractTests.ingestBatch(makeBatch(id: "full", count: 3, start: now - 7200))
        full.sampleRatePPM = SampleRate.full
        _ = try await store.ingest(full)
        let unsampled = try await overview()
        #expect(unsampled.contains("Based on ") && !unsampled.contains("sampling-note") && !unsampled.contains("sampled at"))

        var tenth = StoreContractTests.ingestBatch(makeBatch(id: "tenth", count: 2, start: now - 3600))
        tenth.sampleRatePPM = 100_000
        var one = StoreContractTests.ingestBatch(makeBatch(id: "one", count: 1, start: now - 3000))
        one.sampleRatePPM = 5_000
        _ = try await store.ingest([tenth, one])
        let sampled = try await overview()
        #expect(sampled.contains("<p class=\"basis\" id=\"sampling-note\">Figures from installations sampled at 0.5\u{202F}% (1 visit), "
                                 + "10\u{202F}% (2 visits) and all installations (3 visits); visits are counted as they arrived, not scaled up.</p>"))
        let filtered = try await overview(["appVersion": "1.0"])
        #expect(filtered.contains("not scaled up. These counts are the app&#39;s over the range&#39;s days, before the filters.</p>"), "escaped as every text")
        #expect(DashboardPages.samplingNote([SampleRateVisits(sampleRate: 0.1, visits: 1_200)], filtered: false)
                == "Figures from installations sampled at 10\u{202F}% (1\u{202F}200 visits); visits are counted as they arrived, not scaled up.")
        #expect(DashboardPages.samplingNote([SampleRateVisits(sampleRate: 1, visits: 5)], filtered: true) == nil)
        #expect(DashboardPages.samplingNote([], filtered: false) == nil)
        #expect(DashboardPages.percentText(0.333333) == "33.3333\u{202F}%" && DashboardPages.percentText(0.000001) == "0.0001\u{202F}%")
    }

    @Test("Charts: gaps break the line, every point has its value and unit, labels are escaped, axes are round")
    func charts() {
        let chart = LineChart(title: "Hitch <ratio>", unit: "ms/s", labels: ["a", "b", "c", "d"],
                              series: [.init(name: "whole & motion", values: [1, nil, 3, 4])])
        let svg = chart.svg()
        #expect(svg.components(separatedBy: "<circle").count - 1 == 3)
        #expect(svg.contains(" M") || svg.contains("d=\"M"))
        #expect(svg.components(separatedBy: "M").count - 1 >= 2, "the gap starts a new subpath")
        #expect(svg.contains("Hitch &lt;ratio&gt;") && svg.contains("whole &amp; motion") && !svg.contains("<ratio>"))
        #expect(svg.contains("data-value=\"4.0\"") && svg.contains("4.00 ms/s"))
        #expect(!LineChart(title: "t", unit: "u", labels: ["a"], series: [.init(name: "s", values: [nil])]).hasData)
        #expect(niceTicks(maximum: 23) == [0, 5, 10, 15, 20, 25])
        #expect(niceTicks(maximum: 0.9) == [0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0])
        #expect(formatFigure(nil, unit: "ms/s") == "–")
        #expect(formatFigure(12.345, unit: "ms/s") == "12.3 ms/s")
        #expect(formatFigure(0.04567) == "0.046")
        #expect(groupThousands(1234567) == "1\u{202F}234\u{202F}567")
        #expect(Sparkline(values: [nil, nil], unit: "ms/s").svg().isEmpty)
        var histogram = DurationHistogram()
        histogram.record(seconds: 0.0167, count: 90)
        histogram.record(seconds: 0.0333, count: 10)
        let distribution = DurationDistributionChart(histogram: histogram)
        #expect(abs(distribution.bins().map(\.share).reduce(0, +) - 1) < 1e-9)
        #expect(distribution.svg().components(separatedBy: "class=\"marker\"").count - 1 == 4)
        #expect(Metric.hitchRatio.band(of: 4.9) == .good && Metric.hitchRatio.band(of: 5) == .warning && Metric.hitchRatio.band(of: 10.1) == .critical)
        #expect(Metric.hitchRatio.band(of: nil) == nil && Metric.averageFPS.band(of: 30) == nil && QueryFigure(.motionHitchRatio).metric.band(of: 11) == .critical)
        #expect(DashboardFilters(parameters: ["days": "7", "interval": "hour", "lowPower": "true", "appVersion": "3.1 beta"]).queryString()
                == "?days=7&interval=hour&appVersion=3.1%20beta&lowPower=true")
        #expect(DashboardFilters(parameters: ["days": "31", "interval": "hour"]).days == 30)
        #expect(DashboardFilters(parameters: ["days": "30", "interval": "hour"]).interval == .day, "hours only up to 14 days")
        #expect(DashboardRoutes.safeNext("//evil.example/dashboard/apps/x") == "")
        #expect(DashboardRoutes.safeNext("/dashboard/apps/demo/screens") == "/dashboard/apps/demo/screens")
    }

    @Test("Bar lists: the label column fits the longest label; a label past 50 characters ends in … and the tooltip keeps it whole")
    func barLabels() throws {
        func labelX(_ svg: String) throws -> Double {
            let match = try #require(svg.firstMatch(of: #/class="bar-label" x="([0-9.]+)"/#))
            return try #require(Double(match.1))
        }
        let short = BarList(bars: [.init(label: "60 Hz display", value: 3, basis: "2 visits")], unit: "ms/s", title: "t").svg()
        #expect(try labelX(short) == 144, "short labels keep the 150-unit column")
        // Before, "capped at 60 Hz (low-power mode)" ran past the 150-unit column's left edge.
        let capped = DisplayClass.proMotionCapped.label
        let wide = BarList(bars: [.init(label: capped, value: 3, basis: "2 visits")], unit: "ms/s", title: "t").svg()
        #expect(try labelX(wide) >= Double(capped.count) * 6.2, "the column holds \(capped)")
        let long = String(repeating: "Écran<", count: 20)
        let svg = BarList(bars: [.init(label: long, value: 1, basis: "1 visit")], unit: "ms/s", title: "t").svg()
        let shown = String(repeating: "Écran&lt;", count: 8) + "É…</text>"
        #expect(svg.contains(">" + shown), "cut to 49 characters and …")
        #expect(svg.contains("<title>" + String(repeating: "Écran&lt;", count: 20) + ":"), "the tooltip has it whole")
        #expect(try labelX(svg) < 1000 - 260 - 100, "room is left for the bars")
    }
}

/// The Hangs page over the demo data: groups named from the demo's symbols, merged across
/// releases, the same numbers as `GET …/hangs`, and the stack of each group.
@Suite("Dashboard: hangs")
struct DashboardHangsTests {
    @Test("The demo's hangs: Feed's site named and merged across releases, Checkout's fatal hangs, the same numbers as the API")
    func demoHangs() async throws {
        let now = DashboardTests.now
        let temporary = try TemporaryStore()
        let (demo, _) = try await DemoData.prepare(store: temporary.store, now: now, days: 12, deviceCount: 40)
        let pages = try DashboardPages(store: temporary.store)
        let router = Collector(store: temporary.store, clock: { now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { now }).register(on: router)
        }).router
        try await Application(router: router).test(.router) { client in
            // The page's range: the last 7 days to the next whole hour.
            let to = (now / 3600).rounded(.up) * 3600
            let api = try await client.execute(uri: "/v1/apps/demo/hangs?from=\(ISO8601.format(unixSeconds: to - 7 * 86_400))&to=\(ISO8601.format(unixSeconds: to))",
                                               method: .get, headers: [.authorization: "Bearer \(demo.readKey)"])
            let answer = try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: api.body))
            let feed = try #require(answer.groups.first { $0.signature == "DemoApp`FeedViewController.decodeThumbnails(_:)" })
            #expect(feed.screens == ["Feed"])
            #expect(feed.dominant?.symbol == "FeedViewController.decodeThumbnails(_:)")
            #expect(feed.stack.contains { $0.symbol == "main" })
            #expect(feed.stack.contains { $0.image == "UIKitCore" && $0.symbol == nil })
            let checkout = try #require(answer.groups.first { $0.signature == "DemoApp`PaymentSheet.validate(card:)" })
            #expect(checkout.fatal > 0)
            #expect(answer.imagesWithoutSymbols.isEmpty, "every release's symbols are stored")
            #expect(answer.groups.contains { $0.signature == HangSummary.noAppFrame }, "screens whose hangs stand in the system's code")
            // The demo's MetricKit payloads carry the same hangs' stacks: grouped apart, without screens or fatal hangs.
            let metricKitFeed = try #require(answer.metricKitGroups.first { $0.signature == "DemoApp`FeedViewController.decodeThumbnails(_:)" })
            #expect(metricKitFeed.screens.isEmpty && metricKitFeed.fatal == 0)
            #expect(answer.metricKitGroups.allSatisfy { $0.fatal == 0 && $0.screens.isEmpty })

            let (_, cookie) = try await signIn(client, key: demo.readKey)
            let page = try await client.execute(uri: "/dashboard/apps/demo/hangs?days=7", method: .get, headers: cookie)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains("aria-current=\"page\">Hangs</a>"))
            #expect(html.contains("data-signature=\"DemoApp`FeedViewController.decodeThumbnails(_:)\""))
            #expect(html.contains("<span class=\"site\">PaymentSheet.validate(card:)</span>"))
            #expect(html.contains("<td><strong>\(groupThousands(checkout.fatal))</strong></td>"))
            #expect(html.contains("<code>0x84410</code>"), "a frame without symbols shows its offset")
            #expect(html.contains("<h2>Apple's hang diagnostics (MetricKit)</h2>"))
            let filtered = try await client.execute(uri: "/dashboard/apps/demo/hangs?days=7&screen=Search", method: .get, headers: cookie)
            let searchPage = String(buffer: filtered.body)
            #expect(searchPage.contains("SearchIndex.rebuild()") && !searchPage.contains("decodeThumbnails"))
        }
    }
}
