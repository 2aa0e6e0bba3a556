import Foundation
import FramescopeCollector
import FramescopeCore
import Mustache

/// Builds the dashboard's pages from the collector's queries and renders them with the
/// Mustache templates in `Resources/templates`.
///
/// Every number on a page comes from ``CollectorQueries``, the door the query API reads
/// through too, and is printed with ``formatFigure(_:unit:)``; the store itself is used only
/// for sign-in, sessions, the app's name and its alerts.
public struct DashboardPages: Sendable {
    /// What the pages need from the store: sign-in and sessions, the alerts they list and
    /// acknowledge, and the reads of ``CollectorQueries``.
    public typealias Store = AppAccess & AlertStore & CollectorQueries.Store
    /// The store: sessions and alerts; data is read through ``queries``.
    public let store: any Store
    /// The one door data is read through.
    let queries: CollectorQueries
    let library: MustacheLibrary
    let css: String
    /// The dashboard's script, served as `/dashboard/dashboard.js` (never inline: the CSP allows no inline script).
    let script: String

    /// Loads the templates, stylesheet and script from the module's resources; hang reads
    /// are bounded by `hangsTimeLimit` seconds (nil: no bound; `serve` passes
    /// ``HangsResponse/timeLimit``).
    public init(store: any Store, hangsTimeLimit: Double? = nil) throws {
        self.store = store
        var queries = CollectorQueries(store: store)
        queries.hangsTimeLimit = hangsTimeLimit
        self.queries = queries
        guard let templates = Bundle.module.url(forResource: "templates", withExtension: nil),
              let cssURL = Bundle.module.url(forResource: "dashboard", withExtension: "css"),
              let jsURL = Bundle.module.url(forResource: "dashboard", withExtension: "js") else {
            throw DashboardError("the dashboard's resources are missing from the bundle")
        }
        ScalarHTMLContentType.register()
        var library = MustacheLibrary()
        for name in ["layout", "filters", "sign-in", "overview", "screens", "screen", "compare", "alerts", "hangs"] {
            let text = try String(contentsOf: templates.appendingPathComponent("\(name).mustache"), encoding: .utf8)
            guard text.hasPrefix("{{% CONTENT_TYPE: \(ScalarHTMLContentType.name)}}") else {
                throw DashboardError("template \(name) does not start with the FRAMESCOPE_HTML content type")
            }
            try library.register(MustacheTemplate(string: text), named: name)
        }
        self.library = library
        css = try String(contentsOf: cssURL, encoding: .utf8)
        script = try String(contentsOf: jsURL, encoding: .utf8)
    }

    // MARK: Chrome shared by every page

    struct Option { var value: String; var label: String; var selected: Bool }
    struct Hidden { var name: String; var value: String }
    struct Select {
        var name: String
        var label: String
        var options: [Option]
        /// Said at the menu's end when it shows only the values with the most visits.
        var more: String? = nil
        /// Whether the menu has a search box (its values are free text and there are more
        /// than it shows, or a search is on).
        var hasSearch = false
        /// The search box's text.
        var search = ""
    }

    struct Chrome {
        var title: String
        var app: String
        var appName: String
        var css: String
        var overviewLink: String
        var screensLink: String
        var compareLink: String
        /// The regression alerts page.
        var alertsLink: String
        /// The hangs page.
        var hangsLink: String
        var isOverview = false
        var isScreens = false
        var isCompare = false
        var isAlerts = false
        var isHangs = false
        var action: String
        var selects: [Select]
        var hidden: [Hidden]
        var rangeText: String
        /// The session's CSRF token, sent back by the sign-out form.
        var csrfToken = ""
        /// The app's thresholds, read once per page: the bands and verdict rules its figures are judged by.
        var thresholds = AppThresholds()
        /// The footer's sentences on the bands in effect and where they come from.
        var bandNotes: [String] = []
    }

