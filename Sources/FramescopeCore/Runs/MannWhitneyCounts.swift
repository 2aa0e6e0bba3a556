/// The exact null distribution of the Mann–Whitney U for samples of `m` and `n`: how many of
/// the C(m+n, m) rankings give U = 0, 1, 2, …, as exact integers, for the lower half
/// (U ≤ m·n/2; the distribution is symmetric).
///
/// The counts are the coefficients of the Gaussian binomial (m+n choose m)_q, built one factor
/// at a time: [n+i choose i]_q = [n+i−1 choose i−1]_q · (1 − q^(n+i)) / (1 − q^i), dividing
/// first (a running sum, every term non-negative) then multiplying (a subtraction whose result
/// is the next Gaussian binomial, so non-negative again). With m ≤ n that is m passes over
/// m·n/2 + 1 counts: m²n/2 additions of numbers of up to m+n bits.
///
/// The counts are exact multi-word integers in one flat array (`width` 64-bit words each,
/// least significant first), so deciding whether a tail is within α/2 compares integers, not
/// floating point. Only the standard library: the core depends on nothing (docs/decisions.md,
/// "Exact rank statistics").
///
/// - Complexity: O(m² · n · w) time and O(m · n · w) memory with m ≤ n and w = ⌈(m+n+log₂(mn))/64⌉ words.
struct MannWhitneyCounts {
    /// The smaller sample's size.
    let m: Int
    /// The larger sample's size.
    let n: Int
    /// The highest U counted: ⌊m·n/2⌋.
    let degree: Int
    /// Words per count.
    let width: Int
    /// The counts of U = 0…degree, `width` words each, least significant word first.
    private(set) var words: [UInt64]

    /// The counts for samples of `m` and `n` (either order); both at least 1 and m·n within `Int`.
    init(m first: Int, n second: Int) {
        m = min(first, second)
        n = max(first, second)
        degree = m * n / 2
        width = Self.width(m: m, n: n)
        words = [UInt64](repeating: 0, count: (degree + 1) * width)
        words[0] = 1
        let (width, degree, m, n) = (width, degree, m, n)
        words.withUnsafeMutableBufferPointer { counts in
            guard let base = counts.baseAddress else { return }
            for i in stride(from: 1, through: m, by: 1) {
                // Divide by (1 − q^i): c[k] += c[k − i], rising.
                if i <= degree {
                    for k in i...degree { Self.add(base + k * width, base + (k - i) * width, width) }
                }
                // Multiply by (1 − q^(n+i)): c[k] −= c[k − n − i], falling.
                let step = n + i
                if step <= degree {
                    for k in stride(from: degree, through: step, by: -1) {
                        Self.subtract(base + k * width, base + (k - step) * width, width)
                    }
                }
            }
        }
    }

    /// The words each count takes for samples of `m` ≤ `n`: every intermediate is at most
    /// C(m+n, m) · (m·n/2 + 1), and log₂ C(m+n, m) = Σᵢ₌₁…ₘ log₂((n+i)/i) (two bits of margin
    /// for the sum's rounding).
    static func width(m: Int, n: Int) -> Int {
        var bits = 2.0
        for i in stride(from: 1, through: m, by: 1) { bits += Elementary.log(Double(n + i) / Double(i)) / Elementary.log(2) }
        let degreeBits = Int.bitWidth - (m * n / 2 + 1).leadingZeroBitCount
        return (Int(bits.rounded(.up)) + degreeBits) / 64 + 1
    }

    /// The largest `k` ≤ m·n/2 with P(U ≤ k − 1) ≤ α/2 exactly for `level` α, where P is
    /// the count of rankings over C(m+n, m): the Moses interval's rank at level α (two-sided).
    /// Decided in integers: count(U ≤ k − 1) · 2 · denominator ≤ numerator · C(m+n, m).
    func largestTail(within level: SignificanceLevel) -> Int {
        let wide = width + 2  // room for a 64-bit factor and a doubling
        // C(m+n, m) = 2·Σ counts − (the middle count when m·n is even).
        var total = [UInt64](repeating: 0, count: wide)
        for k in 0...degree { Self.add(&total, count(k)) }
        Self.multiply(&total, by: 2)
        if (m * n) % 2 == 0 { Self.subtract(&total, count(degree)) }
        var allowed = total
        Self.multiply(&allowed, by: level.numerator)
        var tail = [UInt64](repeating: 0, count: wide)
        var k = 0
        while k < m * n / 2 {
            Self.add(&tail, count(k))
            var scaled = tail
            Self.multiply(&scaled, by: level.denominator)
            Self.multiply(&scaled, by: 2)
            guard !Self.exceeds(scaled, allowed) else { break }
            k += 1
        }
        return k
    }

