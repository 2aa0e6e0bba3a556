/// Every figure a report gives, under the one name it has in Swift, JSON, SQL and on
/// the dashboard.
///
/// The raw value is the JSON key path of DESIGN §3 (`"hitchRatio"`,
/// `"frameDuration.p95"`). Values are in the report's JSON units: seconds for times,
/// FPS for rates, ms/s for ``hitchRatio``, s/h for ``hangRate`` and a fraction
/// from 0 to 1 for ``stability``.
public enum Metric: String, CaseIterable, Sendable, Codable, Hashable {
    /// Measured intervals (count).
    case frames
    /// Σ frame duration (s).
    case duration
    /// frames / duration (FPS).
    case averageFPS
    /// FPS of the first interval after a start (FPS).
    case firstFPS
    /// 1 / longest frame (FPS).
    case minFPS
    /// 1 / shortest frame (FPS).
    case maxFPS
    /// Σ dropped frames (count).
    case droppedFrames
    /// Intervals that dropped frames (count).
    case dropEvents
    /// Most frames dropped at once (count).
    case maxDroppedFrames
    /// Σ lateness (s).
    case hitchTime
    /// Hitch time per second (ms/s).
    case hitchRatio
    /// Frames at or over the hang threshold (count).
    case hangs
    /// Σ duration of hangs (s).
    case hangTime
    /// Hang time per hour (s/h).
    case hangRate
    /// Late frames under the frozen threshold (count).
    case slowFrames
    /// Frames at or over the frozen threshold (count).
    case frozenFrames
    /// Share of FPS windows within the band around average FPS (fraction 0–1).
    case stability
    /// Median frame duration (s).
    case frameDurationP50 = "frameDuration.p50"
    /// 90th-percentile frame duration (s).
    case frameDurationP90 = "frameDuration.p90"
    /// 95th-percentile frame duration (s).
    case frameDurationP95 = "frameDuration.p95"
    /// 99th-percentile frame duration (s).
    case frameDurationP99 = "frameDuration.p99"
    /// Longest frame duration (s).
    case frameDurationMax = "frameDuration.max"
    /// Refused ticks (count).
    case rejectedTicks

    /// The unit a metric's value is in.
    public enum Unit: String, Sendable, Hashable {
        /// A whole number of things.
        case count
        /// Seconds.
        case seconds
        /// Frames per second.
        case fps
        /// Milliseconds per second.
        case millisecondsPerSecond
        /// Seconds per hour.
        case secondsPerHour
        /// A share from 0 to 1.
        case fraction

        /// The unit as printed after a number: `count`, `s`, `FPS`, `ms/s`, `s/h`, `fraction`.
        public var symbol: String {
            switch self {
            case .count: "count"
            case .seconds: "s"
            case .fps: "FPS"
            case .millisecondsPerSecond: "ms/s"
            case .secondsPerHour: "s/h"
            case .fraction: "fraction"
            }
        }
    }

    /// Which way is better, for comparisons and colours.
    public enum Direction: Sendable, Hashable {
        /// Larger values are better (FPS, stability).
        case higherIsBetter
        /// Smaller values are better (drops, hitches, hangs).
        case lowerIsBetter
        /// Neither (frames, duration): how much data there is.
        case neutral
    }

    /// The value of this metric in `report`, in the metric's ``unit``; `nil` without data.
    public func value(in report: FrameReport) -> Double? {
        switch self {
        case .frames: return Double(report.frames)
        case .duration: return report.duration
        case .averageFPS: return report.averageFPS
        case .firstFPS: return report.firstFPS
        case .minFPS: return report.minFPS
        case .maxFPS: return report.maxFPS
        case .droppedFrames: return Double(report.droppedFrames)
        case .dropEvents: return Double(report.dropEvents)
        case .maxDroppedFrames: return report.frames > 0 ? Double(report.maxDroppedFrames) : nil
        case .hitchTime: return report.hitchTime
        case .hitchRatio: return report.hitchRatio
        case .hangs: return Double(report.hangs)
        case .hangTime: return report.hangTime
        case .hangRate: return report.hangRate
        case .slowFrames: return Double(report.slowFrames)
        case .frozenFrames: return Double(report.frozenFrames)
        case .stability: return report.stability
        case .frameDurationP50: return report.frameDuration(atQuantile: 0.50)
        case .frameDurationP90: return report.frameDuration(atQuantile: 0.90)
        case .frameDurationP95: return report.frameDuration(atQuantile: 0.95)
        case .frameDurationP99: return report.frameDuration(atQuantile: 0.99)
        case .frameDurationMax: return report.maxFrameDuration
        case .rejectedTicks: return Double(report.rejectedTicks)
        }
    }

    /// The unit of ``value(in:)``.
    public var unit: Unit {
        switch self {
        case .frames, .droppedFrames, .dropEvents, .maxDroppedFrames, .hangs, .slowFrames, .frozenFrames, .rejectedTicks: return .count
        case .duration, .hitchTime, .hangTime, .frameDurationP50, .frameDurationP90, .frameDurationP95, .frameDurationP99, .frameDurationMax: return .seconds
        case .averageFPS, .firstFPS, .minFPS, .maxFPS: return .fps
        case .hitchRatio: return .millisecondsPerSecond
        case .hangRate: return .secondsPerHour
        case .stability: return .fraction
        }
    }