    func chrome(title: String, app: String, filters: DashboardFilters, now: Double, action: String, hidden: [Hidden] = [],
                csrfToken: String) async throws -> Chrome {
        let (from, to) = filters.range(now: now)
        let name = try await store.apps().first { $0.app == app }?.name ?? app
        let thresholds = try await queries.thresholds(app: app) ?? AppThresholds()
        var selects = [
            Select(name: "days", label: "Range", options: DashboardFilters.dayChoices.map {
                Option(value: String($0), label: $0 == 1 ? "last 24 hours" : "last \($0) days", selected: $0 == filters.days)
            }),
            Select(name: "interval", label: "Trend by", options: [
                Option(value: "day", label: "day", selected: filters.interval == .day),
                Option(value: "hour", label: "hour (up to 14 days)", selected: filters.interval == .hour),
            ]),
        ]
        // Each menu offers the values with the most visits (at most ``DashboardLimits/menuValues``),
        // however many the app has, and the chosen one; past that, a search box finds the others.
        for dimension in QueryDimension.rollupDimensions {
            let name = dimension.queryName
            let search = filters.searches[name]
            let top = try await queries.topDimensionValues(app: app, dimension: dimension, from: from, to: to, search: search,
                                                         limit: DashboardLimits.menuValues + 1)
            selects.append(Self.menu(name: name, label: dimension.label, top: top, current: filters[dimension], search: search,
                                     searchable: dimension.values == .text, display: dimension.displayValue))
        }
        // One menu per declared tag; one tag filters at a time (choosing a value clears the
        // other tags' menus in the script; without it, the first tag by key counts).
        for key in filters.declaredTags {
            let name = DeclaredTags.parameterPrefix + key
            let search = filters.searches[name]
            let top = try await queries.topTagValues(app: app, key: key, from: from, to: to, search: search, limit: DashboardLimits.menuValues + 1)
            selects.append(Self.menu(name: name, label: "Tag \(key)", top: top, current: filters.tag?.key == key ? filters.tag?.value : nil,
                                     search: search, searchable: true, display: { $0 }))
        }
        let base = "/dashboard/apps/\(percentEncode(app))"
        let query = filters.queryString()
        return Chrome(title: title, app: app, appName: name, css: css,
                      overviewLink: base + query, screensLink: base + "/screens" + query, compareLink: base + "/compare" + query,
                      alertsLink: base + "/alerts" + query, hangsLink: base + "/hangs" + query,
                      action: action, selects: selects, hidden: hidden,
                      rangeText: "\(ISO8601.format(unixSeconds: from).prefix(16).replacingOccurrences(of: "T", with: " ")) to \(ISO8601.format(unixSeconds: to).prefix(16).replacingOccurrences(of: "T", with: " ")) UTC", csrfToken: csrfToken,
                      thresholds: thresholds, bandNotes: Self.bandNotes(thresholds))
    }

    /// A filter menu: "all", then `top`'s first ``DashboardLimits/menuValues`` values and
    /// `current`, by value; when `top` holds more (it is asked for one more than is shown),
    /// a last line says so, and a `searchable` menu gets its search box.
    static func menu(name: String, label: String, top: [ValueVisits], current: String?, search: String?, searchable: Bool,
                     display: (String) -> String) -> Select {
        let truncated = top.count > DashboardLimits.menuValues
        var values = top.prefix(DashboardLimits.menuValues).map(\.value)
        if let current, !values.contains(current) { values.append(current) }
        var options = [Option(value: "", label: "all", selected: current == nil)]
        for value in Set(values).sorted() {
            options.append(Option(value: value, label: display(value), selected: value == current))
        }
        let more = truncated
            ? (searchable ? "… more: type in the search box" : "… more")
            : (search != nil && top.isEmpty ? "no value contains “\(search ?? "")”" : nil)
        return Select(name: name, label: label, options: options, more: more, hasSearch: searchable && (truncated || search != nil),
                      search: search ?? "")
    }

    // MARK: Figures

    /// The figures shown in tiles and tables, in order, with their labels (from the registry).
    static let figures: [(VisitMetric, String)] = VisitMetric.allCases.map { ($0, QueryFigure($0).label) }

    /// Table headings of ``figures``, with units.
    static let columnHeaders = VisitMetric.allCases.map { QueryFigure($0).labelWithUnit }

    struct Tile {
        var metric: String
        var name: String
        var value: String
        var raw: String
        var band: String?
        var bandWord: String?
        /// Where the bands come from ("bands: app settings"), for a figure with bands.
        var bandSource: String?
        var median: String
        var p90: String
        var visits: String
    }

    func tiles(_ rollup: RollupValue, thresholds: AppThresholds) -> [Tile] {
        Self.figures.map { metric, name in
            let (value, band) = Self.figure(metric, rollup, thresholds: thresholds)
            let statistics = rollup.statistics[metric]
            return Tile(metric: metric.rawValue, name: name, value: formatFigure(value, unit: metric.unit), raw: value.map { String($0) } ?? "",
                        band: band?.rawValue, bandWord: band?.rawValue,
                        bandSource: ThresholdFigure(metric).flatMap { Self.bandSource($0, thresholds: thresholds) },
                        median: formatFigure(statistics.visitValue(atQuantile: 0.5), unit: metric.unit),
                        p90: formatFigure(statistics.visitValue(atQuantile: 0.9), unit: metric.unit),
                        visits: groupThousands(statistics.visits))
        }
    }

