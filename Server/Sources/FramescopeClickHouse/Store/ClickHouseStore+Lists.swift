import FramescopeCore
import FramescopeStore

/// Bounded value lists: a dimension's or declared tag's values by visits, for filter menus
/// that stay small however many values an app has.
extension ClickHouseStore {
    /// Visits per value (the first element of the merged `counts`) over the daily rollups of
    /// the days `[from, to)` touches, most first; `search` matches with
    /// `positionCaseInsensitive` (ASCII letters in either case, as SQLite's `lower`).
    public func topDimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double, search: String?,
                                   limit: Int) async throws -> [ValueVisits] {
        let column = dimension.storeColumn
        let isBoolean = dimension.values == .boolean
        let rows = try await topValues(expression: "toString(\(column))", table: "rollups_daily", condition: "", app: app, from: from, to: to,
                                       search: isBoolean ? nil : search, limit: limit)
        guard isBoolean else { return rows }
        return rows.map { ValueVisits(value: Self.text($0.value, of: dimension), visits: $0.visits) }
            .filter { ValueVisits.matches($0.value, search: search) }
    }

    /// Visits per value of the declared tag `key` over its daily rollups.
    public func topTagValues(app: String, key: String, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits] {
        try await topValues(expression: "tag_value", table: "rollups_tag_daily", condition: " AND tag_key = \(Self.quote(key))",
                            app: app, from: from, to: to, search: search, limit: limit)
    }

    private func topValues(expression: String, table: String, condition: String, app: String, from: Double, to: Double,
                           search: String?, limit: Int) async throws -> [ValueVisits] {
        let (dayFrom, end) = Self.dayRange(from: from, to: to)
        var sql = """
            SELECT \(expression) AS value, arrayElement(sumForEachMerge(counts), 1) AS total FROM \(table)
            WHERE app_id = \(Self.quote(app)) AND bucket >= toDateTime(\(dayFrom), 'UTC') AND bucket < toDateTime(\(end), 'UTC')\(condition)
            """
        if let search, !search.isEmpty { sql += " AND positionCaseInsensitive(\(expression), \(Self.quote(search))) > 0" }
        sql += " GROUP BY value ORDER BY total DESC, value LIMIT \(min(max(0, limit), ValueVisits.maximumLimit))"
        return try await client.rows(sql).compactMap { row in
            guard row.count == 2, let visits = Int(row[1]) else { return nil }
            return ValueVisits(value: row[0], visits: visits)
        }
    }
}
