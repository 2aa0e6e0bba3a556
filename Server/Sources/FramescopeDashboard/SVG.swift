import Foundation

/// A number for an SVG coordinate: at most one decimal, no exponent.
func coordinate(_ value: Double) -> String {
    guard value.isFinite else { return "0" }
    let rounded = (value * 10).rounded() / 10
    return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)
}

/// Formats a figure for people: a few significant digits, grouping for large numbers.
///
/// - Parameters:
///   - value: The number, or `nil` for "no data" (an en dash).
///   - unit: Appended after a thin space when not empty (`ms/s`, `FPS`).
public func formatFigure(_ value: Double?, unit: String = "") -> String {
    guard let value, value.isFinite else { return "–" }
    let magnitude = abs(value)
    let text: String
    if magnitude == 0 {
        text = "0"
    } else if magnitude >= 10_000 {
        text = groupThousands(Int(value.rounded()))
    } else if magnitude >= 100 {
        text = String(format: "%.0f", value)
    } else if magnitude >= 10 {
        text = String(format: "%.1f", value)
    } else if magnitude >= 0.1 {
        text = String(format: "%.2f", value)
    } else {
        text = String(format: "%.3f", value)
    }
    return unit.isEmpty ? text : text + " " + unit
}

/// A whole number with thin-space thousands groups ("1 234 567").
public func groupThousands(_ value: Int) -> String {
    let digits = String(abs(value))
    var groups: [Substring] = []
    var end = digits.endIndex
    while end > digits.startIndex {
        let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
        groups.insert(digits[start..<end], at: 0)
        end = start
    }
    return (value < 0 ? "-" : "") + groups.joined(separator: "\u{202F}")
}

/// "Nice" axis ticks covering `0...maximum`: 4–6 steps of 1, 2 or 5 × 10ⁿ.
func niceTicks(maximum: Double) -> [Double] {
    guard maximum > 0, maximum.isFinite else { return [0, 1] }
    let rough = maximum / 5
    let power = pow(10, (log10(rough)).rounded(.down))
    let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
    var ticks: [Double] = []
    var tick = 0.0
    while tick < maximum + step * 0.999 && ticks.count < 12 {
        ticks.append(tick)
        tick += step
    }
    return ticks
}