    struct Chart { var id: String; var heading: String; var svg: String }

    static func label(_ start: Double, interval: BucketInterval) -> String {
        let text = ISO8601.format(unixSeconds: start)
        return interval == .day ? String(text.dropFirst(5).prefix(5)) : String(text.dropFirst(5).prefix(11)).replacingOccurrences(of: "T", with: " ")
    }

    /// One trend chart: its lines, and how its values are shown (`scale` × value in `unit`).
    struct TrendSpec {
        var id: String
        var heading: String
        var lines: [(String, QueryFigure)]
        /// The figure whose bands in effect the chart draws as reference lines, if any.
        var bands: ThresholdFigure? = nil
        var scale = 1.0
        var unit: String? = nil
    }

    static let hitchTrend = TrendSpec(id: "hitch", heading: Figure.hitchRatio.label,
                                      lines: [("whole visit", .hitchRatio), ("in motion", .motionHitchRatio)], bands: .hitchRatio)
    static let hangTrend = TrendSpec(id: "hang", heading: Figure.hangRate.label, lines: [(Figure.hangRate.metric.displayName, .hangRate)], bands: .hangRate)
    static let fpsTrend = TrendSpec(id: "fps", heading: Figure.averageFPS.label, lines: [(Figure.averageFPS.metric.displayName, .averageFPS)])
    static let frozenTrend = TrendSpec(id: "frozen", heading: Figure.frozenFramesPerThousand.label + " " + Figure.frozenFramesPerThousand.unit,
                                       lines: [(Figure.frozenFramesPerThousand.metric.displayName, .frozenFramesPerThousand)], bands: .frozenFramesPerThousand)

    /// Trend charts from the collector's time series (one read of the rollups for all of
    /// them), with the reference lines of the app's bands where a chart's figure has them.
    func trendCharts(app: String, query: ScreenQuery, interval: BucketInterval, idPrefix: String, charts: [TrendSpec],
                     thresholds: AppThresholds) async throws -> [Chart] {
        let figures = charts.flatMap { $0.lines.map(\.1) }
        var series = try await CollectorQueries(store: store).timeSeries(app: app, query: query, figures: figures, interval: interval)[...]
        let starts = interval.starts(from: query.from, to: query.to)
        let labels = starts.map { Self.label($0, interval: interval) }
        return charts.map { spec in
            let lines = spec.lines.map { name, _ in
                let response = series.removeFirst()
                return LineChart.Series(name: name, values: response.points.map { $0.value.map { $0 * spec.scale } })
            }
            let chart = LineChart(title: spec.heading, unit: spec.unit ?? spec.lines.first?.1.unit ?? "", labels: labels, series: lines,
                                  thresholds: Self.referenceLines(spec.bands, scale: spec.scale, thresholds: thresholds))
            return Chart(id: idPrefix + spec.id, heading: spec.heading, svg: chart.hasData ? chart.svg() : "")
        }
    }

    // MARK: Overview

    struct VersionRow { var version: String; var link: String; var visits: String; var cells: [Cell] }
    struct Cell { var metric: String; var text: String; var raw: String; var band: String? }

    struct OverviewPage {
        var page: Chrome
        var hasData: Bool
        var basis: String
        /// Which sample rates the figures come from, when any visit came at a rate below 1
        /// (``samplingNote(_:filtered:)``); `nil` when every installation measured.
        var samplingNote: String?
        var tiles: [Tile]
        var charts: [Chart]
        var versionBars: String
        /// The caption of ``versionBars``: "Hitch ratio by app version".
        var versionsCaption = Figure.hitchRatio.label + " by app version"
        var versions: [VersionRow]
        /// Said under the table when it shows only the versions with the most visits.
        var versionsNote: String?
        var headers: [String]
        var metricKit: MetricKitSection?
        var breakdown: BreakdownSection
    }

