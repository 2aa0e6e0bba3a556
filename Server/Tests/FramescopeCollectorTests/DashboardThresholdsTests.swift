import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
import FramescopeDemo
@testable import FramescopeSQLite
@testable import FramescopeStore
import Hummingbird
import HummingbirdTesting
import Testing

/// The pages judge figures by the app's thresholds and say where the bands come from.
@Suite("Dashboard pages with an app's own thresholds")
struct DashboardThresholdsTests {
    static let now = DashboardTests.now

    /// `html` with the apostrophes the templates escape as `&#39;` written out, for matching text.
    func text(_ html: String) -> String {
        html.replacingOccurrences(of: "&#39;", with: "'")
    }

    /// The text of the element that `id` opens, up to its `</figure>` or `</article>`.
    func block(_ html: String, from marker: String, to end: String) -> String {
        guard let start = html.range(of: marker) else { return "" }
        let rest = html[start.lowerBound...]
        return String(rest[..<(rest.range(of: end)?.upperBound ?? rest.endIndex)])
    }

    @Test("The admin key does not sign in to the dashboard: it reads no data")
    func adminKeySignIn() async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        let pages = try DashboardPages(store: temporary.store)
        let router = Collector(store: temporary.store, clock: { Self.now }, additionalRoutes: { router in
            DashboardRoutes(pages: pages, clock: { Self.now }).register(on: router)
        }).router
        try await Application(router: router).test(.router) { client in
            let (refused, cookie) = try await signIn(client, key: shop.adminKey)
            #expect(refused.status == .unauthorized)
            #expect(String(buffer: refused.body).contains("That is an admin key; the dashboard needs the app"))
            #expect(try await client.execute(uri: "/dashboard/apps/shop", method: .get, headers: cookie).status == .seeOther)
        }
        _ = temporary
    }

    @Test("Tiles, tables, trend lines, the footer and the comparison follow the app's bands and rules, and say whose they are")
    func customBands() async throws {
        let temporary = try TemporaryStore()
        _ = try await DemoData.prepare(store: temporary.store, now: Self.now, days: 6, deviceCount: 12)
        let store = temporary.store
        let pages = try DashboardPages(store: store)
        let filters = DashboardFilters(parameters: ["days": "7"])
        let query = filters.query(now: Self.now)
        let queries = CollectorQueries(store: store)
        let figures = try await queries.percentiles(app: "demo", query: query).metrics
        let hitch = try #require(figures.first { $0.metric == "hitchRatio" }?.value)
        let hang = try #require(figures.first { $0.metric == "hangRate" }?.value)

        // Nothing set: Apple's hitch-ratio bands, named as the default; no bands on the hang rate.
        let plain = text(try await pages.overview(app: "demo", filters: filters, now: Self.now))
        let plainHitch = block(plain, from: #"<article class="tile" data-metric="hitchRatio""#, to: "</article>")
        #expect(plainHitch.contains("band-\(try #require(Metric.hitchRatio.band(of: hitch)).rawValue)"))
        #expect(plainHitch.contains("bands: Apple's guidance (default)"))
        let plainHang = block(plain, from: #"<article class="tile" data-metric="hangRate""#, to: "</article>")
        #expect(!plainHang.contains("band-") && !plainHang.contains("bands:"))
        #expect(plain.contains("<li>Hitch ratio: good below 5 ms/s, warning to 10, critical above (Apple's guidance, the default).</li>"))
        #expect(plain.contains("No bands for hang rate, frozen frames, p95 frame duration"))
        #expect(!block(plain, from: #"id="trend-hang""#, to: "</figure>").contains(#"class="threshold""#))

        // The app's bands: the hitch ratio good below a value above the fleet's, the hang rate
        // warning around the fleet's, the p95 frame duration critical above 1 ms.
        let settings = AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: hitch + 1, criticalAbove: hitch + 2),
                                             .hangRate: BandLimits(goodBelow: hang / 2, criticalAbove: hang * 2),
                                             .frameDurationP95: BandLimits(goodBelow: 0.0005, criticalAbove: 0.001)],
                                     minimumVisits: 1_000_000)
        #expect(try await store.setThresholds(settings, app: "demo"))
        let custom = text(try await pages.overview(app: "demo", filters: filters, now: Self.now))
        let customHitch = block(custom, from: #"<article class="tile" data-metric="hitchRatio""#, to: "</article>")
        #expect(customHitch.contains("band-good") && customHitch.contains(#"<span class="band-word">good</span>"#))
        #expect(customHitch.contains("bands: app settings"))
        let customHang = block(custom, from: #"<article class="tile" data-metric="hangRate""#, to: "</article>")
        #expect(customHang.contains("band-warning") && customHang.contains("bands: app settings"))
        // The figure the app left alone keeps the default, and says so.
        #expect(block(custom, from: #"<article class="tile" data-metric="motion.hitchRatio""#, to: "</article>").contains("bands: Apple's guidance (default)"))
        #expect(custom.contains("<li>Hang rate: good below \(DashboardPages.limitText(hang / 2)) s/h, warning to \(DashboardPages.limitText(hang * 2)), critical above (the app's settings).</li>"))
        #expect(custom.contains("<li>P95 frame duration: good below 0.5 ms, warning to 1, critical above (the app's settings).</li>"))
        #expect(custom.contains("No bands for frozen frames"))
        // Trend charts draw the app's limits.
        let hangChart = block(custom, from: #"id="trend-hang""#, to: "</figure>")
        #expect(hangChart.contains("<title>warning: \(formatFigure(hang / 2, unit: "s/h"))</title>"), "\(hangChart.prefix(300))")
        #expect(hangChart.contains("<title>critical: \(formatFigure(hang * 2, unit: "s/h"))</title>"))
        let hitchChart = block(custom, from: #"id="trend-hitch""#, to: "</figure>")
        #expect(hitchChart.contains("<title>critical: \(formatFigure(hitch + 2, unit: "ms/s"))</title>"))
        // The versions table judges each version by the app's hitch-ratio bands.
        let versions = try await store.aggregate(app: "demo", query: AggregateQuery(filter: query, dimension: .appVersion))
        for group in versions {
            let value = try #require(QueryFigure(.hitchRatio).value(of: group.rollup))
            let row = block(custom, from: #"<tr data-version="\#(group.dimensionValue ?? "")""#, to: "</tr>")
            let band = try #require(settings.band(of: value, figure: .hitchRatio))
            #expect(row.contains(#"data-metric="hitchRatio" data-value="\#(value)" class="band-\#(band.rawValue)""#), "\(group.dimensionValue ?? "")")
        }

        // Screens: every p95 frame duration is over 1 ms, so each is critical.
        let screens = try await pages.screens(app: "demo", filters: filters, sort: nil, now: Self.now)
        let p95Cells = screens.components(separatedBy: #"<td data-metric="frameDuration.p95""#).dropFirst()
        #expect(!p95Cells.isEmpty && p95Cells.allSatisfy { $0.hasPrefix(#" data-value=""#) && $0.prefix(80).contains(#"class="band-critical""#) })

        // Screen page: the p95 trend carries the app's limits in milliseconds.
        let feed = try await pages.screen(app: "demo", screen: "Feed", filters: filters, now: Self.now)
        #expect(block(feed, from: #"id="trend-p95""#, to: "</figure>").contains("<title>critical: \(formatFigure(1, unit: "ms"))</title>"))

        // Compare: a minimum sample no screen reaches leaves no verdict, and the page says why.
        let compared = text(try await pages.compare(app: "demo", filters: filters, baseline: "3.0.0", candidate: "3.1.0", now: Self.now))
        #expect(compared.contains("0 screens regressed, 0 screens improved"))
        let strictRule = block(compared, from: #"<span id="verdict-rule">"#, to: "</span>")
        #expect(strictRule.contains("at least \(groupThousands(1_000_000)) visits of the figure on each side") && strictRule.contains("settings)"), "\(strictRule)")

        // Back to the defaults: the regression of 3.1.0 is called again, by Framescope's rule.
        #expect(try await store.setThresholds(AppThresholds(), app: "demo"))
        let again = text(try await pages.compare(app: "demo", filters: filters, baseline: "3.0.0", candidate: "3.1.0", now: Self.now))
        let rule = block(again, from: #"<span id="verdict-rule">"#, to: "</span>")
        #expect(rule.contains("a change of at least 5 % of the baseline") && rule.contains("at least 2 visits") && rule.contains("Framescope"), "\(rule)")
        #expect(again.contains(#"data-screen="Feed" data-verdict="regressed""#))
    }
}
