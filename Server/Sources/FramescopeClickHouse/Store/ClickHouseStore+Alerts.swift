import Foundation
import FramescopeCore
import FramescopeStore

/// Regression alerts, webhooks and deliveries as control records, each filed under its app:
/// kind `alert` (id = SHA-256 of its screen, metric, baseline and candidate, so that an
/// alert raised twice, even by two collectors at once, is one record), kind `webhook`
/// (id = its numeric id in decimal) and kind `delivery` (id = `ALERT:WEBHOOK`, the numeric ids).
///
/// Numeric alert and webhook ids come from ``NumericIdClock``: Unix microseconds, unique
/// within a process, and across collectors unless two hand one out in the same
/// microsecond. A webhook's removal tombstones its record first, so a delivery record of
/// a removed webhook (written again by a delivery pass that raced with the removal) is
/// never listed nor sent: reads keep only deliveries of live webhooks.
extension ClickHouseStore {
    /// An alert as stored under kind `alert`.
    struct StoredAlert: Codable, Sendable {
        /// Its numeric id (``NumericIdClock``).
        var id: Int64
        /// The screen, baseline and candidate versions it is about.
        var screen, baseline, candidate: String
        /// The figure (its ``FigureChange/metric`` names it) as evaluated, in the compare
        /// API's JSON form; a value that was not finite is `nil`.
        var figures: FigureChange
        /// The range evaluated, and when it was raised, Unix seconds.
        var from, to, createdAt: Double
        /// When it was acknowledged, Unix seconds.
        var acknowledgedAt: Double?
    }

    /// A webhook as stored under kind `webhook`.
    struct StoredWebhook: Codable, Sendable {
        /// Its numeric id (``NumericIdClock``).
        var id: Int64
        /// Where alerts are POSTed.
        var url: String
        /// The HMAC key, as it is (the collector signs with it).
        var secret: String
        /// When it was added, Unix seconds.
        var createdAt: Double
    }

    /// One webhook's delivery of one alert, as stored under kind `delivery`.
    struct StoredDelivery: Codable, Sendable {
        /// The alert's and the webhook's numeric ids.
        var alert, webhook: Int64
        /// Pending, delivered or undelivered.
        var state: DeliveryState
        /// POSTs made so far.
        var attempts: Int
        /// Why the last attempt failed, at most ``AlertDelivery/maximumErrorLength`` characters.
        var lastError: String?
        /// When it last changed, Unix seconds.
        var updatedAt: Double
    }

    /// What raising alerts needs to know of one app: its alerts' record ids, and its live
    /// webhooks' ids in order.
    struct AlertContext {
        /// Record ids of the alerts stored or raised so far.
        var existing: Set<String>
        /// The webhooks a new alert gets a pending delivery for.
        var webhooks: [Int64]
    }

    /// The source of numeric alert and webhook ids.
    static let numericIds = NumericIdClock()

    /// Stores each alert of a known app unless its app, screen, metric, baseline and
    /// candidate have one (in the store, or earlier in `alerts`), with a pending delivery
    /// for each webhook the app has now; the deliveries are written before the alerts, so
    /// that an alert is never stored without them.
    public func raiseAlerts(_ alerts: [NewAlert], now: Double) async throws -> [RegressionAlert] {
        guard !alerts.isEmpty else { return [] }
        var contexts: [String: AlertContext] = [:]
        var unknownApps: Set<String> = []
        var alertRecords: [(app: String, id: String, value: StoredAlert?)] = []
        var deliveryRecords: [(app: String, id: String, value: StoredDelivery?)] = []
        var raised: [RegressionAlert] = []
        for alert in alerts where !unknownApps.contains(alert.app) {
            if contexts[alert.app] == nil {
                guard try await storedApp(alert.app) != nil else {
                    unknownApps.insert(alert.app)
                    continue
                }
                contexts[alert.app] = AlertContext(existing: Set(try await control(StoredAlert.self, "alert", app: alert.app).map(\.id)),
                                                   webhooks: try await liveWebhooks(app: alert.app).keys.sorted())
            }
            let recordId = Self.alertRecordId(alert)
            guard let context = contexts[alert.app], !context.existing.contains(recordId) else { continue }
            contexts[alert.app]?.existing.insert(recordId)
            var figures = alert.figures
            for path in [\FigureChange.baseline, \.candidate, \.change, \.relativeChange, \.changeLow, \.changeHigh] {
                figures[keyPath: path] = Self.finite(figures[keyPath: path])
            }
            let stored = StoredAlert(id: Self.numericIds.next(), screen: alert.screen, baseline: alert.baseline, candidate: alert.candidate,
                                     figures: figures, from: alert.from, to: alert.to, createdAt: now, acknowledgedAt: nil)
            let deliveries = context.webhooks.map { StoredDelivery(alert: stored.id, webhook: $0, state: .pending, attempts: 0, lastError: nil, updatedAt: now) }
            alertRecords.append((app: alert.app, id: recordId, value: stored))
            deliveryRecords += deliveries.map { (app: alert.app, id: Self.deliveryId($0.alert, $0.webhook), value: Optional($0)) }
            raised.append(Self.regressionAlert(stored, app: alert.app, deliveries: Self.group(deliveries, webhooks: Set(context.webhooks))[stored.id] ?? []))
        }
        try await putControl("delivery", deliveryRecords)
        try await putControl("alert", alertRecords)
        return raised
    }