    /// The count of rankings with U = `u` (0 ≤ u ≤ ``degree``), `width` words.
    func count(_ u: Int) -> ArraySlice<UInt64> { words[(u * width)..<(u * width + width)] }

    /// The probability of each U = 0…degree, as the nearest `Double` (for tests and coverage).
    func probabilities() -> [Double] {
        let values = (0...degree).map { Self.double(count($0)) }
        let half = values.reduce(0, +)
        let total = 2 * half - ((m * n) % 2 == 0 ? values[degree] : 0)
        return values.map { $0 / total }
    }

    // MARK: - Multi-word arithmetic (least significant word first)

    /// `target` += `source`, both `width` words; the carry out of the top word is dropped
    /// (the width leaves room for every intermediate).
    @inline(__always)
    static func add(_ target: UnsafeMutablePointer<UInt64>, _ source: UnsafePointer<UInt64>, _ width: Int) {
        var carry = false
        for word in 0..<width {
            let (sum, overflow1) = target[word].addingReportingOverflow(source[word])
            let (withCarry, overflow2) = sum.addingReportingOverflow(carry ? 1 : 0)
            target[word] = withCarry
            carry = overflow1 || overflow2
        }
    }

    /// `target` −= `source`, both `width` words; `target` ≥ `source` (the product identity).
    @inline(__always)
    static func subtract(_ target: UnsafeMutablePointer<UInt64>, _ source: UnsafePointer<UInt64>, _ width: Int) {
        var borrow = false
        for word in 0..<width {
            let (difference, overflow1) = target[word].subtractingReportingOverflow(source[word])
            let (withBorrow, overflow2) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
            target[word] = withBorrow
            borrow = overflow1 || overflow2
        }
    }

    /// `target` += `source` (no wider than `target`).
    static func add(_ target: inout [UInt64], _ source: ArraySlice<UInt64>) {
        var carry = false
        for word in target.indices {
            let addend = word < source.count ? source[source.startIndex + word] : 0
            let (sum, overflow1) = target[word].addingReportingOverflow(addend)
            let (withCarry, overflow2) = sum.addingReportingOverflow(carry ? 1 : 0)
            target[word] = withCarry
            carry = overflow1 || overflow2
        }
    }

    /// `target` −= `source` (no wider than `target`, and no greater).
    static func subtract(_ target: inout [UInt64], _ source: ArraySlice<UInt64>) {
        var borrow = false
        for word in target.indices {
            let subtrahend = word < source.count ? source[source.startIndex + word] : 0
            let (difference, overflow1) = target[word].subtractingReportingOverflow(subtrahend)
            let (withBorrow, overflow2) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
            target[word] = withBorrow
            borrow = overflow1 || overflow2
        }
    }

    /// `target` ×= `factor`; the carry out of the top word is dropped (callers leave a word).
    static func multiply(_ target: inout [UInt64], by factor: UInt64) {
        var carry: UInt64 = 0
        for word in target.indices {
            let (high, low) = target[word].multipliedFullWidth(by: factor)
            let (sum, overflow) = low.addingReportingOverflow(carry)
            target[word] = sum
            carry = high &+ (overflow ? 1 : 0)
        }
    }

    /// Whether `a` is greater than `b` (equal widths).
    static func exceeds(_ a: [UInt64], _ b: [UInt64]) -> Bool {
        for word in stride(from: a.count - 1, through: 0, by: -1) where a[word] != b[word] {
            return a[word] > b[word]
        }
        return false
    }

    /// The nearest `Double` of a multi-word count.
    static func double(_ words: ArraySlice<UInt64>) -> Double {
        var value = 0.0
        for word in words.reversed() { value = value * 18_446_744_073_709_551_616.0 + Double(word) }
        return value
    }
}
