import FramescopeCore

/// MetricKit writes measurements as text ("20 secs.", "20000 ms", "1000 ms per s") and
/// times as "2020-10-10 19:35:24 +0000" (macOS 13 drops the zone). These read them.
public enum MetricKitMeasurement {
    /// The longest duration a payload can hold, in seconds: payloads cover at most a day.
    public static let maximumDuration = 86_400.0

    /// A duration in seconds, from a number and a unit of time (ms, s, sec, secs., min,
    /// h and their spellings; µs, ns), or `nil` when the text is not one or is negative.
    public static func seconds(_ text: String) -> Double? {
        guard let (value, unit) = split(text), let factor = secondsPerUnit(unit) else { return nil }
        let seconds = value * factor
        return seconds.isFinite ? seconds : nil
    }

    /// A ratio in ms per s, from "12.5 ms per s" (or "ms/s", or any two units of time), or
    /// `nil` when the text is not one.
    public static func millisecondsPerSecond(_ text: String) -> Double? {
        guard let (value, unit) = split(text) else { return nil }
        let words = unit.split(separator: " ")
        let parts = words.count == 3 && words[1] == "per" ? [words[0], words[2]] : unit.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let top = secondsPerUnit(String(parts[0])), let bottom = secondsPerUnit(String(parts[1])) else { return nil }
        let ratio = value * top / bottom * 1000
        return ratio.isFinite ? ratio : nil
    }

    /// Unix seconds from "yyyy-MM-dd HH:mm:ss" with an optional "+hhmm"/"-hhmm" zone (UTC
    /// without one), or `nil` when the text is not such a time between 1970 and 9999.
    public static func unixTime(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard byte &- 0x30 < 10 else { return nil }
                value = value * 10 + Int(byte &- 0x30)
            }
            return value
        }
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              year >= 1970, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var offset = 0
        var rest = bytes[19...].drop { $0 == UInt8(ascii: " ") }
        if rest.last == UInt8(ascii: "Z") { rest = rest.dropLast() }
        if !rest.isEmpty {
            let zone = Array(rest)
            guard zone.count == 5 || zone.count == 6, zone[0] == UInt8(ascii: "+") || zone[0] == UInt8(ascii: "-") else { return nil }
            let compact = zone.filter { $0 != UInt8(ascii: ":") }
            guard compact.count == 5, compact[1...].allSatisfy({ $0 &- 0x30 < 10 }) else { return nil }
            let hours = Int(compact[1] - 0x30) * 10 + Int(compact[2] - 0x30)
            let minutes = Int(compact[3] - 0x30) * 10 + Int(compact[4] - 0x30)
            guard hours < 24, minutes < 60 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (zone[0] == UInt8(ascii: "-") ? -1 : 1)
        }
        let days = Int(ISO8601.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day)))
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
    }

    /// The number and the unit's text (lower-cased, without a final "."), or `nil`.
    private static func split(_ text: String) -> (Double, String)? {
        let trimmed = text.utf8.drop { $0 == UInt8(ascii: " ") }
        let numberEnd = trimmed.firstIndex { !($0 &- 0x30 < 10 || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+")) } ?? trimmed.endIndex
        guard numberEnd > trimmed.startIndex, let value = Double(String(decoding: trimmed[..<numberEnd], as: UTF8.self)),
              value.isFinite, value >= 0 else { return nil }
        var unit = String(decoding: trimmed[numberEnd...], as: UTF8.self).lowercased()
        while unit.hasPrefix(" ") { unit.removeFirst() }
        while unit.hasSuffix(" ") || unit.hasSuffix(".") { unit.removeLast() }
        return (value, unit)
    }

    /// Seconds in one `unit`, or `nil` for a unit that is not of time.
    private static func secondsPerUnit(_ unit: String) -> Double? {
        switch String(unit.trimmingWhitespace()) {
        case "ns", "nsec", "nanosecond", "nanoseconds": 1e-9
        case "µs", "μs", "us", "usec", "microsecond", "microseconds": 1e-6
        case "ms", "msec", "msecs", "millisecond", "milliseconds": 1e-3
        case "s", "sec", "secs", "second", "seconds": 1
        case "min", "mins", "minute", "minutes": 60
        case "h", "hr", "hrs", "hour", "hours": 3600
        default: nil
        }
    }
}
