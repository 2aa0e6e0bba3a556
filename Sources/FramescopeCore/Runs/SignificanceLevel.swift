/// A significance level α as an exact fraction, so that a probability exactly at α/2 is
/// compared exactly: `1 − 0.9` in binary floating point is 0.09999999999999998, which drops a
/// tail of exactly 0.05 that the level allows.
///
/// A confidence given as a `Double` is read as the decimal it prints as (the shortest decimal
/// that reads back as the same `Double`): `0.9` is 9/10, `0.975` is 39/40. That is the number a
/// user typed on the command line or in code, so the level is the one they meant.
///
/// ```swift
/// let level = SignificanceLevel(confidence: 0.9, comparisons: 2)   // α = 1/20
/// level?.numerator    // 1
/// level?.denominator  // 20
/// ```
public struct SignificanceLevel: Sendable, Hashable, CustomStringConvertible {
    /// α's numerator, in lowest terms.
    public let numerator: UInt64
    /// α's denominator, in lowest terms; greater than ``numerator``.
    public let denominator: UInt64

    /// The level `numerator / denominator`, reduced; nil unless 0 < α < 1.
    public init?(numerator: UInt64, denominator: UInt64) {
        guard numerator > 0, numerator < denominator else { return nil }
        let divisor = Self.gcd(numerator, denominator)
        self.numerator = numerator / divisor
        self.denominator = denominator / divisor
    }

    /// The level `alpha`, read as the decimal it prints as; nil unless 0 < α < 1 and the
    /// decimal has at most 18 significant places after the point.
    public init?(_ alpha: Double) {
        guard let (digits, scale) = Self.decimal(alpha) else { return nil }
        self.init(numerator: digits, denominator: scale)
    }

    /// The level that gives `confidence` over `comparisons` figures together (Bonferroni):
    /// α = (1 − confidence) / comparisons, `confidence` read as the decimal it prints as; nil
    /// unless 0 < confidence < 1, `comparisons` ≥ 1 and the fraction fits 64-bit terms.
    public init?(confidence: Double, comparisons: Int = 1) {
        guard comparisons >= 1, let (digits, scale) = Self.decimal(confidence), digits > 0, digits < scale else { return nil }
        let (denominator, overflow) = scale.multipliedReportingOverflow(by: UInt64(comparisons))
        guard !overflow else { return nil }
        self.init(numerator: scale - digits, denominator: denominator)
    }

    /// α as the nearest `Double`.
    public var value: Double { Double(numerator) / Double(denominator) }

    /// 1 − α as the nearest `Double` (for display; decisions use the fraction).
    public var confidence: Double { Double(denominator - numerator) / Double(denominator) }

    /// `numerator/denominator`.
    public var description: String { "\(numerator)/\(denominator)" }

    /// `value` as `digits / scale` with `scale` a power of ten, from its shortest decimal
    /// (`Double.description`: "0.95", "1e-05"); nil outside (0, 1) or past 10¹⁸.
    static func decimal(_ value: Double) -> (digits: UInt64, scale: UInt64)? {
        guard value.isFinite, value > 0, value < 1 else { return nil }
        let text = value.description
        let parts = text.split(separator: "e", maxSplits: 1)
        var exponent = 0
        if parts.count == 2 {
            guard let written = Int(parts[1]) else { return nil }
            exponent = written
        }
        var digits: UInt64 = 0
        var places = 0
        var afterPoint = false
        for character in parts[0] {
            if character == "." { afterPoint = true; continue }
            guard let digit = character.wholeNumberValue else { return nil }
            let (shifted, overflow) = digits.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            digits = shifted + UInt64(digit)
            if afterPoint { places += 1 }
        }
        places -= exponent
        // 0 < value < 1 with at most 18 places: the scale 10^places fits 64 bits.
        guard places >= 1, places <= 18 else { return nil }
        var scale: UInt64 = 1
        for _ in 0..<places { scale *= 10 }
        return (digits, scale)
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