    /// The `limit` groups with the most visits (then by value), in their original order, and
    /// how many were left out.
    static func mostVisited(_ groups: [RollupAggregate], limit: Int) -> (kept: [RollupAggregate], leftOut: Int) {
        guard groups.count > limit else { return (groups, 0) }
        let kept = Set(groups.indices.sorted { (groups[$0].visits, groups[$1].dimensionValue ?? "") > (groups[$1].visits, groups[$0].dimensionValue ?? "") }
            .prefix(limit))
        return (groups.indices.filter { kept.contains($0) }.map { groups[$0] }, groups.count - limit)
    }

    /// "Showing the 30 app versions with the most visits; 282 more are left out: choose one in the filters."
    static func leftOutNote(shown: Int, leftOut: Int, noun: String, how: String) -> String? {
        leftOut > 0 ? "Showing the \(groupThousands(shown)) \(noun) with the most visits; \(groupThousands(leftOut)) more are left out: \(how)." : nil
    }

    /// The overview: tiles with Σ/Σ value, median and p90; trends; the split by app version.
    public func overview(app: String, filters: DashboardFilters, now: Double, csrfToken: String = "") async throws -> String {
        let query = filters.query(now: now)
        let base = "/dashboard/apps/\(percentEncode(app))"
        var chrome = try await chrome(title: "Overview", app: app, filters: filters, now: now, action: base,
                                      hidden: [Hidden(name: "by", value: filters.breakdownParameter)], csrfToken: csrfToken)
        chrome.isOverview = true
        // The split by version reads the dimension-keeping rollups, the slowest read; it runs beside the others.
        async let versionGroups = queries.aggregate(app: app, query: AggregateQuery(filter: query, dimension: .appVersion))
        async let sampleRates = queries.sampleRates(app: app, from: query.from, to: query.to)
        let total = try await queries.aggregate(app: app, query: AggregateQuery(filter: query)).first?.rollup ?? RollupValue()
        let charts = try await trendCharts(app: app, query: query, interval: filters.interval, idPrefix: "trend-",
                                           charts: [Self.hitchTrend, Self.hangTrend, Self.fpsTrend, Self.frozenTrend], thresholds: chrome.thresholds)
        async let appleVersions = queries.metricKitVersions(app: app, query: query)
        let allVersions = try await versionGroups
        let metricKit = Self.metricKitSection(apple: try await appleVersions, framescope: allVersions, screenFiltered: query[.screen] != nil)
        let (byVersion, versionsLeftOut) = Self.mostVisited(allVersions, limit: DashboardLimits.tableRows)
        let versions = byVersion.map { group in
            VersionRow(version: group.dimensionValue ?? "", link: base + "/screens" + filtersFixing(filters, appVersion: group.dimensionValue),
                       visits: groupThousands(group.visits), cells: cells(group.rollup, thresholds: chrome.thresholds))
        }
        let bars = BarList(bars: byVersion.map { BarList.Bar(label: $0.dimensionValue ?? "", value: QueryFigure(.hitchRatio).value(of: $0.rollup),
                                                             basis: "\(groupThousands($0.visits)) visits") },
                           unit: Figure.hitchRatio.unit, title: Figure.hitchRatio.label + " by app version")
        let breakdown = try await breakdownSection(app: app, filters: filters, query: query, base: base, chrome: chrome)
        let filtered = query.filtersDimensions || query[.screen] != nil
        let page = OverviewPage(page: chrome, hasData: total.visits > 0,
                                basis: Self.basis(total), samplingNote: Self.samplingNote(try await sampleRates, filtered: filtered),
                                tiles: tiles(total, thresholds: chrome.thresholds), charts: charts, versionBars: byVersion.isEmpty ? "" : bars.svg(), versions: versions,
                                versionsNote: Self.leftOutNote(shown: byVersion.count, leftOut: versionsLeftOut, noun: "app versions",
                                                               how: "choose one in the filters"),
                                headers: Self.columnHeaders, metricKit: metricKit, breakdown: breakdown)
        return library.render(page, withTemplate: "overview") ?? ""
    }

    /// "about 118 devices, 19 781 screen visits and 27 875 462 frames".
    static func basis(_ rollup: RollupValue) -> String {
        let devices = rollup.devices.estimate
        let deviceText = devices > 0 ? "about \(groupThousands(devices)) device\(devices == 1 ? "" : "s"), " : ""
        return "\(deviceText)\(groupThousands(rollup.visits)) screen visits and \(groupThousands(rollup.report.frames)) frames"
    }

