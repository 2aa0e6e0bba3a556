import FramescopeCore
import GRDB

extension SQLiteStore {
    public func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int {
        try await database.write { db in
            var stored = 0
            let statement = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO metrickit_payloads (app_id, digest, received_at, begin_at, end_at, app_version, os_version,
                    device_model, scroll_hitch_time_ratio, hang_diagnostics, hang_time, longest_hang, histogram_hangs)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for record in records {
                try statement.execute(arguments: [
                    app, record.digest, record.receivedAt, record.begin, record.end, record.appVersion, record.osVersion,
                    record.deviceModel, record.scrollHitchTimeRatio, record.hangDiagnostics, record.hangTime, record.longestHang,
                    record.histogramHangs,
                ])
                stored += db.changesCount
            }
            return stored
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
