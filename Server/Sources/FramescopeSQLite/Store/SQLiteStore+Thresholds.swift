import FramescopeStore
import GRDB

/// Per-app thresholds (schema v9): one `app_bands` row per figure the app set bands for,
/// and one `app_verdict_rules` row with its minimum change and sample, `NULL` where unset;
/// (schema v13) one `app_alert_rules` row when it set its minimum installations. What has
/// no row or is `NULL` takes its default, so an app that sets nothing has no rows, and an
/// app whose settings were stored before v13 reads with the default minimum installations.
extension SQLiteStore {
    /// The thresholds `app` set, or `nil` for an unknown app. A band row of a figure this
    /// version does not know (written by a newer one) is skipped.
    public func thresholds(app: String) async throws -> AppThresholds? {
        try await database.read { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [app]) ?? false else { return nil }
            var settings = AppThresholds()
            for row in try Row.fetchAll(db, sql: "SELECT figure, good_below, critical_above FROM app_bands WHERE app_id = ?", arguments: [app]) {
                guard let figure = ThresholdFigure(rawValue: row["figure"]) else { continue }
                settings.bands[figure] = BandLimits(goodBelow: row["good_below"], criticalAbove: row["critical_above"])
            }
            if let row = try Row.fetchOne(db, sql: "SELECT minimum_change, minimum_visits FROM app_verdict_rules WHERE app_id = ?", arguments: [app]) {
                settings.minimumChange = row["minimum_change"]
                settings.minimumVisits = row["minimum_visits"]
            }
            settings.minimumInstallations = try Int.fetchOne(db, sql: "SELECT minimum_installations FROM app_alert_rules WHERE app_id = ?", arguments: [app])
            return settings
        }
    }

    /// Replaces `app`'s thresholds with `thresholds` in one transaction; `false` for an
    /// unknown app.
    /// - Throws: ``ThresholdError`` when a value is not physical (nothing is written).
    public func setThresholds(_ thresholds: AppThresholds, app: String) async throws -> Bool {
        let settings = try thresholds.validated()
        return try await database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [app]) ?? false else { return false }
            try db.execute(sql: "DELETE FROM app_bands WHERE app_id = ?", arguments: [app])
            try db.execute(sql: "DELETE FROM app_verdict_rules WHERE app_id = ?", arguments: [app])
            try db.execute(sql: "DELETE FROM app_alert_rules WHERE app_id = ?", arguments: [app])
            for figure in ThresholdFigure.allCases {
                guard let limits = settings.bands[figure] else { continue }
                try db.execute(sql: "INSERT INTO app_bands (app_id, figure, good_below, critical_above) VALUES (?, ?, ?, ?)",
                               arguments: [app, figure.rawValue, limits.goodBelow, limits.criticalAbove])
            }
            if settings.minimumChange != nil || settings.minimumVisits != nil {
                try db.execute(sql: "INSERT INTO app_verdict_rules (app_id, minimum_change, minimum_visits) VALUES (?, ?, ?)",
                               arguments: [app, settings.minimumChange, settings.minimumVisits])
            }
            if let minimumInstallations = settings.minimumInstallations {
                try db.execute(sql: "INSERT INTO app_alert_rules (app_id, minimum_installations) VALUES (?, ?)", arguments: [app, minimumInstallations])
            }
            return true
        }
    }
}