    /// "Figures from installations sampled at 10 % (1 200 visits) and all installations
    /// (300 visits).": the rates the visits of `rates` (by rate, lowest first) arrived at, when
    /// any is below 1; `nil` when every visit came from all installations. Visits are counted
    /// as they arrived, so the sentence says so; `filtered`: the page filters its figures,
    /// which the counts per rate (per app and day) cannot follow, and the sentence says that too.
    ///
    /// At most ``sampleRatesNamed`` rates are named, those with the most visits; the others
    /// are counted ("and 19,995 other rates (20,004 visits)"), since a device may claim any rate.
    static func samplingNote(_ rates: [SampleRateVisits], filtered: Bool) -> String? {
        let counted = rates.filter { $0.visits > 0 }
        guard !SampleRateVisits.allFull(counted) else { return nil }
        let (named, otherRates, otherVisits) = SampleRateVisits.mostVisited(counted, limit: sampleRatesNamed)
        func visits(_ count: Int) -> String { "\(groupThousands(count)) visit\(count == 1 ? "" : "s")" }
        var parts = named.map { entry in
            entry.sampleRate >= 1 ? "all installations (\(visits(entry.visits)))" : "\(percentText(entry.sampleRate)) (\(visits(entry.visits)))"
        }
        if otherRates > 0 { parts.append("\(groupThousands(otherRates)) other rate\(otherRates == 1 ? "" : "s") (\(visits(otherVisits)))") }
        let list = parts.count == 1 ? parts[0] : parts.dropLast().joined(separator: ", ") + " and " + (parts.last ?? "")
        var note = "Figures from installations sampled at \(list); visits are counted as they arrived, not scaled up."
        if filtered { note += " These counts are the app's over the range's days, before the filters." }
        return note
    }

    /// Rates the overview's sampling sentence names; the rest are counted.
    static let sampleRatesNamed = 5

    /// A share (0–1) as a percentage to the millionth of the share, trailing zeros left out:
    /// `0.1` → "10 %", `0.005` → "0.5 %".
    static func percentText(_ share: Double) -> String {
        var digits = String(format: "%.4f", share * 100)
        while digits.hasSuffix("0") { digits.removeLast() }
        if digits.hasSuffix(".") { digits.removeLast() }
        return digits + "\u{202F}%"
    }

    func filtersFixing(_ filters: DashboardFilters, appVersion: String?) -> String {
        var copy = filters
        copy.values[.appVersion] = appVersion
        return copy.queryString()
    }

    func cells(_ rollup: RollupValue, thresholds: AppThresholds) -> [Cell] {
        Self.figures.map { metric, _ in
            let (value, band) = Self.figure(metric, rollup, thresholds: thresholds)
            return Cell(metric: metric.rawValue, text: formatFigure(value) + (band.map { " · \($0.rawValue)" } ?? ""), raw: value.map { String($0) } ?? "", band: band?.rawValue)
        }
    }

    // MARK: Screens

    struct ScreenRow {
        var screen: String
        var link: String
        var visits: String
        var visitsRaw: Int
        var frames: String
        var cells: [Cell]
        var p95: String
        var p95Raw: String
        /// The p95 frame duration's band under the app's thresholds, if it has bands.
        var p95Band: String?
        var sparkline: String
    }

    struct SortOption { var value: String; var label: String; var selected: Bool }

    struct ScreensPage {
        var page: Chrome
        var hasData: Bool
        var rows: [ScreenRow]
        var headers: [Header]
        var p95Header: Header
        /// The heading of the sparkline column: "Hitch ratio, daily".
        var sparklineHeader = Figure.hitchRatio.label + ", daily"
        var sortLabel: String
        var pager: Pager?
    }

    /// Which slice of a long list a page shows, with links to its neighbours.
    struct Pager { var text: String; var previous: String?; var next: String? }

    /// Screens per page of the screens table.
    static let screensPerPage = 50

    /// A sortable column: the figure's API name, its label, and whether a larger value is
    /// worse (`true`/`false`, empty for a figure without a good direction) for the sort.
    struct Header {
        var key: String
        var label: String
        var higherIsWorse: String

        init(key: String, label: String, direction: Metric.Direction) {
            self.key = key
            self.label = label
            higherIsWorse = direction.higherIsWorse.map { String($0) } ?? ""
        }
    }

