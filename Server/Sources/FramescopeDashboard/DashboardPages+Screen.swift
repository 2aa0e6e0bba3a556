import Foundation
import FramescopeCollector
import FramescopeCore

/// The page of one screen: tiles, trends, the frame-duration distribution and breakdowns.
extension DashboardPages {
    struct Breakdown {
        var id: String
        var heading: String
        var svg: String
        /// Said under the bars when they show only the values with the most visits.
        var note: String? = nil
    }
    struct Marker { var name: String; var value: String }

    struct ScreenPage {
        var page: Chrome
        var screen: String
        var hasData: Bool
        var basis: String
        var tiles: [Tile]
        var charts: [Chart]
        var distribution: String
        var markers: [Marker]
        var breakdowns: [Breakdown]
        /// The screen's five hang groups with the most hang time (the Hangs page's rows).
        var hangs: [HangGroupRow] = []
        var hasHangs = false
        /// The Hangs page filtered to this screen.
        var hangsLink = ""
    }

    /// One screen: tiles, trends of every figure, the frame-duration distribution, and
    /// breakdowns by each dimension and by refresh rate.
    public func screen(app: String, screen name: String, filters: DashboardFilters, now: Double, csrfToken: String = "") async throws -> String {
        let query = filters.query(now: now, screen: name)
        let base = "/dashboard/apps/\(percentEncode(app))"
        var chrome = try await chrome(title: name, app: app, filters: filters, now: now, action: base + "/screens/" + percentEncode(name), csrfToken: csrfToken)
        chrome.isScreens = true
        let total = try await queries.aggregate(app: app, query: AggregateQuery(filter: query)).first?.rollup ?? RollupValue()
        let charts = try await trendCharts(app: app, query: query, interval: filters.interval, idPrefix: "trend-", charts: [
            Self.hitchTrend, Self.hangTrend, Self.fpsTrend, Self.frozenTrend,
            TrendSpec(id: "p95", heading: "95th-percentile frame duration", lines: [("p95", QueryFigure(report: .frameDurationP95))],
                      bands: .frameDurationP95, scale: 1000, unit: "ms"),
            TrendSpec(id: "stability", heading: "Frame-rate stability (FPS windows within ±20 % of the average)",
                      lines: [("stability", QueryFigure(report: .stability))], scale: 100, unit: "%"),
        ], thresholds: chrome.thresholds)
        var breakdowns: [Breakdown] = []
        let dimensions = QueryDimension.rollupDimensions.map { ($0, $0.labelInSentence) }
        // The five breakdowns read the same rollups; they run concurrently (SQLite's WAL allows parallel readers).
        let queries = self.queries
        let grouped = try await withThrowingTaskGroup(of: (Int, [RollupAggregate]).self) { group in
            for (index, dimension) in dimensions.enumerated() {
                group.addTask { (index, try await queries.aggregate(app: app, query: AggregateQuery(filter: query, dimension: dimension.0))) }
            }
            var results = [[RollupAggregate]](repeating: [], count: dimensions.count)
            for try await (index, groups) in group { results[index] = groups }
            return results
        }
        for ((dimension, heading), all) in zip(dimensions, grouped) {
            let (groups, leftOut) = Self.mostVisited(all, limit: DashboardLimits.tableRows)
            let bars = groups.map { group in
                BarList.Bar(label: dimension.displayValue(group.dimensionValue ?? ""),
                            value: QueryFigure(.hitchRatio).value(of: group.rollup), basis: "\(groupThousands(group.visits)) visits")
            }
            if !bars.isEmpty {
                breakdowns.append(Breakdown(id: "by-\(dimension.queryName)", heading: "\(Figure.hitchRatio.label) by \(heading)",
                                            svg: BarList(bars: bars, unit: Figure.hitchRatio.unit, title: "\(Figure.hitchRatio.label) by \(heading)").svg(),
                                            note: Self.leftOutNote(shown: groups.count, leftOut: leftOut, noun: "values", how: "choose one in the filters")))
            }
        }
        let classes = try await refreshClasses(app: app, query: query)
        if !classes.isEmpty {
            breakdowns.append(Breakdown(id: "by-refreshClass", heading: "\(Figure.hitchRatio.label) by display: 60 Hz, 120 Hz (ProMotion), capped (ProMotion in low-power mode)",
                                        svg: BarList(bars: classes, unit: Figure.hitchRatio.unit, title: "\(Figure.hitchRatio.label) by display refresh").svg()))
        }
        let rates = total.report.refreshRates.entries.map { entry in
            BarList.Bar(label: "\(entry.key) Hz", value: Double(entry.count) / Double(max(total.report.frames, 1)) * 100,
                        basis: "\(groupThousands(entry.count)) frames")
        }
        if !rates.isEmpty {
            breakdowns.append(Breakdown(id: "by-refreshRate", heading: "Frames by refresh rate (ProMotion runs at 120 Hz, 60 Hz when capped by low-power mode)",
                                        svg: BarList(bars: rates, unit: "%", title: "Share of frames by refresh rate").svg()))
        }
        let markers = [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)].map { name, q in
            Marker(name: name, value: formatFigure(total.report.frameDuration(atQuantile: q).map { $0 * 1000 }, unit: "ms"))
        }
        var page = ScreenPage(page: chrome, screen: name, hasData: total.visits > 0,
                              basis: Self.basis(total),
                              tiles: tiles(total, thresholds: chrome.thresholds), charts: charts,
                              distribution: DurationDistributionChart(histogram: total.report.frameDurations).svg(), markers: markers, breakdowns: breakdowns)
        page.hangs = try await hangGroups(app: app, query: query, limit: 5).map(Self.hangRow)
        page.hasHangs = !page.hangs.isEmpty
        page.hangsLink = base + "/hangs" + filters.queryString([("screen", name)])
        return library.render(page, withTemplate: "screen") ?? ""
    }

    /// Hitch ratio per display class (the collector's ``CollectorQueries/displayClasses(app:query:)``).
    func refreshClasses(app: String, query: ScreenQuery) async throws -> [BarList.Bar] {
        try await CollectorQueries(store: store).displayClasses(app: app, query: query).map { displayClass, rollup in
            BarList.Bar(label: displayClass.label, value: QueryFigure(.hitchRatio).value(of: rollup), basis: "\(groupThousands(rollup.visits)) visits")
        }
    }
}
