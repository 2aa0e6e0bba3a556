/// A histogram of frame durations in logarithmic buckets, mergeable by adding counts.
///
/// Each power of two of seconds (an octave) is split into 64 equal buckets, so a
/// bucket is at most 1/64 of its lower bound wide, and its midpoint lies within
/// 1/128 (0.79 %) of every value in it. That bounds the relative error of every
/// percentile at 0.79 %. Octaves run from 2⁻²⁰ s (≈ 1 µs) to 2¹⁶ s (≈ 18 h);
/// smaller and larger values fall into the first and last bucket.
///
/// The bucket of a value is read straight off its IEEE 754 bits (exponent and the
/// top six mantissa bits), so recording costs a few integer operations and no
/// logarithm. The scheme is fixed: two histograms always merge, on any platform.
///
/// The stored form is sparse (only non-empty buckets, ascending), which keeps
/// reports small on the wire and in the collector's rollups.
public struct DurationHistogram: Sendable, Hashable {
    /// One non-empty bucket.
    public struct Bucket: Sendable, Hashable {
        /// The bucket's index in the fixed scheme, `0 ..< DurationHistogram.bucketCount`.
        public var index: Int
        /// How many durations fell into the bucket (> 0).
        public var count: Int

        /// Creates a bucket.
        public init(index: Int, count: Int) {
            self.index = index
            self.count = count
        }
    }

    /// Buckets per octave (power of two of seconds).
    public static let bucketsPerOctave = 64
    /// The lowest octave: bucket 0 starts at 2^lowestOctave seconds.
    public static let lowestOctave = -20
    /// The highest octave: the last bucket ends at 2^(highestOctave + 1) seconds.
    public static let highestOctave = 15
    /// Number of buckets in the scheme.
    public static let bucketCount = (highestOctave - lowestOctave + 1) * bucketsPerOctave
    /// Largest relative error of a bucket's representative value (1/128).
    public static let maximumRelativeError = 1.0 / Double(2 * bucketsPerOctave)

    /// Non-empty buckets in ascending index order.
    public private(set) var buckets: [Bucket]
    /// Number of durations recorded.
    public private(set) var count: Int

    /// An empty histogram.
    public init() {
        buckets = []
        count = 0
    }

    /// A histogram from stored buckets, as decoded from JSON or a database.
    /// - Throws: ``HistogramError`` when an index is out of range, a count is not
    ///   positive, or the indices are not strictly ascending.
    public init(buckets: [Bucket]) throws(HistogramError) {
        var previous = -1
        var total = 0
        for (position, bucket) in buckets.enumerated() {
            guard bucket.index >= 0, bucket.index < Self.bucketCount else {
                throw HistogramError(position: position, message: "bucket index \(bucket.index) is outside 0..<\(Self.bucketCount)")
            }
            guard bucket.index > previous else {
                throw HistogramError(position: position, message: "bucket indices must be strictly ascending")
            }
            guard bucket.count > 0 else {
                throw HistogramError(position: position, message: "bucket count must be positive, not \(bucket.count)")
            }
            let (sum, overflow) = total.addingReportingOverflow(bucket.count)
            guard !overflow else { throw HistogramError(position: position, message: "counts overflow") }
            total = sum
            previous = bucket.index
        }
        self.buckets = buckets
        self.count = total
    }

    /// The bucket a duration falls into.
    /// - Parameter seconds: A duration in seconds; non-positive values fall into bucket 0.
    /// - Complexity: O(1), integer operations only.
    @inlinable
    public static func bucketIndex(forSeconds seconds: Double) -> Int {
        let bits = seconds.bitPattern
        if bits >> 63 != 0 { return 0 }
        let octave = Int(truncatingIfNeeded: (bits >> 52) & 0x7FF) - 1023
        if octave < lowestOctave { return 0 }
        if octave > highestOctave { return bucketCount - 1 }
        let sub = Int(truncatingIfNeeded: (bits >> 46) & 63)
        return (octave - lowestOctave) << 6 | sub
    }

    /// The smallest duration in seconds that falls into bucket `index`.
    public static func lowerBound(ofBucket index: Int) -> Double {
        let octave = index >> 6 + lowestOctave
        let sub = index & 63
        return Double(sign: .plus, exponent: octave, significand: 1 + Double(sub) / Double(bucketsPerOctave))
    }

