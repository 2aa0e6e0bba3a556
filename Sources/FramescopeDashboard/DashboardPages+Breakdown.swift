import FramescopeCollector
import FramescopeCore

/// The overview's "break down by" section: the figures per value of one dimension (the
/// choice in `by`), with visit counts, each value a link that adds it to the filters.
extension DashboardPages {
    struct BreakdownSection {
        struct Choice { var value: String; var label: String; var selected: Bool }
        struct Row { var value: String; var label: String; var link: String; var visits: String; var cells: [Cell] }
        /// The dimension's label in a sentence ("thermal state").
        var heading: String
        /// The dimension's label for the column ("Thermal state").
        var column: String
        var choices: [Choice]
        var rows: [Row]
        /// The current filters, kept as hidden fields when the choice changes.
        var hidden: [Hidden]
    }

    /// The figures of `query` per value of `filters.breakdown`.
    func breakdownSection(app: String, filters: DashboardFilters, query: ScreenQuery, base: String, chrome: Chrome) async throws -> BreakdownSection {
        let dimension = filters.breakdown
        let groups = try await store.aggregate(app: app, query: AggregateQuery(filter: query, dimension: dimension))
        let rows = groups.map { group -> BreakdownSection.Row in
            let value = group.dimensionValue ?? ""
            var fixed = filters
            fixed.values[dimension.dimension] = value
            return BreakdownSection.Row(value: value, label: dimension.dimension.displayValue(value),
                                        link: base + fixed.queryString([("by", dimension.rawValue)]),
                                        visits: groupThousands(group.visits), cells: cells(group.rollup, thresholds: chrome.thresholds))
        }
        let choices = RollupDimension.allCases.map {
            BreakdownSection.Choice(value: $0.rawValue, label: $0.dimension.label, selected: $0 == dimension)
        }
        var hidden = [Hidden(name: "days", value: String(filters.days))]
        if filters.interval == .hour { hidden.append(Hidden(name: "interval", value: "hour")) }
        for filtered in QueryDimension.rollupDimensions {
            if let value = filters.values[filtered] { hidden.append(Hidden(name: filtered.queryName, value: value)) }
        }
        return BreakdownSection(heading: dimension.dimension.labelInSentence, column: dimension.dimension.label,
                                choices: choices, rows: rows, hidden: hidden)
    }
}
