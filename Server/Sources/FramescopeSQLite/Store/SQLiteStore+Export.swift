import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Raw events out, for ``EventExport``: the keys of one hour in export order, then the
/// events of a list of keys.
///
/// Events are indexed by the hour of their start (`events_by_start_hour`, an index that
/// grows at its end as events arrive), not by exact start time, so one read sorts one
/// hour's matching keys (16 bytes each) and a second fetches the events by id: the memory
/// an export holds is one hour's keys and one chunk of events, whatever the range.
extension SQLiteStore {
    /// One step down `events_by_start_hour` (ordered by hour; it stops at the first of the
    /// app's entries), so an export skips empty stretches of any length in one read.
    public func firstRawEventHour(app: String, from hour: Int64, through lastHour: Int64) async throws -> Int64? {
        guard hour <= lastHour else { return nil }
        return try await database.read { db in
            try Int64.fetchOne(db, sql: """
                SELECT CAST(started_at / 3600 AS INTEGER) FROM events
                WHERE CAST(started_at / 3600 AS INTEGER) >= ? AND CAST(started_at / 3600 AS INTEGER) <= ? AND app_id = ?
                ORDER BY CAST(started_at / 3600 AS INTEGER) LIMIT 1
                """, arguments: [hour, lastHour, app])
        }
    }

    public func rawEventKeys(app: String, query: EventQuery, hour: Int64, after: RawEventKey?) async throws -> [RawEventKey] {
        var sql = "SELECT started_at, id FROM events WHERE CAST(started_at / 3600 AS INTEGER) = ? AND app_id = ? AND started_at >= ? AND started_at < ?"
        var arguments: StatementArguments = [hour, app, query.screens.from, query.screens.to]
        for dimension in QueryDimension.all {
            guard let value = query.screens[dimension] else { continue }
            sql += " AND \(dimension.storeColumn) = ?"
            arguments += [Self.storedValue(value, of: dimension)]
        }
        // Keys and values are bound, never spliced: json_each lists the tags object's members.
        for (key, value) in query.tags.sorted(by: { $0.key < $1.key }) {
            sql += " AND EXISTS (SELECT 1 FROM json_each(payload, '$.context.tags') WHERE json_each.key = ? AND json_each.value = ? AND json_each.type = 'text')"
            arguments += [key, value]
        }
        if let after {
            sql += " AND (started_at > ? OR (started_at = ? AND id > ?))"
            arguments += [after.startedAt, after.startedAt, after.id]
        }
        sql += " ORDER BY started_at, id"
        let statement = (sql, arguments)
        return try await database.read { db in
            var keys: [RawEventKey] = []
            let rows = try Row.fetchCursor(db, sql: statement.0, arguments: statement.1)
            while let row = try rows.next() {
                keys.append(RawEventKey(startedAt: row[0], id: row[1]))
            }
            return keys
        }
    }

    public func rawEvents(app: String, keys: [RawEventKey]) async throws -> [StoredEvent] {
        guard !keys.isEmpty else { return [] }
        let ids = keys.map(\.id)
        let byID: [Int64: StoredEvent] = try await database.read { db in
            var found: [Int64: StoredEvent] = [:]
            // SQLite binds at most 32 766 values per statement; chunks stay far below.
            for chunk in stride(from: 0, to: ids.count, by: 500) {
                let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
                let sql = "SELECT id, started_at, received_at, batch_id, payload, \(QueryDimension.all.map(\.storeColumn).joined(separator: ", ")) FROM events WHERE app_id = ? AND id IN ("
                    + part.map { _ in "?" }.joined(separator: ",") + ")"
                let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments([app as any DatabaseValueConvertible] + part.map { $0 as any DatabaseValueConvertible }))
                while let row = try rows.next() {
                    let id: Int64 = row[0]
                    found[id] = StoredEvent(key: RawEventKey(startedAt: row[1], id: id), receivedAt: row[2], batchId: row[3],
                                            values: Self.dimensionValues(row), payload: row[4])
                }
            }
            return found
        }
        // Events deleted by retention between the two reads are left out.
        return keys.compactMap { byID[$0.id] }
    }
}