    /// `app`'s alerts, newest (highest id) first, at most `limit`, each with its deliveries.
    public func alerts(app: String, limit: Int) async throws -> [RegressionAlert] {
        let stored = try await control(StoredAlert.self, "alert", app: app).map(\.value).sorted { $0.id > $1.id }.prefix(max(0, limit))
        guard !stored.isEmpty else { return [] }
        let deliveries = try await deliveriesByAlert(app: app)
        return stored.map { Self.regressionAlert($0, app: app, deliveries: deliveries[$0.id] ?? []) }
    }

    /// Sets the alert's acknowledgement to `now` (Unix seconds) where it has none, and
    /// returns it; `nil` when `app` has no alert `id`.
    public func acknowledgeAlert(app: String, id: Int64, now: Double) async throws -> RegressionAlert? {
        guard let row = try await control(StoredAlert.self, "alert", app: app).first(where: { $0.value.id == id }) else { return nil }
        var stored = row.value
        if stored.acknowledgedAt == nil {
            stored.acknowledgedAt = now
            try await putControl("alert", app: app, id: row.id, stored)
        }
        return Self.regressionAlert(stored, app: app, deliveries: try await deliveriesByAlert(app: app)[id] ?? [])
    }

    /// Stores a webhook for a known app (revoked or not) with a fresh secret; `nil` for an unknown app.
    /// - Throws: ``WebhookURLError`` for a URL ``WebhookURL`` refuses (checked first).
    public func addWebhook(app: String, url: String, now: Double) async throws -> WebhookCredentials? {
        let url = try WebhookURL.validated(url)
        let secret = WebhookCredentials.newSecret()
        guard try await storedApp(app) != nil else { return nil }
        let id = Self.numericIds.next()
        try await putControl("webhook", app: app, id: String(id), StoredWebhook(id: id, url: url, secret: secret, createdAt: now))
        return WebhookCredentials(id: id, url: url, createdAt: ISO8601.format(unixSeconds: now), secret: secret)
    }

    /// `app`'s webhooks by id, without secrets; `nil` for an unknown app.
    public func webhooks(app: String) async throws -> [WebhookRecord]? {
        guard try await storedApp(app) != nil else { return nil }
        return try await liveWebhooks(app: app).values.sorted { $0.id < $1.id }
            .map { WebhookRecord(id: $0.id, url: $0.url, createdAt: ISO8601.format(unixSeconds: $0.createdAt)) }
    }

    /// Tombstones the webhook, then its deliveries (pending ones are not sent); `false`
    /// when `app` has no webhook `id`.
    public func removeWebhook(app: String, id: Int64) async throws -> Bool {
        guard try await control(StoredWebhook.self, "webhook", app: app, id: String(id)) != nil else { return false }
        try await putControl("webhook", app: app, id: String(id), StoredWebhook?.none)
        let deliveries = try await control(StoredDelivery.self, "delivery", app: app).filter { $0.value.webhook == id }
        try await putControl("delivery", deliveries.map { (app: app, id: $0.id, value: StoredDelivery?.none) })
        return true
    }

    /// Pending deliveries to live webhooks, of every app, by alert id then webhook id, at
    /// most `limit`, with the webhooks' URLs and secrets.
    public func pendingDeliveries(limit: Int) async throws -> [PendingDelivery] {
        let all = try await control(StoredDelivery.self, "delivery")
        let pendingApps = Set(all.filter { $0.value.state == .pending }.map(\.app))
        guard limit > 0, !pendingApps.isEmpty else { return [] }
        var result: [PendingDelivery] = []
        for app in pendingApps {
            let webhooks = try await liveWebhooks(app: app)
            let alerts = Dictionary(try await control(StoredAlert.self, "alert", app: app).map { ($0.value.id, $0.value) }) { first, _ in first }
            let deliveries = Self.group(all.filter { $0.app == app }.map(\.value), webhooks: Set(webhooks.keys))
            for delivery in all where delivery.app == app && delivery.value.state == .pending {
                guard let webhook = webhooks[delivery.value.webhook], let alert = alerts[delivery.value.alert] else { continue }
                result.append(PendingDelivery(alert: Self.regressionAlert(alert, app: app, deliveries: deliveries[alert.id] ?? []),
                                              webhook: webhook.id, url: webhook.url, secret: webhook.secret, attempts: delivery.value.attempts))
            }
        }
        return Array(result.sorted { ($0.alert.id, $0.webhook) < ($1.alert.id, $1.webhook) }.prefix(limit))
    }

