/// A non-negative sum of nanoseconds, 128 bits wide, that no fleet can overflow.
///
/// A report's time sums (``FrameReport/durationNanoseconds`` and its siblings) are
/// totals over every visit merged into it. In 64 bits they would hold 292 years, which a
/// 30-day overview of a large app passes (a million users measured ten minutes a day is
/// 570 years of frames). 128 bits hold 10²² years; past that, addition saturates at
/// ``max`` rather than trapping, so no input can crash a merge.
///
/// The standard library's `UInt128` would do, but needs iOS 18 and macOS 15, and the SDK
/// that shares this type supports iOS 17 (`docs/decisions.md`).
///
/// ```swift
/// var total: NanosecondTotal = 0
/// total += NanosecondTotal(16_666_667)
/// print(total.seconds)  // 0.016666667
/// ```
public struct NanosecondTotal: Sendable, Hashable, Comparable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The upper 64 bits.
    public internal(set) var high: UInt64
    /// The lower 64 bits.
    public internal(set) var low: UInt64

    /// Zero nanoseconds.
    public static let zero = NanosecondTotal(high: 0, low: 0)
    /// The largest total, 2¹²⁸ − 1 ns; sums saturate here.
    public static let max = NanosecondTotal(high: .max, low: .max)

    /// The total from its two 64-bit halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// `nanoseconds` as a total.
    public init(_ nanoseconds: UInt64) {
        self.init(high: 0, low: nanoseconds)
    }

    /// `nanoseconds` as a total; negative values are a programmer error (inputs are
    /// validated before they become totals).
    @inlinable
    public init(_ nanoseconds: Int64) {
        precondition(nanoseconds >= 0, "a nanosecond total cannot be negative")
        self.init(high: 0, low: UInt64(nanoseconds))
    }

    /// A literal number of nanoseconds.
    public init(integerLiteral value: UInt64) {
        self.init(value)
    }

    /// The total nearest to `seconds` (rounded to whole nanoseconds), or `nil` when
    /// `seconds` is negative, not finite, or past ``max``.
    public init?(seconds: Double) {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let nanoseconds = (seconds * 1e9).rounded()
        let twoTo64 = 18_446_744_073_709_551_616.0
        guard nanoseconds < twoTo64 * twoTo64 else { return nil }
        if nanoseconds < twoTo64 {
            self.init(high: 0, low: UInt64(nanoseconds))
        } else {
            let upper = (nanoseconds / twoTo64).rounded(.down)
            let lower = nanoseconds - upper * twoTo64
            self.init(high: UInt64(upper), low: lower < twoTo64 ? UInt64(Swift.max(0, lower)) : .max)
        }
    }

    /// The total in seconds (rounded to the nearest `Double`).
    public var seconds: Double { nanoseconds * 1e-9 }

    /// The total in nanoseconds as a `Double`.
    public var nanoseconds: Double { Double(high) * 18_446_744_073_709_551_616.0 + Double(low) }

    /// The total as `Int64` nanoseconds, or `nil` when it does not fit (292 years or more).
    public var int64Value: Int64? {
        high == 0 && low <= UInt64(Int64.max) ? Int64(low) : nil
    }

    /// Whether the total is zero.
    public var isZero: Bool { high == 0 && low == 0 }

    /// Adds non-negative `nanoseconds` (the per-tick path: no allocation, no trap;
    /// saturates at ``max``).
    @inline(__always)
    public mutating func add(_ nanoseconds: Int64) {
        let (sum, carry) = low.addingReportingOverflow(UInt64(truncatingIfNeeded: Swift.max(0, nanoseconds)))
        low = sum
        if carry {
            if high == .max { low = .max } else { high &+= 1 }
        }
    }

    /// Adds non-negative `nanoseconds` `count` times (a histogram bucket's frames), without
    /// a trap: the product is taken in 128 bits, and the sum saturates at ``max``.
    public mutating func add(_ nanoseconds: Int64, times count: Int) {
        guard nanoseconds > 0, count > 0 else { return }
        let product = UInt64(nanoseconds).multipliedFullWidth(by: UInt64(count))
        self += NanosecondTotal(high: product.high, low: product.low)
    }

    /// The sum, saturating at ``max``.
    public static func + (lhs: NanosecondTotal, rhs: NanosecondTotal) -> NanosecondTotal {
        let (low, carry) = lhs.low.addingReportingOverflow(rhs.low)
        let (high, overflowA) = lhs.high.addingReportingOverflow(rhs.high)
        let (withCarry, overflowB) = high.addingReportingOverflow(carry ? 1 : 0)
        return overflowA || overflowB ? .max : NanosecondTotal(high: withCarry, low: low)
    }

    /// Adds `rhs`, saturating at ``max``.
    public static func += (lhs: inout NanosecondTotal, rhs: NanosecondTotal) {
        lhs = lhs + rhs
    }

    /// Orders totals by value.
    public static func < (lhs: NanosecondTotal, rhs: NanosecondTotal) -> Bool {
        lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
    }

    /// The total in nanoseconds, in decimal (`"16666667"`).
    public var description: String {
        if high == 0 { return String(low) }
        // Long division by 10¹⁹ keeps every digit exact.
        let chunk: UInt64 = 10_000_000_000_000_000_000
        var digits: [String] = []
        var (upper, lower) = (high, low)
        while upper > 0 {
            let (quotientHigh, remainderHigh) = upper.quotientAndRemainder(dividingBy: chunk)
            let (quotientLow, remainder) = chunk.dividingFullWidth((remainderHigh, lower))
            digits.append(String(remainder))
            (upper, lower) = (quotientHigh, quotientLow)
        }
        var text = String(lower)
        for part in digits.reversed() { text += String(repeating: "0", count: 19 - part.count) + part }
        return text
    }
}
