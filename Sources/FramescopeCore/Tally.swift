/// Counts per integer key, kept sparse and ascending: frames per refresh rate
/// (key in Hz) and FPS windows per window frame rate (key in hundredths of FPS).
///
/// Tallies merge by adding counts key by key.
public struct Tally: Sendable, Hashable {
    /// One key and its count.
    public struct Entry: Sendable, Hashable {
        /// The key (its unit depends on the tally).
        public var key: Int
        /// How many times the key was counted (> 0).
        public var count: Int
        /// Creates an entry.
        public init(key: Int, count: Int) {
            self.key = key
            self.count = count
        }
    }

    /// Non-empty entries in ascending key order.
    public private(set) var entries: [Entry]

    /// An empty tally.
    public init() { entries = [] }

    /// A tally from stored entries.
    /// - Throws: ``HistogramError`` when keys are not strictly ascending or a count is not positive.
    public init(entries: [Entry]) throws(HistogramError) {
        var previous: Int?
        for (position, entry) in entries.enumerated() {
            if let previous, entry.key <= previous {
                throw HistogramError(position: position, message: "keys must be strictly ascending")
            }
            guard entry.count > 0 else {
                throw HistogramError(position: position, message: "count must be positive, not \(entry.count)")
            }
            previous = entry.key
        }
        self.entries = entries
    }

    /// A tally of `pairs` in any order, keys repeated or not: counts of equal keys add
    /// (saturating at `Int.max`); pairs with a count below 1 are left out.
    /// - Complexity: O(*n* log *n*) for *n* pairs.
    public init(counting pairs: [(key: Int, count: Int)]) {
        var combined: [Entry] = []
        combined.reserveCapacity(pairs.count)
        for pair in pairs.sorted(by: { $0.key < $1.key }) where pair.count > 0 {
            if let last = combined.last, last.key == pair.key {
                combined[combined.count - 1].count = last.count.addingSaturated(pair.count)
            } else {
                combined.append(Entry(key: pair.key, count: pair.count))
            }
        }
        entries = combined
    }

    /// Sum of all counts, saturating at `Int.max`.
    public var total: Int { entries.reduce(0) { $0.addingSaturated($1.count) } }

    /// The count of `key`, 0 when absent.
    public func count(of key: Int) -> Int {
        let position = entries.partitioningIndex { $0.key >= key }
        return position < entries.count && entries[position].key == key ? entries[position].count : 0
    }

    /// Adds `count` to `key`.
    public mutating func add(_ key: Int, count: Int = 1) {
        guard count > 0 else { return }
        let position = entries.partitioningIndex { $0.key >= key }
        if position < entries.count, entries[position].key == key {
            entries[position].count = entries[position].count.addingSaturated(count)
        } else {
            entries.insert(Entry(key: key, count: count), at: position)
        }
    }

    /// Adds every count of `other` (saturating at `Int.max`).
    /// - Complexity: O(*n* + *m*): one pass over both sorted entry lists.
    public mutating func merge(_ other: Tally) {
        guard !other.entries.isEmpty else { return }
        guard !entries.isEmpty else { self = other; return }
        let merged = mergeSorted(entries, other.entries, key: \.key) { Entry(key: $0.key, count: $0.count.addingSaturated($1.count)) }
        entries = merged
    }

    /// The tally of both.
    public func merging(_ other: Tally) -> Tally {
        var result = self
        result.merge(other)
        return result
    }
}

/// The analyzer's working form of a ``Tally``: a counter per key for keys
/// 0...1024, allocated once, and a dictionary only for rarer, larger keys.
struct DenseTally: Sendable {
    static let denseLimit = 1024
    private var counts: [Int]
    private var overflow: [Int: Int] = [:]

    init() {
        counts = Array(repeating: 0, count: Self.denseLimit + 1)
    }

    @inline(__always)
    mutating func add(_ key: Int, count: Int = 1) {
        if key >= 0 && key <= Self.denseLimit {
            counts[key] &+= count
        } else {
            overflow[key, default: 0] &+= count
        }
    }

    /// The sparse form, with each key mapped through `transform` (keys that map
    /// to the same value are added together).
    func compacted(mappingKeys transform: (Int) -> Int = { $0 }) -> Tally {
        var tally = Tally()
        for (key, count) in counts.enumerated() where count > 0 { tally.add(transform(key), count: count) }
        for (key, count) in overflow { tally.add(transform(key), count: count) }
        return tally
    }
}

/// Merges two arrays sorted by strictly ascending `key` in one pass; elements with equal
/// keys are combined by `combine`. Tallies and duration histograms merge this way.
/// - Complexity: O(*n* + *m*).
func mergeSorted<Element>(_ left: [Element], _ right: [Element], key: (Element) -> Int,
                          combine: (Element, Element) -> Element) -> [Element] {
    var merged: [Element] = []
    merged.reserveCapacity(left.count + right.count)
    var l = 0
    var r = 0
    while l < left.count || r < right.count {
        if r == right.count || (l < left.count && key(left[l]) < key(right[r])) {
            merged.append(left[l])
            l += 1
        } else if l == left.count || key(right[r]) < key(left[l]) {
            merged.append(right[r])
            r += 1
        } else {
            merged.append(combine(left[l], right[r]))
            l += 1
            r += 1
        }
    }
    return merged
}
