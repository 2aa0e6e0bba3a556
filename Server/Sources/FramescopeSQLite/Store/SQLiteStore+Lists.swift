import FramescopeCore
import FramescopeStore
import GRDB

/// Bounded value lists: a dimension's or declared tag's values by visits, for filter menus
/// that stay small however many values an app has.
extension SQLiteStore {
    /// `SUM(visits)` per value over the daily rollups of the days `[from, to)` touches,
    /// most first, without decoding any report; `search` matches with `instr(lower(…))`.
    public func topDimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double, search: String?,
                                   limit: Int) async throws -> [ValueVisits] {
        let column = dimension.storeColumn
        let rows = try await topValues(column: column, table: "rollups_daily", condition: "", arguments: [],
                                       app: app, from: from, to: to, search: dimension.values == .boolean ? nil : search, limit: limit)
        guard dimension.values == .boolean else { return rows }
        // Stored as 0 and 1: the same words as every other answer.
        return rows.map { ValueVisits(value: $0.value == "1" ? "true" : "false", visits: $0.visits) }
            .filter { ValueVisits.matches($0.value, search: search) }
    }

    /// `SUM(visits)` per value of the declared tag `key` over its daily rollups.
    public func topTagValues(app: String, key: String, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits] {
        try await topValues(column: "tag_value", table: "rollups_tag_daily", condition: " AND tag_key = ?", arguments: [key],
                            app: app, from: from, to: to, search: search, limit: limit)
    }

    private func topValues(column: String, table: String, condition: String, arguments extra: StatementArguments, app: String,
                           from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits] {
        let dayFrom = RollupLevel.floor(Int64(from.rounded(.down)), to: 86_400)
        let end = Int64(to.rounded(.up))
        var sql = "SELECT CAST(\(column) AS TEXT), SUM(visits) AS total FROM \(table) WHERE app_id = ? AND bucket >= ? AND bucket < ?" + condition
        var arguments: StatementArguments = [app, dayFrom, end]
        arguments += extra
        if let search, !search.isEmpty {
            sql += " AND instr(lower(\(column)), lower(?)) > 0"
            arguments += [search]
        }
        sql += " GROUP BY \(column) ORDER BY total DESC, \(column) LIMIT ?"
        arguments += [min(max(0, limit), ValueVisits.maximumLimit)]
        let bound = arguments
        let statement = sql
        return try await database.read { db in
            try Row.fetchAll(db, sql: statement, arguments: bound).map { ValueVisits(value: $0[0], visits: $0[1]) }
        }
    }
}
