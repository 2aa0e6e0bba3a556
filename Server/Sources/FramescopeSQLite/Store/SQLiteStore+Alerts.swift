import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Regression alerts, webhooks and their deliveries (schema v10).
extension SQLiteStore {
    /// Inserts each alert unless its (app, screen, metric, baseline, candidate) is stored
    /// already, and a pending delivery for each of its app's webhooks, in one transaction.
    public func raiseAlerts(_ alerts: [NewAlert], now: Double) async throws -> [RegressionAlert] {
        guard !alerts.isEmpty else { return [] }
        return try await database.write { db in
            var raised: [Int64] = []
            for alert in alerts {
                let figures = alert.figures
                try db.execute(sql: """
                    INSERT OR IGNORE INTO alerts (app_id, screen, metric, baseline_version, candidate_version, unit, baseline_value,
                        candidate_value, change, relative_change, change_low, change_high, baseline_visits, candidate_visits, verdict,
                        range_from, range_to, created_at)
                    SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?)
                    """, arguments: [alert.app, alert.screen, figures.metric, alert.baseline, alert.candidate, figures.unit, figures.baseline,
                                     figures.candidate, figures.change, figures.relativeChange, figures.changeLow, figures.changeHigh,
                                     figures.baselineVisits, figures.candidateVisits, figures.verdict.rawValue, alert.from, alert.to, now, alert.app])
                guard db.changesCount > 0 else { continue }
                let id = db.lastInsertedRowID
                try db.execute(sql: """
                    INSERT INTO alert_deliveries (alert_id, webhook_id, state, attempts, last_error, updated_at)
                    SELECT ?, id, 'pending', 0, NULL, ? FROM webhooks WHERE app_id = ?
                    """, arguments: [id, now, alert.app])
                raised.append(id)
            }
            return try raised.compactMap { try Self.alert(id: $0, db) }
        }
    }

    /// `app`'s alerts, newest first, at most `limit`, each with its deliveries.
    public func alerts(app: String, limit: Int) async throws -> [RegressionAlert] {
        try await database.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM alerts WHERE app_id = ? ORDER BY id DESC LIMIT ?", arguments: [app, max(0, limit)])
            return try rows.map { try Self.alert($0, db) }
        }
    }

    /// Sets `acknowledged_at` to `now` where it is unset, and returns the alert.
    public func acknowledgeAlert(app: String, id: Int64, now: Double) async throws -> RegressionAlert? {
        try await database.write { db in
            try db.execute(sql: "UPDATE alerts SET acknowledged_at = ? WHERE id = ? AND app_id = ? AND acknowledged_at IS NULL",
                           arguments: [now, id, app])
            guard let alert = try Self.alert(id: id, db), alert.app == app else { return nil }
            return alert
        }
    }

    /// Stores the webhook with a fresh secret (`fsw_` and 192 random bits in hex).
    public func addWebhook(app: String, url: String, now: Double) async throws -> WebhookCredentials? {
        let url = try WebhookURL.validated(url)
        let secret = WebhookCredentials.newSecret()
        return try await database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [app]) ?? false else { return nil }
            try db.execute(sql: "INSERT INTO webhooks (app_id, url, secret, created_at) VALUES (?, ?, ?, ?)", arguments: [app, url, secret, now])
            return WebhookCredentials(id: db.lastInsertedRowID, url: url, createdAt: ISO8601.format(unixSeconds: now), secret: secret)
        }
    }

    /// `app`'s webhooks by id, without secrets.
    public func webhooks(app: String) async throws -> [WebhookRecord]? {
        try await database.read { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM apps WHERE id = ?)", arguments: [app]) ?? false else { return nil }
            return try Row.fetchAll(db, sql: "SELECT id, url, created_at FROM webhooks WHERE app_id = ? ORDER BY id", arguments: [app]).map {
                WebhookRecord(id: $0["id"], url: $0["url"], createdAt: ISO8601.format(unixSeconds: $0["created_at"]))
            }
        }
    }

    /// Deletes the webhook and its delivery rows (pending ones are not sent).
    public func removeWebhook(app: String, id: Int64) async throws -> Bool {
        try await database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND app_id = ?)", arguments: [id, app]) ?? false else {
                return false
            }
            try db.execute(sql: "DELETE FROM alert_deliveries WHERE webhook_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM webhooks WHERE id = ?", arguments: [id])
            return true
        }
    }

    /// Pending deliveries, oldest alert first, with their webhooks' URLs and secrets.
    public func pendingDeliveries(limit: Int) async throws -> [PendingDelivery] {
        try await database.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT d.alert_id, d.webhook_id, d.attempts, w.url, w.secret FROM alert_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                WHERE d.state = 'pending' ORDER BY d.alert_id, d.webhook_id LIMIT ?
                """, arguments: [max(0, limit)])
            return try rows.compactMap { row in
                guard let alert = try Self.alert(id: row["alert_id"], db) else { return nil }
                return PendingDelivery(alert: alert, webhook: row["webhook_id"], url: row["url"], secret: row["secret"], attempts: row["attempts"])
            }
        }
    }

    /// Updates the delivery row (a removed webhook's row is gone, and stays gone).
    public func recordDelivery(alert: Int64, webhook: Int64, state: DeliveryState, attempts: Int, lastError: String?, now: Double) async throws {
        try await database.write { db in
            try db.execute(sql: """
                UPDATE alert_deliveries SET state = ?, attempts = ?, last_error = ?, updated_at = ? WHERE alert_id = ? AND webhook_id = ?
                """, arguments: [state.rawValue, attempts, lastError.map { String($0.prefix(AlertDelivery.maximumErrorLength)) }, now, alert, webhook])
        }
    }

    /// The alert `id` with its deliveries, or `nil`.
    static func alert(id: Int64, _ db: Database) throws -> RegressionAlert? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alerts WHERE id = ?", arguments: [id]) else { return nil }
        return try alert(row, db)
    }

    /// An `alerts` row with its deliveries, by webhook id.
    static func alert(_ row: Row, _ db: Database) throws -> RegressionAlert {
        let id: Int64 = row["id"]
        let deliveries = try Row.fetchAll(db, sql: "SELECT webhook_id, state, attempts, last_error FROM alert_deliveries WHERE alert_id = ? ORDER BY webhook_id",
                                          arguments: [id]).map {
            AlertDelivery(webhook: $0["webhook_id"], state: DeliveryState(rawValue: $0["state"]) ?? .pending, attempts: $0["attempts"], lastError: $0["last_error"])
        }
        let figures = FigureChange(metric: row["metric"], unit: row["unit"], baseline: row["baseline_value"], candidate: row["candidate_value"],
                                   change: row["change"], relativeChange: row["relative_change"], changeLow: row["change_low"],
                                   changeHigh: row["change_high"], baselineVisits: row["baseline_visits"], candidateVisits: row["candidate_visits"],
                                   verdict: Verdict(rawValue: row["verdict"]) ?? .regressed)
        let acknowledged: Double? = row["acknowledged_at"]
        return RegressionAlert(id: id, app: row["app_id"], screen: row["screen"], metric: row["metric"], baseline: row["baseline_version"],
                               candidate: row["candidate_version"], figures: figures, from: ISO8601.format(unixSeconds: row["range_from"]),
                               to: ISO8601.format(unixSeconds: row["range_to"]), createdAt: ISO8601.format(unixSeconds: row["created_at"]),
                               acknowledgedAt: acknowledged.map { ISO8601.format(unixSeconds: $0) }, deliveries: deliveries)
    }
}
