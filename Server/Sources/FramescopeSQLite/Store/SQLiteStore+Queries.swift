import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Reads: rollup rows merged per group, dimension values, and raw-event housekeeping.
extension SQLiteStore {
    /// Plans the reads (``RollupRead/plan(for:)``), selects their rows and merges them
    /// per group in Swift.
    public func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate] {
        let filter = query.filter
        if let problem = query.problem {
            throw StoreError.invalidQuery(field: problem.field, message: problem.message)
        }
        var statements: [(sql: String, arguments: StatementArguments, level: RollupLevel)] = []
        for read in RollupRead.plan(for: query) {
            var sql: String
            var arguments: StatementArguments = [app, read.from, read.to]
            if let tagKey = read.tagKey {
                sql = "SELECT bucket, tag_value, \(Self.keyColumns.joined(separator: ", ")), visits, report, motion, stats, devices FROM \(Self.tagTableName(read.level)) WHERE app_id = ? AND bucket >= ? AND bucket < ? AND tag_key = ?"
                arguments += [tagKey]
                if let tag = filter.tag {
                    sql += " AND tag_value = ?"
                    arguments += [tag.value]
                }
            } else {
                sql = "SELECT bucket, \(Self.keyColumns.joined(separator: ", ")), visits, report, motion, stats, devices FROM \(Self.tableName(read.level)) WHERE app_id = ? AND bucket >= ? AND bucket < ?"
            }
            for dimension in QueryDimension.all where read.level.keepsDimensions || !dimension.isRollupDimension {
                guard let value = filter[dimension] else { continue }
                sql += " AND \(dimension.storeColumn) = ?"
                arguments += [Self.storedValue(value, of: dimension)]
            }
            statements.append((sql, arguments, read.level))
        }
        let planned = statements
        struct GroupKey: Hashable { var screen: String?; var bucket: Double?; var dimension: String? }
        let groups: [GroupKey: RollupValue] = try await database.read { db in
            var groups: [GroupKey: RollupValue] = [:]
            for statement in planned {
                let rows = try Row.fetchCursor(db, sql: statement.sql, arguments: statement.arguments)
                while let row = try rows.next() {
                    let key = RollupKey(bucketStart: row["bucket"], values: Self.dimensionValues(row))
                    let group = GroupKey(screen: query.byScreen ? key.screen : nil,
                                         bucket: query.interval.map { Double(RollupLevel.floor(key.bucketStart, to: Int64($0.seconds))) },
                                         dimension: query.tagKey != nil ? row["tag_value"] : query.dimension.map { key[$0] })
                    groups[group, default: RollupValue()].merge(try Self.decodeValue(row))
                }
            }
            return groups
        }
        return groups.map { RollupAggregate(screen: $0.key.screen, bucketStart: $0.key.bucket, dimensionValue: $0.key.dimension, rollup: $0.value) }
            .sorted { ($0.bucketStart ?? 0, $0.screen ?? "", $0.dimensionValue ?? "") < ($1.bucketStart ?? 0, $1.screen ?? "", $1.dimensionValue ?? "") }
    }

    /// Every dimension's value in a row, as text, in registry order.
    static func dimensionValues(_ row: Row) -> [String] {
        QueryDimension.all.map { dimension in
            dimension.values == .boolean ? ((row[dimension.storeColumn] as Bool) ? "true" : "false") : row[dimension.storeColumn] as String
        }
    }

    /// A filter's text as the store keeps it: booleans as integers, the rest as text.
    static func storedValue(_ text: String, of dimension: QueryDimension) -> any DatabaseValueConvertible {
        dimension.values == .boolean ? (text == "true") : text
    }

    /// `SELECT DISTINCT` over the daily rollups, without decoding any report.
    public func dimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double) async throws -> [String] {
        let column = dimension.storeColumn
        let dayFrom = RollupLevel.floor(Int64(from.rounded(.down)), to: 86_400)
        let end = Int64(to.rounded(.up))
        return try await database.read { db in
            if dimension.values == .boolean {
                return try Bool.fetchAll(db, sql: "SELECT DISTINCT \(column) FROM rollups_daily WHERE app_id = ? AND bucket >= ? AND bucket < ? ORDER BY 1",
                                         arguments: [app, dayFrom, end]).map { $0 ? "true" : "false" }
            }
            return try String.fetchAll(db, sql: "SELECT DISTINCT \(column) FROM rollups_daily WHERE app_id = ? AND bucket >= ? AND bucket < ? ORDER BY 1",
                                       arguments: [app, dayFrom, end])
        }
    }

    /// `SELECT COUNT(*)` over the app's raw events.
    public func rawEventCount(app: String) async throws -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events WHERE app_id = ?", arguments: [app]) ?? 0 }
    }

    /// Deletes up to `limit` raw events that started before `cutoff`, oldest hours first,
    /// in one transaction. The walk follows `events_by_start_hour`; a cutoff on a whole
    /// hour (as ``RetentionService`` passes) reads no event it keeps.
    public func deleteRawEvents(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        // SQLite's CAST truncates toward zero, as Int64(_:) does.
        let cutoffHour = Int64(cutoff / 3600)
        let onWholeHour = cutoff > 0 && Double(cutoffHour) * 3600 == cutoff
        // The hours to walk: those before the cutoff's hour, and that hour too when the
        // cutoff falls inside it (`started_at < cutoff` then picks within it).
        let lastHour = onWholeHour ? cutoffHour : cutoffHour + 1
        return try await database.write { db in
            try db.execute(sql: """
                DELETE FROM events WHERE id IN (
                    SELECT id FROM events
                    WHERE CAST(started_at / 3600 AS INTEGER) < ? AND started_at < ?
                    ORDER BY CAST(started_at / 3600 AS INTEGER) LIMIT ?)
                """, arguments: [lastHour, cutoff, limit])
            return db.changesCount
        }
    }
}
