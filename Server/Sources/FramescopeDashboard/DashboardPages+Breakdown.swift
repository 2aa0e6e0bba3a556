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
        /// Said under the table when it shows only the values with the most visits.
        var note: String?
    }

    /// The figures of `query` per value of `filters.breakdown`, or of the declared tag
    /// `filters.breakdownTag`; the choices are every dimension and every declared tag.
    func breakdownSection(app: String, filters: DashboardFilters, query: ScreenQuery, base: String, chrome: Chrome) async throws -> BreakdownSection {
        let dimension = filters.breakdown
        let tagKey = filters.breakdownTag
        let all = try await queries.aggregate(app: app, query: tagKey.map { AggregateQuery(filter: query, tagKey: $0) }
                                                                 ?? AggregateQuery(filter: query, dimension: dimension))
        let (groups, leftOut) = Self.mostVisited(all, limit: DashboardLimits.tableRows)
        let rows = groups.map { group -> BreakdownSection.Row in
            let value = group.dimensionValue ?? ""
            var fixed = filters
            if let tagKey { fixed.tag = TagFilter(key: tagKey, value: value) } else { fixed.values[dimension] = value }
            return BreakdownSection.Row(value: value, label: tagKey == nil ? dimension.displayValue(value) : value,
                                        link: base + fixed.queryString([("by", filters.breakdownParameter)]),
                                        visits: groupThousands(group.visits), cells: cells(group.rollup, thresholds: chrome.thresholds))
        }
        var choices = QueryDimension.rollupDimensions.map {
            BreakdownSection.Choice(value: $0.queryName, label: $0.label, selected: tagKey == nil && $0 == dimension)
        }
        for key in filters.declaredTags where filters.tag == nil || filters.tag?.key == key {
            choices.append(BreakdownSection.Choice(value: DeclaredTags.parameterPrefix + key, label: "Tag \(key)", selected: key == tagKey))
        }
        var hidden = [Hidden(name: "days", value: String(filters.days))]
        if filters.interval == .hour { hidden.append(Hidden(name: "interval", value: "hour")) }
        for filtered in QueryDimension.rollupDimensions {
            if let value = filters.values[filtered] { hidden.append(Hidden(name: filtered.queryName, value: value)) }
        }
        if let tag = filters.tag { hidden.append(Hidden(name: DeclaredTags.parameterPrefix + tag.key, value: tag.value)) }
        let heading = tagKey.map { "tag \($0)" } ?? dimension.labelInSentence
        return BreakdownSection(heading: heading, column: tagKey.map { "Tag \($0)" } ?? dimension.label,
                                choices: choices, rows: rows, hidden: hidden,
                                note: Self.leftOutNote(shown: groups.count, leftOut: leftOut, noun: "values", how: "choose one in the filters"))
    }
}
