import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Ingest: one transaction per group-commit flush appends raw events and upserts the
/// rollups of every level.
extension SQLiteStore {
    /// Plans the flush (``IngestPlanner``) from what this transaction reads (the batch ids
    /// already recorded, the apps' declared tags, the cardinality ledger of the days and
    /// windows the events touch), then writes the plan in the same transaction: each new
    /// batch id, its raw events, the values admitted, and the rollups of every level merged
    /// per key in memory; a known batch id writes nothing.
    public func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult] {
        let cache = rowCache
        let limits = cardinality
        return try await database.write { db in
            db.afterNextTransaction(onCommit: { _ in cache.commit() }, onRollback: { _ in cache.rollback() })
            let batchKnown = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM batches WHERE app_id = ? AND batch_id = ?)")
            var known: Set<[String]> = []
            var declared: [String: [String]] = [:]
            for batch in batches {
                if try Bool.fetchOne(batchKnown, arguments: [batch.app, batch.batchId]) ?? false { known.insert([batch.app, batch.batchId]) }
                if declared[batch.app] == nil { declared[batch.app] = try Self.declaredTagKeys(app: batch.app, db) }
            }
            let open = batches.filter { !known.contains([$0.app, $0.batchId]) }
            let ledger = try Self.loadLedger(for: open, declaredTags: declared, limits: limits, db)
            let plan = IngestPlanner.plan(batches, known: known, declaredTags: declared, ledger: ledger)
            try Self.write(plan, limits: limits, db, cache: cache)
            return plan.results
        }
    }

    /// A cardinality ledger loaded for `batches`: the known values of every key
    /// ``IngestPlanner/ledgerKeys(for:declaredTags:limits:)`` names, then, for each app and
    /// dimension with values new for their day, which of those are in the window
    /// (`dimension_window`, by primary key) and how many values the window holds.
    static func loadLedger(for batches: [IngestBatch], declaredTags: [String: [String]], limits: CardinalityLimits,
                           _ db: Database) throws -> CardinalityLedger {
        var ledger = CardinalityLedger(limits: limits)
        let values = try db.cachedStatement(sql: "SELECT value FROM dimension_values WHERE app_id = ? AND day = ? AND dimension = ?")
        for key in IngestPlanner.ledgerKeys(for: batches, declaredTags: declaredTags, limits: limits) {
            ledger.load(try String.fetchAll(values, arguments: [key.app, key.day, key.name]).map(StoredText.init), for: key)
        }
        let present = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM dimension_window WHERE app_id = ? AND dimension = ? AND value = ?)")
        let count = try db.cachedStatement(sql: "SELECT COUNT(*) FROM dimension_window WHERE app_id = ? AND dimension = ?")
        for (app, names) in IngestPlanner.windowCandidates(for: batches, declaredTags: declaredTags, ledger: ledger) {
            for (name, candidates) in names {
                var window = CardinalityLedger.Window(count: try Int.fetchOne(count, arguments: [app, name]) ?? 0, members: [])
                for candidate in candidates where try Bool.fetchOne(present, arguments: [app, name, candidate.text]) ?? false {
                    window.members.insert(candidate)
                }
                ledger.setWindow(window, app: app, name: name)
            }
        }
        return ledger
    }

    /// Writes `plan`: the ledger row and raw events of each stored batch, its visits per
    /// sample rate and day, the values admitted (and, for a dimension with a window limit
    /// under `limits`, their window rows' last use), and the rollups of every level and of
    /// the declared tags.
    static func write(_ plan: IngestPlan, limits: CardinalityLimits, _ db: Database, cache: RollupRowCache) throws {
        let insertBatch = try db.cachedStatement(sql: "INSERT INTO batches (app_id, batch_id, received_at, events) VALUES (?, ?, ?, ?)")
        let insertEvent = try db.cachedStatement(sql: Self.insertEventSQL)
        var groups: [String: [RollupKey: RollupValue]] = [:]
        var tagGroups: [String: [TagRollupKey: RollupValue]] = [:]
        var sampleRates: [SampleRateDay: Int] = [:]
        for stored in plan.stored {
            let batch = stored.batch
            try insertBatch.execute(arguments: [batch.app, batch.batchId, batch.receivedAt, batch.events.count])
            for planned in stored.events {
                let (event, startedAt) = batch.events[planned.index]
                sampleRates[SampleRateDay(app: batch.app, day: IngestPlanner.day(of: startedAt), partsPerMillion: batch.sampleRatePPM), default: 0] += 1
                var arguments: StatementArguments = [batch.app, batch.batchId, batch.receivedAt, startedAt]
                arguments += Self.storedValues(planned.dimensionValues)
                arguments += [batch.rawEvents[planned.index]]
                try insertEvent.execute(arguments: arguments)
                let key = RollupKey(bucketStart: RollupLevel.floor(Int64(startedAt.rounded(.down)), to: 3600), values: planned.dimensionValues)
                let visit = RollupValue(visit: event, installationId: batch.installationId)
                groups[batch.app, default: [:]][key, default: RollupValue()].merge(visit)
                for (tagKey, value) in zip(stored.tagKeys, planned.tagValues) {
                    tagGroups[batch.app, default: [:]][TagRollupKey(tag: TagFilter(key: tagKey, value: value), key: key), default: RollupValue()].merge(visit)
                }
            }
        }
        for stored in plan.stored {
            try insertHangs(stored.hangRows, app: stored.batch.app, db)
        }
        try addSampleRates(sampleRates, db)
        for (key, value) in plan.admitted {
            try db.cachedStatement(sql: "INSERT INTO dimension_values (app_id, day, dimension, value) VALUES (?, ?, ?, ?)")
                .execute(arguments: [key.app, key.day, key.name, value])
            // In the window now (it was, or it entered): its row records the day as its
            // last use, unless a later day is recorded.
            guard limits.windowLimit(ledgerName: key.name) != nil else { continue }
            try db.cachedStatement(sql: """
                INSERT INTO dimension_window (app_id, dimension, value, last_day) VALUES (?, ?, ?, ?)
                ON CONFLICT (app_id, dimension, value) DO UPDATE SET last_day = MAX(last_day, excluded.last_day)
                """).execute(arguments: [key.app, key.name, value, key.day])
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
