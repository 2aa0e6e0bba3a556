import FramescopeCore
import FramescopeStore
import GRDB

/// MetricKit payload rows (`metrickit_payloads`, schema v8): stored through the same
/// cardinality gate as events, summarised per app version, deleted past the raw-event
/// retention.
extension SQLiteStore {
    /// Stores the records whose digest `app` has not stored yet, in one transaction; their
    /// app version, OS version and device model pass the cardinality gate of the day their
    /// payload ends (``CardinalityGate``, the events' daily and window limits: a value past
    /// them is stored as `(other)`). Returns how many were stored.
    public func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int {
        let limits = cardinality
        return try await database.write { db in
            var stored = 0
            var gate = CardinalityGate(limits: limits)
            let exists = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM metrickit_payloads WHERE app_id = ? AND digest = ?)")
            let statement = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO metrickit_payloads (app_id, digest, received_at, begin_at, end_at, app_version, os_version,
                    device_model, scroll_hitch_time_ratio, hang_diagnostics, hang_time, longest_hang, histogram_hangs)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for var record in records {
                // A payload stored before passes nothing through the gate a second time.
                if try Bool.fetchOne(exists, arguments: [app, record.digest]) ?? false { continue }
                let day = RollupLevel.floor(Int64(record.end.rounded(.down)), to: 86_400)
                for (dimension, path) in MetricKitRecord.gatedDimensions {
                    // An empty value names nothing (the payload had none): no value to count.
                    guard !record[keyPath: path].isEmpty else { continue }
                    record[keyPath: path] = try gate.admit(record[keyPath: path], app: app, day: day, dimension: dimension, db)
                }
                try statement.execute(arguments: [
                    app, record.digest, record.receivedAt, record.begin, record.end, record.appVersion, record.osVersion,
                    record.deviceModel, record.scrollHitchTimeRatio, record.hangDiagnostics, record.hangTime, record.longestHang,
                    record.histogramHangs,
                ])
                let isNew = db.changesCount > 0
                stored += db.changesCount
                // Its hang diagnostics' stacks, under the values the gate admitted.
                if isNew { try Self.insertHangs(record.hangRows, app: app, db) }
            }
            return stored
        }
    }

    /// Deletes up to `limit` MetricKit payload rows whose end is before `cutoff` (Unix
    /// seconds), oldest first, in one transaction (by `metrickit_by_end`, schema v14);
    /// returns how many.
    public func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: """
                DELETE FROM metrickit_payloads WHERE rowid IN (
                    SELECT rowid FROM metrickit_payloads WHERE end_at < ? ORDER BY end_at LIMIT ?)
                """, arguments: [cutoff, limit])
            return db.changesCount
        }
    }

    public func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary] {
        var conditions = ["app_id = ?", "end_at >= ?", "end_at < ?"]
        var arguments: StatementArguments = [app, query.from, query.to]
        for (dimension, column) in [(QueryDimension.appVersion, "app_version"), (.osVersion, "os_version"), (.deviceModel, "device_model")] {
            if let value = query[dimension] {
                conditions.append("\(column) = ?")
                arguments += [value]
            }
        }
        // TOTAL, not SUM: a sum of counts from devices cannot overflow into an error.
        let sql = """
            SELECT app_version, COUNT(*), COUNT(scroll_hitch_time_ratio), AVG(scroll_hitch_time_ratio), TOTAL(hang_diagnostics),
                   TOTAL(hang_time), MAX(longest_hang), TOTAL(histogram_hangs)
            FROM metrickit_payloads WHERE \(conditions.joined(separator: " AND "))
            GROUP BY app_version ORDER BY app_version LIMIT 1000
            """
        let bound = arguments
        return try await database.read { db in
            try Row.fetchAll(db, sql: sql, arguments: bound).map { row in
                MetricKitVersionSummary(
                    appVersion: row[0], payloads: row[1], scrollHitchTimeRatioPayloads: row[2], scrollHitchTimeRatio: row[3],
                    hangDiagnostics: MetricKitVersionSummary.clampedCount(row[4]), hangTime: row[5], longestHang: row[6] ?? 0,
                    histogramHangs: MetricKitVersionSummary.clampedCount(row[7]))
            }
        }
    }
}
