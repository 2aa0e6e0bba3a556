import Foundation
import FramescopeCollector
import FramescopeCore

/// The compare page: per screen, each figure's change between two app versions, judged
/// by the app's verdict rules.
extension DashboardPages {
    struct ChangeCell { var metric: String; var baseline: String; var candidate: String; var change: String; var interval: String; var verdict: String; var verdictWord: String }
    struct CompareRow { var screen: String; var link: String; var verdict: String; var verdictWord: String; var cells: [ChangeCell] }

    struct ComparePage {
        var page: Chrome
        var hasVersions: Bool
        var baselineOptions: [Option]
        var candidateOptions: [Option]
        var baseline: String
        var candidate: String
        var hasData: Bool
        var rows: [CompareRow]
        var headers: [String]
        var summary: String
        /// The verdict rule in words, with the app's minimum change and sample.
        var verdictRule: String
        /// The one screen shown (`?screen=`, as an alert links it), or `nil` for all.
        var onlyScreen: String? = nil
        /// The same comparison with every screen.
        var allScreensLink = ""
        /// Said under the table when it lists only the first ``DashboardLimits/compareRows`` screens.
        var rowsNote: String? = nil
    }

    static func summary(regressed: Int, improved: Int) -> String {
        func screens(_ count: Int) -> String { count == 1 ? "1 screen" : "\(count) screens" }
        return "\(screens(regressed)) regressed, \(screens(improved)) improved"
    }

    static func verdictWord(_ verdict: Verdict) -> String {
        switch verdict {
        case .regressed: "regressed"
        case .improved: "improved"
        case .noSignificantChange: "no significant change"
        case .inconclusive: "inconclusive"
        }
    }

    /// Per screen, each figure's change from `baseline` to `candidate` with its interval
    /// and verdict under the app's verdict rules (its minimum change and sample,
    /// ``AppThresholds/verdictRules``), regressions first. Without a choice, the two newest versions.
    ///
    /// With `screen`, only that screen's row is shown, from the same comparison over every
    /// screen, so its intervals are those a regression alert on it was raised with.
    public func compare(app: String, filters: DashboardFilters, baseline: String?, candidate: String?, now: Double, csrfToken: String = "",
                        screen: String? = nil) async throws -> String {
        var unfiltered = filters
        unfiltered.values[.appVersion] = nil
        let query = unfiltered.query(now: now)
        let base = "/dashboard/apps/\(percentEncode(app))"
        // The versions with the most visits (however many there are), and the ones asked for
        // when they have data.
        var offered = try await queries.topDimensionValues(app: app, dimension: .appVersion, from: query.from, to: query.to, search: nil,
                                                         limit: DashboardLimits.compareVersions).map(\.value)
        for asked in [baseline, candidate].compactMap({ $0 }) where !asked.isEmpty && !offered.contains(asked) {
            let found = try await queries.topDimensionValues(app: app, dimension: .appVersion, from: query.from, to: query.to, search: asked,
                                                           limit: ValueVisits.maximumLimit)
            if found.contains(where: { $0.value == asked }) { offered.append(asked) }
        }
        let versions = offered.sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        let chosenCandidate = candidate.flatMap { versions.contains($0) ? $0 : nil } ?? versions.last ?? ""
        let chosenBaseline = baseline.flatMap { versions.contains($0) ? $0 : nil }
            ?? versions.last { $0 != chosenCandidate && $0.compare(chosenCandidate, options: .numeric) == .orderedAscending } ?? versions.first ?? ""
        var chrome = try await chrome(title: "Compare versions", app: app, filters: unfiltered, now: now, action: base + "/compare",
                                      hidden: [Hidden(name: "baseline", value: chosenBaseline), Hidden(name: "candidate", value: chosenCandidate)], csrfToken: csrfToken)
        chrome.isCompare = true
        chrome.selects.removeAll { $0.name == QueryDimension.appVersion.queryName }
        var rows: [CompareRow] = []
        if !versions.isEmpty, chosenBaseline != chosenCandidate {
            let comparison = try await queries.compare(app: app, query: query, baseline: chosenBaseline, candidate: chosenCandidate,
                                                       rules: chrome.thresholds.verdictRules)
            rows = comparison.screens.map { screen in
                CompareRow(screen: screen.screen, link: base + "/screens/" + percentEncode(screen.screen) + unfiltered.queryString(),
                           verdict: screen.verdict.rawValue, verdictWord: Self.verdictWord(screen.verdict),
                           cells: screen.metrics.map { change in
                    let relative = change.relativeChange.map { String(format: "%+.0f %%", $0 * 100) } ?? ""
                    let interval = (change.changeLow.flatMap { low in change.changeHigh.map { (low, $0) } })
                        .map { "interval \(formatFigure($0.0)) to \(formatFigure($0.1)) \(change.unit)" } ?? "too little data for an interval"
                    return ChangeCell(metric: change.metric, baseline: formatFigure(change.baseline), candidate: formatFigure(change.candidate),
                                      change: change.change.map { (($0 >= 0 ? "+" : "") + formatFigure($0, unit: change.unit)) + (relative.isEmpty ? "" : " (\(relative))") } ?? "–",
                                      interval: interval, verdict: change.verdict.rawValue, verdictWord: Self.verdictWord(change.verdict))
                })
            }
        }
        let onlyScreen = screen.flatMap { $0.isEmpty ? nil : String($0.prefix(128)) }
        if let onlyScreen { rows = rows.filter { $0.screen == onlyScreen } }
        // Regressions come first, then improvements: the rows left out are the quietest.
        let listed = rows.count
        let summary = Self.summary(regressed: rows.filter { $0.verdict == "regressed" }.count, improved: rows.filter { $0.verdict == "improved" }.count)
        rows = Array(rows.prefix(DashboardLimits.compareRows))
        var page = ComparePage(page: chrome, hasVersions: versions.count >= 2,
                               baselineOptions: versions.map { Option(value: $0, label: $0, selected: $0 == chosenBaseline) },
                               candidateOptions: versions.map { Option(value: $0, label: $0, selected: $0 == chosenCandidate) },
                               baseline: chosenBaseline, candidate: chosenCandidate, hasData: !rows.isEmpty, rows: rows,
                               headers: Self.columnHeaders,
                               summary: summary,
                               verdictRule: Self.verdictRule(chrome.thresholds))
        page.onlyScreen = onlyScreen
        if listed > rows.count {
            page.rowsNote = "Listing the first \(groupThousands(rows.count)) of \(groupThousands(listed)) screens, regressions first: "
                + "the \(groupThousands(listed - rows.count)) left out changed least; choose a screen's page or filter to see one."
        }
        page.allScreensLink = base + "/compare" + unfiltered.queryString([("baseline", chosenBaseline), ("candidate", chosenCandidate)])
        return library.render(page, withTemplate: "compare") ?? ""
    }
}