    /// Writes the delivery's new state where its record is live (a removed webhook's
    /// deliveries are tombstoned, and stay so); the error is cut to
    /// ``AlertDelivery/maximumErrorLength`` characters.
    public func recordDelivery(alert: Int64, webhook: Int64, state: DeliveryState, attempts: Int, lastError: String?, now: Double) async throws {
        let id = Self.deliveryId(alert, webhook)
        let records = try await control(StoredDelivery.self, "delivery", id: id).map { row in
            (app: row.app, id: id, value: Optional(StoredDelivery(alert: alert, webhook: webhook, state: state, attempts: attempts,
                                                                 lastError: lastError.map { String($0.prefix(AlertDelivery.maximumErrorLength)) }, updatedAt: now)))
        }
        try await putControl("delivery", records)
    }

    /// `app`'s live webhooks by numeric id.
    func liveWebhooks(app: String) async throws -> [Int64: StoredWebhook] {
        Dictionary(try await control(StoredWebhook.self, "webhook", app: app).map { ($0.value.id, $0.value) }) { first, _ in first }
    }

    /// `app`'s deliveries to its live webhooks, by alert id, each list by webhook id.
    func deliveriesByAlert(app: String) async throws -> [Int64: [AlertDelivery]] {
        let webhooks = Set(try await liveWebhooks(app: app).keys)
        return Self.group(try await control(StoredDelivery.self, "delivery", app: app).map(\.value), webhooks: webhooks)
    }

    /// `deliveries` to `webhooks`, by alert id, each list by webhook id.
    static func group(_ deliveries: [StoredDelivery], webhooks: Set<Int64>) -> [Int64: [AlertDelivery]] {
        var result: [Int64: [AlertDelivery]] = [:]
        for delivery in deliveries where webhooks.contains(delivery.webhook) {
            result[delivery.alert, default: []].append(AlertDelivery(webhook: delivery.webhook, state: delivery.state, attempts: delivery.attempts, lastError: delivery.lastError))
        }
        return result.mapValues { $0.sorted { $0.webhook < $1.webhook } }
    }

    /// The alert as the API shows it, with `deliveries`.
    static func regressionAlert(_ stored: StoredAlert, app: String, deliveries: [AlertDelivery]) -> RegressionAlert {
        RegressionAlert(id: stored.id, app: app, screen: stored.screen, metric: stored.figures.metric, baseline: stored.baseline,
                               candidate: stored.candidate, figures: stored.figures, from: ISO8601.format(unixSeconds: stored.from),
                               to: ISO8601.format(unixSeconds: stored.to), createdAt: ISO8601.format(unixSeconds: stored.createdAt),
                               acknowledgedAt: stored.acknowledgedAt.map { ISO8601.format(unixSeconds: $0) }, deliveries: deliveries)
    }

    /// The record id of an alert: SHA-256 of its screen, metric, baseline and candidate,
    /// each preceded by its length in bytes (so no two tuples give one text).
    static func alertRecordId(_ alert: NewAlert) -> String {
        AccessKeys.hash([alert.screen, alert.figures.metric, alert.baseline, alert.candidate].map { "\($0.utf8.count):\($0)" }.joined())
    }

    /// The record id of a delivery: `ALERT:WEBHOOK`.
    static func deliveryId(_ alert: Int64, _ webhook: Int64) -> String { "\(alert):\(webhook)" }

    /// `value` when it is finite, else `nil` (JSON has no NaN or infinity).
    static func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
}

/// Numeric ids for alerts and webhooks: Unix microseconds, one more than the last where
/// the clock has not moved on, so ids from one process are unique and increasing. Below
/// 2^53 until the year 2255, so JavaScript reads them exactly (webhook bodies carry them).
final class NumericIdClock: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Int64 = 0

    /// An id above every one handed out before in this process.
    func next() -> Int64 {
        let now = Int64(max(0, Date().timeIntervalSince1970 * 1e6))
        return lock.withLock {
            last = max(last + 1, now)
            return last
        }
    }
}
