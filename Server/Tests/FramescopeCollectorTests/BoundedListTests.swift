import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
@testable import FramescopeSQLite
@testable import FramescopeStore
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 30, item 5: every list route and page stays bounded however many values an app
/// has (`/screens` in pages with a `more` marker and a cursor; filter menus with the values
/// with the most visits and a search box; the overview's tables with their most visited
/// rows), and item 4's MetricKit rules (NFC first, the events' age limit).
@Suite("Bounded lists")
struct BoundedListTests {
    static let now = CollectorRouteTests.now

    /// A store with the batches `batches` makes, ingested directly.
    static func store(_ batches: [IngestBatch]) async throws -> TemporaryStore {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: "shop")
        for batch in batches { _ = try await temporary.store.ingest(batch) }
        return temporary
    }

    static func batch(_ id: String, screens: [String], version: String = "1.0", model: String = "iPhone14,5") -> IngestBatch {
        CardinalityWindowTests.batch(id, screens: screens, version: version, model: model, start: now - 7200)
    }

    func page(_ client: any TestClientProtocol, _ key: String, _ query: String) async throws -> (status: HTTPResponse.Status, body: String) {
        let response = try await client.execute(uri: "/v1/apps/shop/screens?from=2026-11-19T00:00:00Z" + query, method: .get,
                                                headers: [.authorization: "Bearer \(key)"])
        return (response.status, String(buffer: response.body))
    }

    @Test("GET …/screens comes in pages: limit, \"more\": true and a cursor that resumes right after the last screen; a bad limit or cursor is 400 naming it")
    func screensInPages() async throws {
        let temporary = try await Self.store([Self.batch("a", screens: ["b", "A", "c", "Caf\u{e9}", "a", "B", "Z"])])
        let shop = try #require(try await temporary.store.rotateKeys(app: "shop"))
        let router = Collector(store: temporary.store, clock: { Self.now }).router
        try await Application(router: router).test(.router) { client in
            var names: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let (status, body) = try await page(client, shop.readKey, "&limit=3" + (cursor.map { "&after=\($0)" } ?? ""))
                #expect(status == .ok)
                let answer = try JSONDecoder().decode(ScreensResponse.self, from: Data(body.utf8))
                #expect(answer.screens.count <= 3)
                #expect(answer.more == (answer.cursor != nil))
                // A page that holds every screen left says nothing more: as before pages existed.
                #expect(body.contains("\"more\"") == answer.more)
                names += answer.screens.map(\.screen)
                cursor = answer.cursor
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 3)
            // By bytes, as the stores order text: capitals first, é after z.
            #expect(names == ["A", "B", "Caf\u{e9}", "Z", "a", "b", "c"])
            let all = try JSONDecoder().decode(ScreensResponse.self, from: Data(try await page(client, shop.readKey, "").body.utf8))
            #expect(all.screens.count == 7 && !all.more, "the default page holds \(ScreensResponse.defaultLimit)")
            for (query, field) in [("&limit=0", "limit"), ("&limit=1001", "limit"), ("&limit=x", "limit"), ("&after=%21%21", "after"),
                                   ("&after=_w", "after")] {
                let (status, body) = try await page(client, shop.readKey, query)
                #expect(status == .badRequest, "\(query)")
                #expect(body.contains("\"field\":\"\(field)\""), "\(query): \(body)")
            }
        }
        #expect(ScreenCursor.screen(of: ScreenCursor.cursor(after: "Caf\u{e9} <\u{301}x>")) == "Caf\u{e9} <\u{301}x>")
    }

    @Test("A filter menu offers the values with the most visits and the chosen one; past that, a search box finds the others")
    func boundedMenus() async throws {
        // 80 app versions and models: 1.0 with the most visits, then one visit each.
        var batches = [Self.batch("top", screens: ["Feed", "Feed", "Feed"], version: "1.0", model: "M0")]
        for index in 1..<80 { batches.append(Self.batch("v\(index)", screens: ["Feed"], version: "1.\(index)", model: "M\(index)")) }
        let temporary = try await Self.store(batches)
        let pages = try DashboardPages(store: temporary.store)
        func menu(_ html: String, _ name: String) -> [String] {
            guard let start = html.range(of: "<select name=\"\(name)\""), let end = html.range(of: "</select>", range: start.upperBound..<html.endIndex) else { return [] }
            let select = String(html[start.upperBound..<end.lowerBound])
            return select.components(separatedBy: "<option").dropFirst().map { option in
                option.contains("disabled") ? "(disabled)" : String(option.drop { $0 != "\"" }.dropFirst().prefix { $0 != "\"" })
            }
        }
        let html = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: [:]), now: Self.now)
        let versions = menu(html, "appVersion")
        #expect(versions.count == 1 + DashboardLimits.menuValues + 1, "all, 50 values, a line saying there are more")
        #expect(versions.first == "" && versions.last == "(disabled)" && versions.contains("1.0"))
        #expect(html.contains("name=\"find.appVersion\"") && html.contains("name=\"find.deviceModel\""))
        #expect(!html.contains("name=\"find.network\""), "a menu of a few fixed values needs no search")
        #expect(html.contains("Showing the \(DashboardLimits.tableRows) app versions with the most visits; 50 more are left out"))
        #expect(html.components(separatedBy: "<tr data-version=").count - 1 == DashboardLimits.tableRows)

        let searched = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["find.appVersion": "1.7"]), now: Self.now)
        #expect(menu(searched, "appVersion") == ["", "1.7", "1.70", "1.71", "1.72", "1.73", "1.74", "1.75", "1.76", "1.77", "1.78", "1.79"])
        #expect(searched.contains("name=\"find.appVersion\" value=\"1.7\""))
        #expect(menu(searched, "deviceModel").count == 1 + DashboardLimits.menuValues + 1, "a search applies to its own menu only")

        // A chosen value beyond the top stays in its menu, selected.
        let chosen = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["deviceModel": "M79"]), now: Self.now)
        #expect(chosen.contains("<option value=\"M79\" selected>"))
        let nothing = try await pages.overview(app: "shop", filters: DashboardFilters(parameters: ["find.appVersion": "zz"]), now: Self.now)
        #expect(menu(nothing, "appVersion") == ["", "(disabled)"])
    }

    @Test("MetricKit texts are put into NFC before they are checked and stored; a payload ends at most 30 days back, as an event starts; (other) is reserved")
    func metricKitRules() async throws {
        let temporary = try await Self.store([])
        let service = IngestService(store: temporary.store, clock: { Self.now })
        let decomposed = "Cafe\u{301}"
        let old = MetricKitRouteTests.metricPayload(version: "1.0", ratio: "2 ms per s")
            .replacingOccurrences(of: "2026-11-19", with: "2026-10-15")
        let body = "[" + [MetricKitRouteTests.metricPayload(version: decomposed, ratio: "4 ms per s", os: "iPhone OS 18.1 (22B83)"), old,
                          MetricKitRouteTests.metricPayload(version: CardinalityLimits.other, ratio: "1 ms per s")].joined(separator: ",") + "]"
        let response = try await service.ingestMetricKit(body: Array(body.utf8), app: "shop", logger: .init(label: "test"))
        #expect(response.accepted == 1)
        #expect(response.rejected.map(\.index) == [1, 2])
        #expect(response.rejected.map(\.field) == ["timeStampEnd", "metaData.appVersion"])
        #expect(response.rejected.first?.message.contains("30 days") == true)
        let versions = try await temporary.store.metricKitVersions(app: "shop", query: ScreenQuery(from: Self.now - 60 * 86_400, to: Self.now))
        #expect(versions.map { Array($0.appVersion.utf8) } == [Array("Caf\u{e9}".utf8)])
    }
}
