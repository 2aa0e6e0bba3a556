import Foundation
import FramescopeCollector
import FramescopeCore

/// The alerts page: the app's regression alerts, newest first, each with a link to the
/// compare page filtered to its screen and, until acknowledged, a form to acknowledge it
/// with the app's admin key.
extension DashboardPages {
    struct AlertRow {
        var id: String
        var action: String
        var screen: String
        var metric: String
        var label: String
        var baseline: String
        var candidate: String
        var values: String
        var change: String
        var interval: String
        var visits: String
        var createdAt: String
        var acknowledgedAt: String?
        var deliveries: String
        var compareLink: String
    }

    struct AlertsPage {
        var page: Chrome
        var hasAlerts: Bool
        var rows: [AlertRow]
        var summary: String
        /// The alert rule in effect, in words (who may take part, how many alerts a pass).
        var rule: String
        var notice: String?
        var noticeIsProblem: Bool
    }

    /// The most alerts the page lists.
    static let alertsShown = 200

    /// The app's alerts, newest first (at most ``alertsShown``). Alerts are not filtered:
    /// each holds the figures of the range it was evaluated over.
    public func alerts(app: String, filters: DashboardFilters, now: Double, csrfToken: String = "", outcome: AlertOutcome? = nil) async throws -> String {
        let base = "/dashboard/apps/\(percentEncode(app))"
        var chrome = try await chrome(title: "Alerts", app: app, filters: filters, now: now, action: base + "/alerts", csrfToken: csrfToken)
        chrome.isAlerts = true
        let alerts = try await store.alerts(app: app, limit: Self.alertsShown)
        let rows = alerts.map { alert in
            let figures = alert.figures
            let relative = figures.relativeChange.map { String(format: " (%+.0f %%)", $0 * 100) } ?? ""
            let interval = (figures.changeLow.flatMap { low in figures.changeHigh.map { (low, $0) } })
                .map { "interval \(formatFigure($0.0)) to \(formatFigure($0.1)) \(figures.unit)" } ?? ""
            return AlertRow(id: String(alert.id), action: base + "/alerts/\(alert.id)/acknowledge", screen: alert.screen, metric: alert.metric,
                            label: QueryFigure(name: alert.metric)?.label ?? alert.metric, baseline: alert.baseline, candidate: alert.candidate,
                            values: "\(formatFigure(figures.baseline)) → \(formatFigure(figures.candidate, unit: figures.unit))",
                            change: figures.change.map { ($0 >= 0 ? "+" : "") + formatFigure($0, unit: figures.unit) + relative } ?? "–",
                            interval: interval, visits: "\(groupThousands(figures.baselineVisits)) and \(groupThousands(figures.candidateVisits)) visits",
                            createdAt: Self.minutes(alert.createdAt), acknowledgedAt: alert.acknowledgedAt.map(Self.minutes),
                            deliveries: Self.deliveryWords(alert), compareLink: AlertLinks.dashboardCompare(alert))
        }
        let open = alerts.filter { $0.acknowledgedAt == nil }.count
        let rules = EffectiveAlertRules(settings: try await queries.thresholds(app: app) ?? AppThresholds())
        let rule = "A version takes part only when at least \(groupThousands(rules.minimumInstallations)) distinct installations "
            + "sent visits of it (\(rules.minimumInstallationsSource == .app ? "set for this app" : "the default")), so a version "
            + "a few devices invent raises nothing; one pass raises at most \(rules.maximumAlertsPerPass) alerts for the app"
        let page = AlertsPage(page: chrome, hasAlerts: !rows.isEmpty, rows: rows,
                              summary: "\(open) open, \(alerts.count - open) acknowledged", rule: rule,
                              notice: outcome?.message, noticeIsProblem: outcome?.isProblem ?? false)
        return library.render(page, withTemplate: "alerts") ?? ""
    }

    /// An ISO 8601 time to the minute, as the page shows times ("2026-11-25 11:39 UTC").
    static func minutes(_ time: String) -> String {
        time.prefix(16).replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    /// The webhook deliveries in words ("2 delivered, 1 undelivered"; "no webhooks").
    static func deliveryWords(_ alert: RegressionAlert) -> String {
        guard !alert.deliveries.isEmpty else { return "no webhooks" }
        return DeliveryState.allCases.compactMap { state in
            let count = alert.deliveries.filter { $0.state == state }.count
            return count > 0 ? "\(count) \(state.rawValue)" : nil
        }.joined(separator: ", ")
    }
}
