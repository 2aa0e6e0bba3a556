/// Natural logarithm, exponential and cosine for the simulators and scroll scripts, written with the
/// standard library alone (which has none of them). Accurate to a few ulps over the
/// ranges the simulators use; tests compare them with the C library's.
public enum Elementary {
    private static let ln2 = 0.693_147_180_559_945_309_4

    /// ln x for x > 0 (NaN for x ≤ 0).
    public static func log(_ x: Double) -> Double {
        guard x > 0, x.isFinite else { return x == 0 ? -.infinity : (x.isInfinite && x > 0 ? .infinity : .nan) }
        // x = m · 2^e with m in [1/√2, √2); ln x = e ln 2 + 2 atanh((m − 1)/(m + 1)).
        var exponent = Int(x.exponent)
        var mantissa = x.significand
        if mantissa > 1.414_213_562_373_095 { mantissa /= 2; exponent += 1 }
        let s = (mantissa - 1) / (mantissa + 1)
        let s2 = s * s
        var term = s
        var sum = 0.0
        var n = 1.0
        while true {
            let next = sum + term / n
            if next == sum { break }
            sum = next
            term *= s2
            n += 2
        }
        return Double(exponent) * ln2 + 2 * sum
    }

    /// eˣ.
    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        if x > 709.78 { return .infinity }
        if x < -745.2 { return 0 }
        // eˣ = 2^k · e^r with |r| ≤ ln2 / 2.
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        var n = 1.0
        while true {
            term *= r / n
            let next = sum + term
            if next == sum { break }
            sum = next
            n += 1
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }

    /// cos x.
    public static func cos(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        let twoPi = 2 * Double.pi
        var r = x - (x / twoPi).rounded() * twoPi  // r in [−π, π]
        var sign = 1.0
        if r > Double.pi / 2 { r = Double.pi - r; sign = -1 } else if r < -Double.pi / 2 { r = -Double.pi - r; sign = -1 }
        let r2 = r * r
        var term = 1.0
        var sum = 1.0
        var n = 0.0
        while true {
            term *= -r2 / ((n + 1) * (n + 2))
            let next = sum + term
            if next == sum { break }
            sum = next
            n += 2
        }
        return sign * sum
    }
}
