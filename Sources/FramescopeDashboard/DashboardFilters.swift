import Foundation
import FramescopeCollector
import FramescopeCore

/// The filters every dashboard page takes from its URL, so that a view is a link.
///
/// `days` (1, 7, 14, 30 or 90; default 30) ends at the current hour's end; `interval`
/// is `day` or `hour` (hours only up to 14 days); the rollup filters `appVersion`,
/// `osVersion`, `deviceModel`, `network` and `lowPower` as in the query API.
public struct DashboardFilters: Sendable, Hashable {
    /// The ranges the range menu offers, in days.
    public static let dayChoices = [1, 7, 14, 30, 90]

    /// Days up to now.
    public var days = 30
    /// Trend bucket length.
    public var interval = BucketInterval.day
    /// Only this app version.
    public var appVersion: String?
    /// Only this OS version.
    public var osVersion: String?
    /// Only this device model.
    public var deviceModel: String?
    /// Only this network type.
    public var network: String?
    /// Only visits with or without low-power mode.
    public var lowPower: Bool?

    /// Filters from URL query parameters; unknown or malformed values fall back to the defaults.
    public init(parameters: [String: String]) {
        if let text = parameters["days"], let days = Int(text), Self.dayChoices.contains(days) { self.days = days }
        if parameters["interval"] == "hour", days <= 14 { interval = .hour }
        func nonEmpty(_ name: String) -> String? { parameters[name].flatMap { $0.isEmpty ? nil : String($0.prefix(128)) } }
        appVersion = nonEmpty("appVersion")
        osVersion = nonEmpty("osVersion")
        deviceModel = nonEmpty("deviceModel")
        network = nonEmpty("network")
        lowPower = parameters["lowPower"].flatMap(Bool.init)
    }

    /// The time range, ending at the end of the current hour.
    public func range(now: Double) -> (from: Double, to: Double) {
        let to = (now / 3600).rounded(.up) * 3600
        return (to - Double(days) * 86_400, to)
    }

    /// The collector query for these filters.
    public func query(now: Double, screen: String? = nil) -> ScreenQuery {
        let (from, to) = range(now: now)
        return ScreenQuery(from: from, to: to, appVersion: appVersion, osVersion: osVersion, deviceModel: deviceModel,
                           network: network, lowPower: lowPower, screen: screen)
    }

    /// The URL query that reproduces these filters plus `extra` (`?days=30&appVersion=3.1.0`).
    public func queryString(_ extra: [(String, String)] = []) -> String {
        var pairs: [(String, String)] = [("days", String(days))]
        if interval == .hour { pairs.append(("interval", "hour")) }
        for (name, value) in [("appVersion", appVersion), ("osVersion", osVersion), ("deviceModel", deviceModel), ("network", network)] {
            if let value { pairs.append((name, value)) }
        }
        if let lowPower { pairs.append(("lowPower", String(lowPower))) }
        pairs += extra
        return "?" + pairs.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }

    /// Whether any rollup dimension is filtered.
    public var isFiltered: Bool { appVersion != nil || osVersion != nil || deviceModel != nil || network != nil || lowPower != nil }
}

/// Percent-encodes everything but the unreserved URL characters (RFC 3986).
func percentEncode(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreservedURLCharacters) ?? text
}

private let unreservedURLCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

/// Apple's hitch-ratio bands: under 5 ms/s good, 5–10 warning, over 10 critical.
public enum HitchBand: String, Sendable {
    /// Under 5 ms/s.
    case good
    /// 5 to 10 ms/s.
    case warning
    /// Over 10 ms/s.
    case critical

    /// The band of a hitch ratio in ms/s, or `nil` without data.
    public init?(hitchRatio: Double?) {
        guard let value = hitchRatio else { return nil }
        self = value < 5 ? .good : value <= 10 ? .warning : .critical
    }
}