    /// The screens table, worst first by `sort` (a figure name; hitch ratio by default).
    /// Long lists come in pages of ``screensPerPage``; `page` is 1-based.
    public func screens(app: String, filters: DashboardFilters, sort: String?, page pageNumber: Int = 1, now: Double, csrfToken: String = "") async throws -> String {
        let query = filters.query(now: now)
        let base = "/dashboard/apps/\(percentEncode(app))"
        let figure = sort.flatMap(QueryFigure.init(name:)) ?? QueryFigure(.hitchRatio)
        var chrome = try await chrome(title: "Screens", app: app, filters: filters, now: now, action: base + "/screens",
                                      hidden: [Hidden(name: "sort", value: figure.name)], csrfToken: csrfToken)
        chrome.isScreens = true
        let ranked = try await queries.worstScreens(app: app, query: query, figure: figure, limit: 1000, minimumVisits: 0)
        let groups = try await queries.aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true))
        var byScreen: [String: RollupValue] = [:]
        for group in groups { byScreen[group.screen ?? ""] = group.rollup }
        let daily = try await queries.aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true, interval: .day))
        var trend: [String: [Double: RollupValue]] = [:]
        for group in daily { trend[group.screen ?? "", default: [:]][group.bucketStart ?? 0] = group.rollup }
        let starts = BucketInterval.day.starts(from: query.from, to: query.to)
        let rankedNames = ranked.screens.map(\.screen)
        let ranks = Set(rankedNames)
        let allOrder = rankedNames + byScreen.keys.filter { !ranks.contains($0) }.sorted()
        let pages = max(1, (allOrder.count + Self.screensPerPage - 1) / Self.screensPerPage)
        let current = min(max(1, pageNumber), pages)
        let order = allOrder.dropFirst((current - 1) * Self.screensPerPage).prefix(Self.screensPerPage)
        var pager: Pager?
        if pages > 1 {
            let query = filters.queryString()
            func link(_ number: Int) -> String { base + "/screens" + (query.isEmpty ? "?" : query + "&") + "sort=\(percentEncode(figure.name))&page=\(number)" }
            let first = (current - 1) * Self.screensPerPage + 1
            pager = Pager(text: "Screens \(groupThousands(first))–\(groupThousands(first + order.count - 1)) of \(groupThousands(allOrder.count))",
                          previous: current > 1 ? link(current - 1) : nil, next: current < pages ? link(current + 1) : nil)
        }
        let rows = order.compactMap { name -> ScreenRow? in
            guard let rollup = byScreen[name] else { return nil }
            // Data in the API's unit (seconds); milliseconds only in the text.
            let p95 = Metric.frameDurationP95.value(in: rollup.report)
            let p95Band = chrome.thresholds.band(of: p95, figure: .frameDurationP95)
            let values = starts.map { trend[name]?[$0].flatMap(QueryFigure(.hitchRatio).value(of:)) }
            return ScreenRow(screen: name, link: base + "/screens/" + percentEncode(name) + filters.queryString(), visits: groupThousands(rollup.visits),
                             visitsRaw: rollup.visits, frames: groupThousands(rollup.report.frames), cells: cells(rollup, thresholds: chrome.thresholds),
                             p95: formatFigure(p95.map { $0 * 1000 }) + (p95Band.map { " · \($0.rawValue)" } ?? ""), p95Raw: p95.map { String($0) } ?? "",
                             p95Band: p95Band?.rawValue, sparkline: Sparkline(values: values, unit: Figure.hitchRatio.unit).svg())
        }
        let headers = zip(Self.figures, Self.columnHeaders).map { Header(key: $0.0.0.rawValue, label: $0.1, direction: $0.0.0.direction) }
        let p95Header = Header(key: Metric.frameDurationP95.rawValue, label: Figure.frameDurationP95.label + " (ms)", direction: Metric.frameDurationP95.direction)
        let page = ScreensPage(page: chrome, hasData: !rows.isEmpty, rows: rows, headers: headers, p95Header: p95Header,
                               sortLabel: "\(figure.name) (\(figure.unit)), \(figure.higherIsWorse == false ? "lowest" : "highest") first", pager: pager)
        return library.render(page, withTemplate: "screens") ?? ""
    }

    // MARK: Sign-in

    struct SignInPage { var css: String; var error: String?; var next: String; var csrfToken: String }

    /// The sign-in form, with `error` above it when the last attempt failed.
    public func signIn(error: String?, next: String, csrfToken: String = "") -> String {
        library.render(SignInPage(css: css, error: error, next: next, csrfToken: csrfToken), withTemplate: "sign-in") ?? ""
    }
}

/// The dashboard cannot start (its resources are missing).
public struct DashboardError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
