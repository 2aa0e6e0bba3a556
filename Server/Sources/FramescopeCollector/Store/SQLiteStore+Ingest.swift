import Foundation
import FramescopeCore
import GRDB

/// Ingest: one transaction per group-commit flush appends raw events and upserts the
/// rollups of every level.
extension SQLiteStore {
    /// Merges the batches' events per hourly rollup key in memory, then in one write
    /// transaction records each new batch id, appends its raw events and upserts the
    /// rollups of every level; a known batch id writes nothing.
    public func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult] {
        let cache = rowCache
        return try await database.write { db in
            db.afterNextTransaction(onCommit: { _ in cache.commit() }, onRollback: { _ in cache.rollback() })
            var results: [IngestResult] = []
            var seen: Set<[String]> = []
            let batchKnown = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM batches WHERE app_id = ? AND batch_id = ?)")
            let insertBatch = try db.cachedStatement(sql: "INSERT INTO batches (app_id, batch_id, received_at, events) VALUES (?, ?, ?, ?)")
            let insertEvent = try db.cachedStatement(sql: Self.insertEventSQL)
            var groups: [String: [RollupKey: RollupValue]] = [:]
            var tagGroups: [String: [TagRollupKey: RollupValue]] = [:]
            var declared: [String: [String]] = [:]
            var gate = CardinalityGate(limits: self.cardinality)
            for batch in batches {
                let id = [batch.app, batch.batchId]
                let known = try seen.contains(id) || (Bool.fetchOne(batchKnown, arguments: [batch.app, batch.batchId]) ?? false)
                if known {
                    results.append(IngestResult(stored: 0, duplicate: true))
                    continue
                }
                seen.insert(id)
                if declared[batch.app] == nil { declared[batch.app] = try Self.declaredTagKeys(app: batch.app, db) }
                let tagKeys = declared[batch.app] ?? []
                try insertBatch.execute(arguments: [batch.app, batch.batchId, batch.receivedAt, batch.events.count])
                let foldedBefore = gate.folded[batch.app] ?? [:]
                for (index, (event, startedAt)) in batch.events.enumerated() {
                    // Values past the app's daily limits fold into "(other)" (CardinalityLimits).
                    let day = RollupLevel.floor(Int64(startedAt.rounded(.down)), to: 86_400)
                    var values: [String] = []
                    values.reserveCapacity(QueryDimension.all.count)
                    let facts = batch.facts(of: event)
                    for dimension in QueryDimension.all {
                        values.append(try gate.admit(dimension.read(facts), app: batch.app, day: day, dimension: dimension, db))
                    }
                    var arguments: StatementArguments = [batch.app, batch.batchId, batch.receivedAt, startedAt]
                    arguments += Self.storedValues(values)
                    arguments += [batch.rawEvents[index]]
                    try insertEvent.execute(arguments: arguments)
                    let key = RollupKey(bucketStart: RollupLevel.floor(Int64(startedAt.rounded(.down)), to: 3600), values: values)
                    let visit = RollupValue(visit: event, installationId: batch.installationId)
                    groups[batch.app, default: [:]][key, default: RollupValue()].merge(visit)
                    for tagKey in tagKeys {
                        let value = try gate.admit(DeclaredTags.value(of: tagKey, in: event.context.tags), app: batch.app, day: day, tagKey: tagKey, db)
                        tagGroups[batch.app, default: [:]][TagRollupKey(tag: TagFilter(key: tagKey, value: value), key: key), default: RollupValue()].merge(visit)
                    }
                }
                results.append(IngestResult(stored: batch.events.count, duplicate: false, folded: gate.ledger.folded(app: batch.app, since: foldedBefore)))
            }
            for (app, values) in groups {
                for level in RollupLevel.allCases {
                    for (key, value) in level.regroup(values) {
                        try Self.upsert(level, app: app, key: key, adding: value, db, cache: cache)
                    }
                }
            }
            for (app, values) in tagGroups {
                try Self.upsertTagged(values.map { ($0.key.tag, $0.key.key, $0.value) }, app: app, db)
            }
            return results
        }
    }

    /// Adds `value` to the row of `key` in `level`'s table (read, merge, write).
    /// - Parameter cache: Rows as last committed; a hit skips the read and decode, and the
    ///   merged row is staged for the cache when the transaction commits.
    static func upsert(_ level: RollupLevel, app: String, key: RollupKey, adding value: RollupValue, _ db: Database,
                       cache: RollupRowCache? = nil) throws {
        let table = tableName(level)
        var keyArguments: StatementArguments = [app, key.bucketStart]
        keyArguments += storedValues(key.values)
        var merged = value
        let cacheKey = RollupRowCache.Key(level: level, app: app, key: key)
        if var cached = cache?.lookup(cacheKey) {
            cached.merge(value)
            merged = cached
        } else {
            merged = try adding(value, toRowOf: keyArguments, table: table, columns: keyColumns, db)
        }
        cache?.stage(cacheKey, merged)
        try write(merged, table: table, columns: keyColumns, keyArguments: keyArguments, db)
    }

    /// Adds hourly tagged values to the declared tags' hourly and daily rollups.
    static func upsertTagged(_ hourly: [(tag: TagFilter, key: RollupKey, value: RollupValue)], app: String, _ db: Database) throws {
        for level in [RollupLevel.hourly, .daily] {
            var regrouped: [TagRollupKey: RollupValue] = [:]
            for row in hourly { regrouped[TagRollupKey(tag: row.tag, key: level.key(for: row.key)), default: RollupValue()].merge(row.value) }
            for (key, value) in regrouped { try upsertTag(level, app: app, tag: key.tag, key: key.key, adding: value, db) }
        }
    }

    /// Adds `value` to the row of the declared tag's `tag` value and `key` in `level`'s tag
    /// table (``RollupLevel/hourly`` or ``RollupLevel/daily``; read, merge, write).
    static func upsertTag(_ level: RollupLevel, app: String, tag: TagFilter, key: RollupKey, adding value: RollupValue, _ db: Database) throws {
        let table = tagTableName(level)
        let columns = ["tag_key", "tag_value"] + keyColumns
        var keyArguments: StatementArguments = [app, key.bucketStart, tag.key, tag.value]
        keyArguments += storedValues(key.values)
        let merged = try adding(value, toRowOf: keyArguments, table: table, columns: columns, db)
        try write(merged, table: table, columns: columns, keyArguments: keyArguments, db)
    }

    /// `value` merged into the stored row of `keyArguments` (app, bucket, then `columns`),
    /// or `value` alone when there is none.
    private static func adding(_ value: RollupValue, toRowOf keyArguments: StatementArguments, table: String, columns: [String],
                               _ db: Database) throws -> RollupValue {
        let select = try db.cachedStatement(sql: "SELECT visits, report, motion, stats, devices FROM \(table) WHERE app_id = ? AND bucket = ? AND "
                                            + columns.map { "\($0) = ?" }.joined(separator: " AND "))
        guard let row = try Row.fetchOne(select, arguments: keyArguments) else { return value }
        var stored = try decodeValue(row)
        stored.merge(value)
        return stored
    }

    /// Inserts or replaces the row of `keyArguments` (app, bucket, then `columns`) with `value`.
    private static func write(_ value: RollupValue, table: String, columns keyColumns: [String], keyArguments: StatementArguments,
                              _ db: Database) throws {
        let report = Data(value.report.binaryEncoded())
        let motion = value.motion.map { Data($0.binaryEncoded()) }
        let stats = Data(value.statistics.binaryEncoded())
        let devices = value.devices.storedBytes().map { Data($0) }
        let columns = keyColumns.joined(separator: ", ")
        let placeholders = keyColumns.map { _ in "?" }.joined(separator: ", ")
        try db.cachedStatement(sql: """
            INSERT INTO \(table) (app_id, bucket, \(columns), visits, report, motion, stats, devices)
            VALUES (?, ?, \(placeholders), ?, ?, ?, ?, ?)
            ON CONFLICT (app_id, bucket, \(columns))
            DO UPDATE SET visits = excluded.visits, report = excluded.report, motion = excluded.motion, stats = excluded.stats, devices = excluded.devices
            """).execute(arguments: keyArguments + [value.visits, report, motion, stats, devices])
    }

    /// The table of a declared tag's rollups at `level` (hourly, or daily for the rest).
    static func tagTableName(_ level: RollupLevel) -> String {
        level.bucketSeconds == 3600 ? "rollups_tag_hourly" : "rollups_tag_daily"
    }

    /// The key columns of the events and rollup tables after the app (and bucket), one per
    /// ``QueryDimension``, in registry order.
    static let keyColumns = QueryDimension.all.map(\.storeColumn)

    /// `INSERT INTO events`, its columns from the registry.
    static let insertEventSQL = "INSERT INTO events (app_id, batch_id, received_at, started_at, \(keyColumns.joined(separator: ", ")), payload) VALUES (?, ?, ?, ?, "
        + keyColumns.map { _ in "?" }.joined(separator: ", ") + ", ?)"

    /// Dimension values (registry order) as the store keeps them: booleans as integers.
    static func storedValues(_ values: [String]) -> StatementArguments {
        StatementArguments(zip(QueryDimension.all, values).map { storedValue($1, of: $0) })
    }

    /// A rollup value from a row's `visits` and binary `report`, `motion` and `stats` columns.
    static func decodeValue(_ row: Row) throws -> RollupValue {
        let report = try FrameReport(binary: row["report"] as Data)
        let motion = try (row["motion"] as Data?).map { try FrameReport(binary: $0) }
        let statistics = try VisitStatistics(binary: [UInt8](row["stats"] as Data))
        let devices = try (row["devices"] as Data?).map { try DeviceSketch(storedBytes: [UInt8]($0)) } ?? DeviceSketch()
        return RollupValue(visits: row["visits"], report: report, motion: motion, statistics: statistics, devices: devices)
    }

    /// The table that holds `level`.
    static func tableName(_ level: RollupLevel) -> String {
        switch level {
        case .hourly: "rollups_hourly"
        case .daily: "rollups_daily"
        case .screenHourly: "rollups_screen_hourly"
        case .screenDaily: "rollups_screen_daily"
        }
    }

    /// Writes precomputed rollups straight into every level, as if the visits they sum
    /// had been ingested (without raw events): for benchmarks over very large data.
    /// - Parameter tagged: The same visits by a declared tag's value (key, value, hourly
    ///   key), for that tag's rollups.
    public func addRollups(app: String, hourly values: [RollupKey: RollupValue],
                           tagged: [(tag: TagFilter, key: RollupKey, value: RollupValue)] = []) async throws {
        let cache = rowCache
        try await database.write { db in
            // Rows written here bypass the cache; drop what it holds once they commit.
            db.afterNextTransaction(onCommit: { _ in cache.rollback() }, onRollback: { _ in cache.rollback() })
            for level in RollupLevel.allCases {
                for (key, value) in level.regroup(values) { try Self.upsert(level, app: app, key: key, adding: value, db) }
            }
            try Self.upsertTagged(tagged, app: app, db)
        }
    }
}