    /// Which way is better.
    public var direction: Direction {
        switch self {
        case .frames, .duration, .rejectedTicks: return .neutral
        case .averageFPS, .firstFPS, .minFPS, .maxFPS, .stability: return .higherIsBetter
        case .droppedFrames, .dropEvents, .maxDroppedFrames, .hitchTime, .hitchRatio, .hangs, .hangTime, .hangRate, .slowFrames,
             .frozenFrames, .frameDurationP50, .frameDurationP90, .frameDurationP95, .frameDurationP99, .frameDurationMax:
            return .lowerIsBetter
        }
    }

    /// The metric's name in words, plural for counts ("drop events", "hitch ratio").
    public var displayName: String {
        switch self {
        case .frames: return "frames"
        case .duration: return "duration"
        case .averageFPS: return "average FPS"
        case .firstFPS: return "first FPS"
        case .minFPS: return "minimum FPS"
        case .maxFPS: return "maximum FPS"
        case .droppedFrames: return "dropped frames"
        case .dropEvents: return "drop events"
        case .maxDroppedFrames: return "frames dropped at once"
        case .hitchTime: return "hitch time"
        case .hitchRatio: return "hitch ratio"
        case .hangs: return "hangs"
        case .hangTime: return "hang time"
        case .hangRate: return "hang rate"
        case .slowFrames: return "slow frames"
        case .frozenFrames: return "frozen frames"
        case .stability: return "frame-rate stability"
        case .frameDurationP50: return "median frame duration"
        case .frameDurationP90: return "p90 frame duration"
        case .frameDurationP95: return "p95 frame duration"
        case .frameDurationP99: return "p99 frame duration"
        case .frameDurationMax: return "longest frame"
        case .rejectedTicks: return "rejected ticks"
        }
    }

    /// The metric's label for headings, tiles and column heads: ``displayName`` with a
    /// capital first letter ("Hitch ratio", "Average FPS").
    public var label: String {
        displayName.prefix(1).uppercased() + displayName.dropFirst()
    }

    /// The singular of ``displayName`` for counts ("drop event").
    var singularName: String {
        switch self {
        case .frames: return "frame"
        case .droppedFrames: return "dropped frame"
        case .dropEvents: return "drop event"
        case .maxDroppedFrames: return "frame dropped at once"
        case .hangs: return "hang"
        case .slowFrames: return "slow frame"
        case .frozenFrames: return "frozen frame"
        case .rejectedTicks: return "rejected tick"
        case .duration, .averageFPS, .firstFPS, .minFPS, .maxFPS, .hitchTime, .hitchRatio, .hangTime, .hangRate, .stability,
             .frameDurationP50, .frameDurationP90, .frameDurationP95, .frameDurationP99, .frameDurationMax:
            return displayName
        }
    }

    /// A value written for people, with its unit: `4`, `12.3 ms/s`, `16.7 ms` (times
    /// under a minute are shown in ms), `52.1 FPS`, `87.1 %`.
    public func format(_ value: Double) -> String {
        switch unit {
        case .count: return Self.decimal(value, digits: 0)
        case .seconds: return abs(value) < 60 ? Self.decimal(value * 1000, digits: 1) + " ms" : Self.decimal(value, digits: 1) + " s"
        case .fps: return Self.decimal(value, digits: 1) + " FPS"
        case .millisecondsPerSecond: return Self.decimal(value, digits: 1) + " ms/s"
        case .secondsPerHour: return Self.decimal(value, digits: 1) + " s/h"
        case .fraction: return Self.decimal(value * 100, digits: 1) + " %"
        }
    }

    /// "4 drop events", "1 hang", "hitch ratio 12.3 ms/s", "average 52.1 FPS".
    public func describe(_ value: Double) -> String {
        switch unit {
        case .count: return "\(format(value)) \(value == 1 ? singularName : displayName)"
        case .fps: return "\(displayName.replacingSuffix(" FPS")) \(format(value))"
        case .seconds, .millisecondsPerSecond, .secondsPerHour, .fraction: return "\(displayName) \(format(value))"
        }
    }

    /// `value` written with exactly `digits` decimals ("12.30"), rounded half away
    /// from zero; written without Foundation so the core stays standard-library only.
    public static func decimal(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return String(value) }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = scaled / scale
        let integerPart = Int(whole.rounded(.down))
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(integerPart) }
        let fraction = Int((scaled - Double(integerPart) * scale).rounded())
        return sign + String(integerPart) + "." + zeroPadded(Int64(fraction), width: digits)
    }
}

extension String {
    /// The string without `suffix`, if it ends with it.
    func replacingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

/// `value` in decimal with leading zeros up to `width` digits ("007").
package func zeroPadded(_ value: Int64, width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
}
