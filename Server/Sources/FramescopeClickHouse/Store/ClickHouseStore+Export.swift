import Foundation
import FramescopeCore
import FramescopeStore

/// Raw events out, for ``EventExport``: the keys of one hour in export order, then the events
/// of a list of keys. `events` is ordered by app and hour, so each read touches the app's
/// granules of one hour.
extension ClickHouseStore {
    /// The earliest hour with one of the app's events in `[hour, lastHour]`, in one read.
    public func firstRawEventHour(app: String, from hour: Int64, through lastHour: Int64) async throws -> Int64? {
        guard hour <= lastHour, lastHour >= 0, hour <= 1_193_046 else { return nil }
        let low = max(0, hour) * 3600
        let high = min(lastHour, 1_193_046) * 3600
        let rows = try await client.rows("""
            SELECT intDiv(toUInt32(min(hour)), 3600), count() FROM events WHERE app_id = \(Self.quote(app))
            AND hour >= toDateTime(\(low), 'UTC') AND hour <= toDateTime(\(high), 'UTC')
            """)
        guard let row = rows.first, row.count == 2, row[1] != "0" else { return nil }
        return Int64(row[0])
    }

    /// The keys of the app's events that started in `hour` and match `query` (its range and
    /// filters, and each tag as a key and value among the event's own tags), after `after`,
    /// by start, then id.
    public func rawEventKeys(app: String, query: EventQuery, hour: Int64, after: RawEventKey?) async throws -> [RawEventKey] {
        guard hour >= 0, hour <= 1_193_046 else { return [] }
        var sql = """
            SELECT started_at, event_id FROM events WHERE app_id = \(Self.quote(app)) AND hour = toDateTime(\(hour * 3600), 'UTC')
            AND started_at >= \(Self.number(query.screens.from)) AND started_at < \(Self.number(query.screens.to))
            """
        for dimension in QueryDimension.all {
            guard let value = query.screens[dimension] else { continue }
            sql += " AND \(dimension.storeColumn) = \(Self.literal(value, of: dimension))"
        }
        for (key, value) in query.tags.sorted(by: { $0.key < $1.key }) {
            sql += " AND arrayExists((k, v) -> k = \(Self.quote(key)) AND v = \(Self.quote(value)), event_tag_keys, event_tag_values)"
        }
        if let after {
            sql += " AND (started_at > \(Self.number(after.startedAt)) OR (started_at = \(Self.number(after.startedAt)) AND event_id > \(max(0, after.id))))"
        }
        sql += " ORDER BY started_at, event_id"
        return try await client.rows(sql).compactMap { row in
            guard row.count == 2, let start = Double(row[0]), let id = Int64(row[1]) else { return nil }
            return RawEventKey(startedAt: start, id: id)
        }
    }

    /// The events of `keys` (looked up by hour and id), with their batch's receipt time from
    /// the ledger, in the keys' order; an event deleted meanwhile is left out.
    public func rawEvents(app: String, keys: [RawEventKey]) async throws -> [StoredEvent] {
        guard !keys.isEmpty else { return [] }
        var found: [RawEventKey: StoredEvent] = [:]
        for chunk in stride(from: 0, to: keys.count, by: 1000) {
            let part = keys[chunk..<min(chunk + 1000, keys.count)]
            let hours = Set(part.map { $0.hour }).filter { $0 >= 0 && $0 <= 1_193_046 }.sorted().map { "toDateTime(\($0 * 3600), 'UTC')" }
            guard !hours.isEmpty else { continue }
            let ids = part.map { String(max(0, $0.id)) }.joined(separator: ",")
            // On a cluster the subquery runs once and its result goes to every shard.
            let globalIn = topology.cluster == nil ? "IN" : "GLOBAL IN"
            let events = "FROM events WHERE app_id = \(Self.quote(app)) AND hour IN (\(hours.joined(separator: ","))) AND event_id IN (\(ids))"
            let columns = QueryDimension.all.map(\.storeColumn)
            let rows = try await client.rows("""
                SELECT e.event_id, e.started_at, b.received_at, e.batch_id, e.payload, \(columns.map { "e." + $0 }.joined(separator: ", "))
                FROM (SELECT event_id, started_at, batch_id, payload, \(columns.joined(separator: ", ")) \(events)) AS e
                ANY LEFT JOIN (SELECT batch_id, min(received_at) AS received_at FROM batches
                               WHERE app_id = \(Self.quote(app)) AND batch_id \(globalIn) (SELECT batch_id \(events)) GROUP BY batch_id) AS b
                USING batch_id
                """)
            for row in rows where row.count == 5 + columns.count {
                guard let id = Int64(row[0]), let start = Double(row[1]) else { continue }
                let values = zip(QueryDimension.all, row[5...]).map { Self.text($1, of: $0) }
                found[RawEventKey(startedAt: start, id: id)] = StoredEvent(key: RawEventKey(startedAt: start, id: id), receivedAt: Double(row[2]) ?? 0,
                                                                            batchId: row[3], values: values, payload: row[4])
            }
        }
        return keys.compactMap { found[$0] }
    }

    /// A finite number as SQL text (its shortest exact form), clamped for values no event has.
    static func number(_ value: Double) -> String {
        // 18.16 refuses subnormal literals such as 1e-310.
        value.isFinite ? (abs(value) < 1e-300 ? "0" : "\(value)") : value > 0 ? "1e300" : "-1e300"
    }
}