    /// The duration in seconds that stands for every value in bucket `index`: its midpoint.
    public static func representativeValue(ofBucket index: Int) -> Double {
        let octave = index >> 6 + lowestOctave
        let lower = lowerBound(ofBucket: index)
        let width = Double(sign: .plus, exponent: octave, significand: 1) / Double(bucketsPerOctave)
        return lower + width / 2
    }

    /// Records `count` occurrences of a duration.
    ///
    /// Inserting into the sparse form is O(number of buckets); the analyzer records
    /// into a dense form instead and compacts it once per report.
    public mutating func record(seconds: Double, count: Int = 1) {
        guard count > 0 else { return }
        let index = Self.bucketIndex(forSeconds: seconds)
        self.count = self.count.addingSaturated(count)
        let position = buckets.partitioningIndex { $0.index >= index }
        if position < buckets.count, buckets[position].index == index {
            buckets[position].count = buckets[position].count.addingSaturated(count)
        } else {
            buckets.insert(Bucket(index: index, count: count), at: position)
        }
    }

    /// Adds every count of `other` to this histogram.
    /// - Complexity: O(n + m) in the numbers of non-empty buckets.
    public mutating func merge(_ other: DurationHistogram) {
        guard !other.buckets.isEmpty else { return }
        guard !buckets.isEmpty else { self = other; return }
        let merged = mergeSorted(buckets, other.buckets, key: \.index) {
            Bucket(index: $0.index, count: $0.count.addingSaturated($1.count))
        }
        buckets = merged
        count = count.addingSaturated(other.count)
    }

    /// The histogram of both: counts added bucket by bucket.
    public func merging(_ other: DurationHistogram) -> DurationHistogram {
        var result = self
        result.merge(other)
        return result
    }

    /// The representative duration, in seconds, of the value at quantile `q`
    /// (nearest rank: the ⌈q·count⌉-th smallest), or `nil` when the histogram is empty.
    /// - Parameter q: A quantile in [0, 1]; 0.95 is the 95th percentile.
    public func value(atQuantile q: Double) -> Double? {
        guard count > 0 else { return nil }
        let clampedQ = q.isNaN ? 0 : min(max(q, 0), 1)
        let exactRank = (clampedQ * Double(count)).rounded(.up)
        let rank = exactRank >= Double(count) ? count : max(1, Int(exactRank))
        var seen = 0
        for bucket in buckets {
            seen = seen.addingSaturated(bucket.count)
            if seen >= rank { return Self.representativeValue(ofBucket: bucket.index) }
        }
        return buckets.last.map { Self.representativeValue(ofBucket: $0.index) }
    }
}

/// A stored histogram or tally that breaks its invariants.
public struct HistogramError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Position of the offending entry in the stored list.
    public var position: Int
    /// What is wrong, for a person.
    public var message: String
    /// Creates an error.
    public init(position: Int, message: String) {
        self.position = position
        self.message = message
    }
    /// `entry N: message`.
    public var description: String { "entry \(position): \(message)" }
}

extension Array {
    /// The first index whose element satisfies `belongsToSecondPartition`, for an array
    /// already partitioned by it (binary search).
    @usableFromInline
    package func partitioningIndex(where belongsToSecondPartition: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongsToSecondPartition(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// The analyzer's working form of a ``DurationHistogram``: one counter per bucket,
/// allocated once, so recording a duration never allocates.
struct DenseDurationHistogram: Sendable {
    private(set) var counts: [Int]

    init() {
        counts = Array(repeating: 0, count: DurationHistogram.bucketCount)
    }

    @inline(__always)
    mutating func record(bucket: Int) {
        counts[bucket] &+= 1
    }

    /// Records `count` durations in `bucket`, saturating.
    mutating func record(bucket: Int, count: Int) {
        counts[bucket] = counts[bucket].addingSaturated(count)
    }

    /// The sparse form. O(bucketCount).
    func compacted() -> DurationHistogram {
        var buckets: [DurationHistogram.Bucket] = []
        for (index, count) in counts.enumerated() where count > 0 {
            buckets.append(.init(index: index, count: count))
        }
        // The dense form upholds every invariant the throwing initializer checks.
        return (try? DurationHistogram(buckets: buckets)) ?? DurationHistogram()
    }
}
