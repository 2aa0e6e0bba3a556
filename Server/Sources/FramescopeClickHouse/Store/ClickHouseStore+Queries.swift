import Foundation
import FramescopeCore
import FramescopeStore

/// Reads: the planned rollup reads merged per group in the engine, dimension and tag values,
/// and raw-event housekeeping.
extension ClickHouseStore {
    /// Plans the reads (``RollupRead/plan(for:)``: whole days from a daily level, the edges
    /// from an hourly one), sends them as one `UNION ALL` and merges the aggregate states of
    /// each group in the engine; each merged row is decoded once (``VisitColumns``).
    public func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate] {
        if let problem = query.problem {
            throw StoreError.invalidQuery(field: problem.field, message: problem.message)
        }
        let filter = query.filter
        let reads = RollupRead.plan(for: query)
        guard !reads.isEmpty else { return [] }
        let dimensionColumn = query.dimension.map(\.storeColumn)
        var parts: [String] = []
        for read in reads where read.from <= 4_294_967_295 && read.to > 0 {
            // Constants are materialized: a Distributed table refuses a constant column that a
            // shard's stream does not have as one (18.16, Code 171).
            let screen = query.byScreen ? "screen" : "materialize('')"
            let bucket = query.interval.map { "intDiv(toUInt32(bucket), \(Int64($0.seconds))) * \(Int64($0.seconds))" } ?? "materialize(toUInt32(0))"
            let group = read.tagKey != nil && query.tagKey != nil ? "tag_value" : dimensionColumn.map { "toString(\($0))" } ?? "materialize('')"
            var sql = "SELECT \(screen) AS g_screen, \(bucket) AS g_bucket, \(group) AS g_value, counts, sums, mins, maxes, tallies, devices, band FROM "
            sql += read.tagKey != nil ? Self.tagTable(read.level) : Self.table(read.level)
            sql += " WHERE app_id = \(Self.quote(app)) AND bucket >= toDateTime(\(max(0, read.from)), 'UTC') AND bucket < toDateTime(\(max(0, min(read.to, 4_294_967_295))), 'UTC')"
            if let tagKey = read.tagKey {
                sql += " AND tag_key = \(Self.quote(tagKey))"
                if let tag = filter.tag { sql += " AND tag_value = \(Self.quote(tag.value))" }
            }
            for dimension in QueryDimension.all where read.level.keepsDimensions || !dimension.isRollupDimension {
                guard let value = filter[dimension] else { continue }
                sql += " AND \(dimension.storeColumn) = \(Self.literal(value, of: dimension))"
            }
            parts.append(sql)
        }
        // DateTime holds 1970–2106; a range wholly outside has no data (18.16 would wrap it).
        guard !parts.isEmpty else { return [] }
        let sql = """
            SELECT g_screen, g_bucket, g_value, sumForEachMerge(counts), sumForEachMerge(sums), minForEachMerge(mins), maxForEachMerge(maxes),
                   sumMapMerge(tallies) AS merged_tallies, tupleElement(merged_tallies, 1), tupleElement(merged_tallies, 2),
                   groupUniqArrayMerge(devices), argMinIfMerge(band)
            FROM (\(parts.joined(separator: " UNION ALL ")))
            GROUP BY g_screen, g_bucket, g_value
            """
        var result: [RollupAggregate] = []
        for row in try await client.rows(sql) {
            guard row.count == 12, let bucket = Double(row[1]) else { throw ClickHouseError.server(code: 0, message: "unexpected aggregate row") }
            let value = try VisitColumns.value(counts: Self.unsigned(row[3]), sums: Self.doubles(row[4]), mins: Self.doubles(row[5]), maxes: Self.doubles(row[6]),
                                               tallyKeys: Self.unsigned(row[8]), tallyCounts: Self.unsigned(row[9]),
                                               deviceCodes: Self.unsigned(row[10]).map { UInt16(truncatingIfNeeded: $0) }, band: Double(row[11]) ?? 0.2)
            var dimensionValue: String?
            if query.tagKey != nil {
                dimensionValue = row[2]
            } else if let dimension = query.dimension {
                dimensionValue = Self.text(row[2], of: dimension)
            }
            result.append(RollupAggregate(screen: query.byScreen ? row[0] : nil, bucketStart: query.interval == nil ? nil : bucket,
                                          dimensionValue: dimensionValue, rollup: value))
        }
        return result.sorted { ($0.bucketStart ?? 0, $0.screen ?? "", $0.dimensionValue ?? "") < ($1.bucketStart ?? 0, $1.screen ?? "", $1.dimensionValue ?? "") }
    }

    /// `SELECT DISTINCT` over the daily rollups' key column, without merging any state.
    public func dimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double) async throws -> [String] {
        let column = dimension.storeColumn
        let (dayFrom, end) = Self.dayRange(from: from, to: to)
        let rows = try await client.rows("""
            SELECT DISTINCT \(column) FROM rollups_daily WHERE app_id = \(Self.quote(app))
            AND bucket >= toDateTime(\(dayFrom), 'UTC') AND bucket < toDateTime(\(end), 'UTC') ORDER BY \(column)
            """)
        return rows.compactMap(\.first).map { Self.text($0, of: dimension) }
    }

    /// `SELECT DISTINCT tag_value` over the declared tag's daily rollups.
    public func tagValues(app: String, key: String, from: Double, to: Double) async throws -> [String] {
        let (dayFrom, end) = Self.dayRange(from: from, to: to)
        return try await client.rows("""
            SELECT DISTINCT tag_value FROM rollups_tag_daily WHERE app_id = \(Self.quote(app)) AND tag_key = \(Self.quote(key))
            AND bucket >= toDateTime(\(dayFrom), 'UTC') AND bucket < toDateTime(\(end), 'UTC') ORDER BY tag_value
            """).compactMap(\.first)
    }

    /// `count()` over the app's raw events.
    public func rawEventCount(app: String) async throws -> Int {
        Int(try await client.rows("SELECT count() FROM events WHERE app_id = \(Self.quote(app))").first?.first ?? "0") ?? 0
    }

    /// Deletes in whole partitions where it can: at most this many a call, by default
    /// (the retention sweep's chunk), i.e. no limit.
    public var retentionChunk: Int { 1 << 50 }

    /// Drops the months wholly before `cutoff` while their events fit in `limit`
    /// (`DROP PARTITION`: instant, on every shard), then deletes what is left before it,
    /// oldest first and at most what remains of `limit`, with one mutation, and waits until
    /// it is done. Returns how many events went.
    public func deleteRawEvents(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        guard cutoff > 0, limit > 0 else { return 0 }
        // The hour bound lets the primary key skip every later part.
        let cutoffHour = Int64(min(cutoff, 4_294_967_295) / 3600) * 3600
        let condition = "hour <= toDateTime(\(cutoffHour), 'UTC') AND started_at < \(Self.number(cutoff))"
        let table = "\(topology.database).events\(topology.localSuffix)\(topology.onCluster)"
        let cutoffMonth = Int(try await client.rows("SELECT toYYYYMM(toDateTime(\(cutoffHour), 'UTC'))").first?.first ?? "0") ?? 0
        var deleted = 0
        for row in try await client.rows("SELECT toYYYYMM(hour) AS month, count() FROM events WHERE \(condition) GROUP BY month ORDER BY month") {
            guard row.count == 2, let month = Int(row[0]), month < cutoffMonth, let count = Int(row[1]), deleted + count <= limit else { break }
            try await client.execute("ALTER TABLE \(table) DROP PARTITION \(month)", timeout: ClickHouseClient.schemaTimeout)
            deleted += count
        }
        let left = try await count("events", where: condition)
        guard left > 0, deleted < limit else { return deleted }
        if left <= limit - deleted {
            try await deleteRows("events", where: condition)
            return deleted + left
        }
        let oldest = try await client.rows("SELECT event_id FROM events WHERE \(condition) ORDER BY started_at, event_id LIMIT \(limit - deleted)").compactMap(\.first)
        // Lists of at most 1000 ids: a statement stays far below max_query_size (256 KiB).
        for chunk in stride(from: 0, to: oldest.count, by: 1000) {
            try await deleteRows("events", where: "\(condition) AND event_id IN (\(oldest[chunk..<min(chunk + 1000, oldest.count)].joined(separator: ",")))")
        }
        return deleted + oldest.count
    }

    /// Deletes `table`'s rows matching `condition` with `ALTER TABLE … DELETE` (on every
    /// shard's local table on a cluster) and waits, up to 60 s, until no mutation of the
    /// table is pending on any shard (`cluster(name, system.mutations)`; on one server its
    /// own) and no row matches any more. Rows inserted after the mutation was submitted are
    /// not touched by it: when only such rows are left at the end, it returns.
    ///
    /// Waiting only on the server asked left a window on a cluster in which the other shard
    /// still held the deleted rows, and a re-ingest right after a prune read them as seen.
    /// Waiting on `system.mutations` alone left another: a replicated table lists a mutation
    /// only once it has pulled it from ZooKeeper, which on a loaded machine came after the
    /// first check found nothing pending (a retention test on two shards counted rows twice).
    func deleteRows(_ table: String, where condition: String) async throws {
        try await client.execute("ALTER TABLE \(topology.database).\(table)\(topology.localSuffix)\(topology.onCluster) DELETE WHERE \(condition)",
                                 timeout: ClickHouseClient.schemaTimeout)
        let mutations = topology.cluster.map { "cluster(\(Self.quote($0)), system.mutations)" } ?? "system.mutations"
        let pending = "SELECT count() FROM \(mutations) WHERE database = \(Self.quote(topology.database)) AND table = \(Self.quote(table + topology.localSuffix)) AND is_done = 0"
        var settled = false
        for _ in 0..<600 {
            settled = try await client.rows(pending).first?.first == "0"
            if settled, try await count(table, where: condition) == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard settled else { throw ClickHouseError.server(code: 0, message: "a mutation of \(table) did not finish within 60 s") }
    }

    /// Forgets at most `limit` ledger entries received before `cutoff` (oldest first) and the
    /// distinct values of days before it, with mutations run only when there is something to
    /// forget, and expired sessions and keys.
    public func pruneAccessRecords(batchesReceivedBefore cutoff: Double, now: Double, limit: Int) async throws -> Int {
        try await pruneExpiredAccess(now: now)
        let ledger = "received_at < \(Self.number(cutoff))"
        var forgotten = try await count("batches", where: ledger)
        if forgotten > limit {
            let oldest = try await client.rows("SELECT app_id, batch_id FROM batches WHERE \(ledger) ORDER BY received_at LIMIT \(max(0, limit))").filter { $0.count == 2 }
            for chunk in stride(from: 0, to: oldest.count, by: 1000) {
                let pairs = oldest[chunk..<min(chunk + 1000, oldest.count)].map { "(\(Self.quote($0[0])), \(Self.quote($0[1])))" }.joined(separator: ", ")
                try await deleteRows("batches", where: "\(ledger) AND (app_id, batch_id) IN (\(pairs))")
            }
            forgotten = oldest.count
        } else if forgotten > 0 {
            try await deleteRows("batches", where: ledger)
        }
        let day = Int64(max(0, min(cutoff, 4_294_967_295)) / 86_400) * 86_400
        let days = "day < \(day)"
        if try await count("dimension_values", where: days) > 0 {
            try await deleteRows("dimension_values", where: days)
        }
        return forgotten
    }

    /// `count()` of `table`'s rows matching `condition`.
    func count(_ table: String, where condition: String) async throws -> Int {
        Int(try await client.rows("SELECT count() FROM \(table) WHERE \(condition)").first?.first ?? "0") ?? 0
    }

    /// The first whole day of `[from, to)` and its end, Unix seconds, within what `DateTime` holds.
    static func dayRange(from: Double, to: Double) -> (Int64, Int64) {
        let dayFrom = Int64(max(0, min(from, 4_294_967_295)).rounded(.down)) / 86_400 * 86_400
        return (dayFrom, Int64(max(0, min(to, 4_294_967_295)).rounded(.up)))
    }

    /// A filter value as a literal of its column: booleans as 0 or 1, the rest as strings.
    static func literal(_ text: String, of dimension: QueryDimension) -> String {
        dimension.values == .boolean ? (text == "true" ? "1" : "0") : quote(text)
    }

    /// A column's value as read back (`1`/`0` for a boolean) as the dimension's text
    /// (`"true"`/`"false"`): the inverse of ``literal(_:of:)``.
    static func text(_ stored: String, of dimension: QueryDimension) -> String {
        dimension.values == .boolean ? (stored == "1" ? "true" : "false") : stored
    }

    /// The table of a rollup level.
    static func table(_ level: RollupLevel) -> String {
        switch level {
        case .hourly: "rollups_hourly"
        case .daily: "rollups_daily"
        case .screenHourly: "rollups_screen_hourly"
        case .screenDaily: "rollups_screen_daily"
        }
    }

    /// The table of a declared tag's rollups at `level` (hourly, or daily for the rest).
    static func tagTable(_ level: RollupLevel) -> String {
        level.bucketSeconds == 3600 ? "rollups_tag_hourly" : "rollups_tag_daily"
    }

    /// An `Array(UInt…)` in ClickHouse's text form, `[1,2,3]`.
    static func unsigned(_ text: String) throws -> [UInt64] {
        try elements(text).map { element in
            guard let value = UInt64(element) else { throw ClickHouseError.server(code: 0, message: "not an unsigned integer: \(element.prefix(40))") }
            return value
        }
    }

    /// An `Array(Float64)` in ClickHouse's text form (`inf`, `-inf` included).
    static func doubles(_ text: String) throws -> [Double] {
        try elements(text).map { element in
            guard let value = Double(element) else { throw ClickHouseError.server(code: 0, message: "not a number: \(element.prefix(40))") }
            return value
        }
    }

    private static func elements(_ text: String) -> [Substring] {
        let inner = text.drop { $0 == "[" }.prefix { $0 != "]" }
        return inner.isEmpty ? [] : inner.split(separator: ",")
    }
}
