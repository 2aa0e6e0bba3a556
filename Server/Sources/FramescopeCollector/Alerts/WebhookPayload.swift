import Crypto
import Foundation
import FramescopeCore

/// The JSON body POSTed to a webhook for one alert:
///
/// ```json
/// {"event": "regression", "alert": 7, "app": "demo", "screen": "Feed", "metric": "hitchRatio",
///  "label": "Hitch ratio", "baseline": "3.0.0", "candidate": "3.1.0",
///  "figures": {"metric": "hitchRatio", "unit": "ms/s", "baseline": 9.1, "candidate": 23.4, "change": 14.3, …},
///  "verdict": "regressed", "from": "…", "to": "…", "createdAt": "…",
///  "links": {"dashboard": "https://…/dashboard/apps/demo/compare?…&screen=Feed", "api": "https://…/v1/apps/demo/compare?…"}}
/// ```
///
/// It is signed with ``signature(of:secret:)``, sent as `X-Framescope-Signature`.
public struct WebhookPayload: Sendable, Hashable, Codable {
    /// Links to the comparison behind an alert.
    public struct Links: Sendable, Hashable, Codable {
        /// The dashboard's compare page for the version pair, filtered to the screen.
        public var dashboard: String
        /// The compare route over the range evaluated (its figures are the alert's).
        public var api: String
    }

    /// Always `regression`.
    public var event: String
    /// The alert's id (a receiver can drop a repeated delivery by it).
    public var alert: Int64
    /// The app.
    public var app: String
    /// The screen that regressed.
    public var screen: String
    /// The figure that regressed.
    public var metric: String
    /// The figure's label ("Hitch ratio in motion").
    public var label: String
    /// The baseline app version.
    public var baseline: String
    /// The candidate app version.
    public var candidate: String
    /// Both sides' values, the change and its interval, visits, as evaluated.
    public var figures: FigureChange
    /// `regressed`.
    public var verdict: Verdict
    /// The range evaluated: start, ISO 8601.
    public var from: String
    /// The range evaluated: end (exclusive), ISO 8601.
    public var to: String
    /// When the alert was raised, ISO 8601.
    public var createdAt: String
    /// Where to look.
    public var links: Links

    /// The body for `alert`, with links under `publicURL` (`https://collector.example.com`;
    /// without a trailing slash).
    public init(_ alert: RegressionAlert, publicURL: String) {
        event = "regression"
        self.alert = alert.id
        app = alert.app
        screen = alert.screen
        metric = alert.metric
        label = QueryFigure(name: alert.metric)?.label ?? alert.metric
        baseline = alert.baseline
        candidate = alert.candidate
        figures = alert.figures
        verdict = alert.verdict
        from = alert.from
        to = alert.to
        createdAt = alert.createdAt
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        links = Links(dashboard: base + AlertLinks.dashboardCompare(alert), api: base + AlertLinks.apiCompare(alert))
    }

    /// The body's bytes: JSON with sorted keys, the bytes that are signed and sent.
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }

    /// `sha256=` and the lower-case hex HMAC-SHA256 of `body` keyed with the UTF-8 bytes of
    /// `secret`: the value of `X-Framescope-Signature`.
    public static func signature(of body: [UInt8], secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + AccessKeys.hex(Array(code))
    }
}

/// The paths of the pages and routes behind an alert.
public enum AlertLinks {
    /// The dashboard's compare page for the alert's versions over the range evaluated
    /// (`days`, 30 by default), filtered to its screen.
    public static func dashboardCompare(_ alert: RegressionAlert) -> String {
        let days = days(alert)
        return "/dashboard/apps/\(encode(alert.app))/compare?days=\(days)&baseline=\(encode(alert.baseline))&candidate=\(encode(alert.candidate))&screen=\(encode(alert.screen))"
    }

    /// The compare route over exactly the range evaluated: its answer for the screen holds the alert's figures.
    public static func apiCompare(_ alert: RegressionAlert) -> String {
        "/v1/apps/\(encode(alert.app))/compare?from=\(encode(alert.from))&to=\(encode(alert.to))&baseline=\(encode(alert.baseline))&candidate=\(encode(alert.candidate))"
    }

    /// The whole days of the range evaluated, at least 1.
    static func days(_ alert: RegressionAlert) -> Int {
        guard let from = ISO8601.parse(alert.from), let to = ISO8601.parse(alert.to), to > from else { return 30 }
        return max(1, Int(((to - from) / 86_400).rounded()))
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    public static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
