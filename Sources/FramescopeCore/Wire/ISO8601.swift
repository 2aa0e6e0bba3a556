/// UTC timestamps as ISO 8601 text (`2026-11-22T15:42:13.250Z`), written and read
/// without Foundation, for the wire format and the query API.
public enum ISO8601 {
    /// The text of a Unix time in seconds, to the millisecond, in UTC.
    public static func format(unixSeconds: Double) -> String {
        let totalMilliseconds = Int64((unixSeconds * 1000).rounded(.down))
        var days = totalMilliseconds / 86_400_000
        var milliseconds = totalMilliseconds % 86_400_000
        if milliseconds < 0 { milliseconds += 86_400_000; days -= 1 }
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let hour = milliseconds / 3_600_000
        let minute = milliseconds / 60_000 % 60
        let second = milliseconds / 1000 % 60
        let fraction = milliseconds % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(fraction, 3))Z"
    }

    /// The Unix time in seconds of an ISO 8601 date-time (`2026-11-22T15:42:13Z`, with
    /// optional fraction and `Z` or `±hh:mm` offset) or date (`2026-11-22`, midnight UTC);
    /// `nil` when the text is not one.
    public static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
                index += 1
            }
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        guard days == civilDateCheck(year: year, month: month, day: day) else { return nil }
        var seconds = Double(days) * 86_400
        if index == bytes.count { return seconds }
        guard expect(UInt8(ascii: "T")) || expect(UInt8(ascii: " ")),
              let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2), expect(UInt8(ascii: ":")), let second = number(2),
              hour < 24, minute < 60, second < 61 else { return nil }
        seconds += Double(hour * 3600 + minute * 60 + second)
        if expect(UInt8(ascii: ".")) {
            var scale = 0.1
            var sawDigit = false
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                seconds += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
                sawDigit = true
            }
            guard sawDigit else { return nil }
        }
        if expect(UInt8(ascii: "Z")) { return index == bytes.count ? seconds : nil }
        let sign: Double
        if expect(UInt8(ascii: "+")) { sign = 1 } else if expect(UInt8(ascii: "-")) { sign = -1 } else { return nil }
        guard let offsetHours = number(2), expect(UInt8(ascii: ":")), let offsetMinutes = number(2), index == bytes.count,
              offsetHours < 24, offsetMinutes < 60 else { return nil }
        return seconds - sign * Double(offsetHours * 3600 + offsetMinutes * 60)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm);
    /// `month` 1–12, `day` 1–31, not checked against the month's length.
    public static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Round-trips a date to reject days past a month's end (February 30th).
    private static func civilDateCheck(year: Int64, month: Int64, day: Int64) -> Int64? {
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let back = civilDate(daysSinceEpoch: days)
        return back == (year, month, day) ? days : nil
    }

    /// The proleptic Gregorian date (year, month 1–12, day 1–31) of a day count since
    /// 1970-01-01.
    public static func civilDate(daysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String { zeroPadded(value, width: width) }
}
