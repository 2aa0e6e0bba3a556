import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Testing

@Suite("Dashboard: the overview's break-down by any dimension")
struct DashboardBreakdownTests {
    static let now = ISO8601.parse("2026-11-20T12:30:00Z")!

    /// A store with visits in every thermal state on two displays, and a hostile device model.
    func store() async throws -> TemporaryStore {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: "shop")
        let report = visitReport(seed: 3, seconds: 2)
        for (index, (thermal, rate, model)) in [(VisitContext.ThermalState.nominal, 60, "iPhone14,5"), (.serious, 120, "iPhone16,1"),
                                                (.serious, 120, "<img src=x onerror=alert(1)>"), (.critical, 90, "iPad14,1")].enumerated() {
            let start = Self.now - 3600 - Double(index) * 60
            let event = ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start), duration: 3,
                                         context: VisitContext(network: .wifi, lowPowerMode: false, thermalState: thermal),
                                         report: report.whole, motion: report.motion)
            var batch = IngestBatch(app: "shop", batchId: "b\(index)", appVersion: "1.0", osVersion: "18.1", deviceModel: model,
                                    events: [(event, start)], rawEvents: ["{}"], receivedAt: Self.now)
            batch.maxRefreshRate = rate
            _ = try await temporary.store.ingest(batch)
        }
        return temporary
    }

    func rows(_ html: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: #"data-breakdown-value="([^"]*)""#) else { return [] }
        return regex.matches(in: html, range: NSRange(html.startIndex..., in: html)).compactMap { match in
            Range(match.range(at: 1), in: html).map { String(html[$0]) }
        }
    }

    @Test("by= picks the dimension; rows are its values with visits; each links to the filter; the choice survives the filter bar")
    func breakdown() async throws {
        let temporary = try await store()
        let pages = try DashboardPages(store: temporary.store)
        let thermal = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["by": "thermalState"]), now: Self.now)
        #expect(rows(thermal) == ["critical", "nominal", "serious"])
        #expect(thermal.contains("<h2 id=\"breakdown-heading\">By thermal state</h2>"))
        #expect(thermal.contains("<option value=\"thermalState\" selected>Thermal state</option>"))
        #expect(thermal.contains("href=\"/dashboard/apps/shop?days=30&amp;thermalState=serious&amp;by=thermalState\""))
        #expect(thermal.contains("<input type=\"hidden\" name=\"by\" value=\"thermalState\">"))
        let display = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["by": "maxRefreshRate"]), now: Self.now)
        #expect(rows(display) == ["120", "60", "other"])
        // A filter and a break-down together: only the serious visits, by display.
        let filtered = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["by": "maxRefreshRate", "thermalState": "serious"]), now: Self.now)
        #expect(rows(filtered) == ["120"])
        #expect(filtered.contains("<input type=\"hidden\" name=\"thermalState\" value=\"serious\">"))
        // Device text is escaped wherever it lands; an unknown choice falls back to the network.
        let devices = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["by": "deviceModel"]), now: Self.now)
        #expect(!devices.contains("<img src=x"))
        #expect(devices.contains("&lt;img src=x onerror=alert(1)&gt;"))
        let fallback = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["by": "<script>"]), now: Self.now)
        #expect(rows(fallback) == ["wifi"])
    }

    @Test("Declared tags: a menu per key in the filter bar, a break-down by tag adding up to every visit, its rows linking to the tag filter, hostile values escaped")
    func tags() async throws {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: "shop")
        _ = try await temporary.store.declareTagKey(app: "shop", key: "experiment", now: Self.now - 86_400)
        _ = try await temporary.store.declareTagKey(app: "shop", key: "cohort", now: Self.now - 86_400)
        let report = visitReport(seed: 3, seconds: 2)
        let tagSets: [[String: String]] = [["experiment": "A"], ["experiment": "A", "cohort": "x"], ["experiment": "\"><script>alert(1)</script>"], [:]]
        for (index, tags) in tagSets.enumerated() {
            let start = Self.now - 3600 - Double(index) * 60
            let event = ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start), duration: 3,
                                         context: VisitContext(network: .wifi, lowPowerMode: false, tags: tags),
                                         report: report.whole, motion: report.motion)
            _ = try await temporary.store.ingest(IngestBatch(app: "shop", batchId: "t\(index)", appVersion: "1.0", osVersion: "18.1", deviceModel: "iPhone16,1",
                                                             events: [(event, start)], rawEvents: ["{}"], receivedAt: Self.now))
        }
        let pages = try DashboardPages(store: temporary.store)
        let declared = ["cohort", "experiment"]
        let byTag = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["by": "tag.experiment"], declaredTags: declared), now: Self.now)
        #expect(rows(byTag) == ["\"&gt;&lt;script&gt;alert(1)&lt;/script&gt;", "(none)", "A"].map { $0.replacingOccurrences(of: "\"", with: "&quot;") })
        #expect(!byTag.contains("<script>alert(1)"))
        #expect(byTag.contains("<h2 id=\"breakdown-heading\">By tag experiment</h2>"))
        #expect(byTag.contains("<option value=\"tag.experiment\" selected>Tag experiment</option>"))
        #expect(byTag.contains("<select name=\"tag.experiment\" data-filter=\"tag.experiment\">"))
        #expect(byTag.contains("<select name=\"tag.cohort\" data-filter=\"tag.cohort\">"))
        #expect(byTag.contains("href=\"/dashboard/apps/shop?days=30&amp;tag.experiment=A&amp;by=tag.experiment\""))
        // Filtered by a tag value: the tiles count its visits; the break-down by another tag is not offered.
        let filtered = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["tag.experiment": "A", "by": "tag.cohort"], declaredTags: declared),
                                                now: Self.now)
        #expect(filtered.contains("2 screen visits"))
        #expect(rows(filtered) == ["wifi"], "a break-down by another tag falls back to the network")
        #expect(!filtered.contains("<option value=\"tag.cohort\""))
        #expect(filtered.contains("<option value=\"A\" selected>A</option>"))
        // An undeclared key is ignored, not an error.
        let undeclared = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["tag.flavour": "x", "by": "tag.flavour"], declaredTags: declared),
                                                  now: Self.now)
        #expect(undeclared.contains("4 screen visits") && rows(undeclared) == ["wifi"])
        _ = temporary
    }
}
