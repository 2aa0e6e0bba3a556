/// One value of a dimension (or declared tag) and the visits that have it over a range:
/// an entry of a bounded value list (``CollectorStore/topDimensionValues(app:dimension:from:to:search:limit:)``),
/// such as a dashboard filter menu.
public struct ValueVisits: Sendable, Hashable, Codable {
    /// The value as stored (`"true"`/`"false"` for a boolean dimension).
    public var value: String
    /// Screen visits with the value over the range.
    public var visits: Int

    /// An entry.
    public init(value: String, visits: Int) {
        self.value = value
        self.visits = visits
    }

    /// The most values a list holds, whatever a caller asks for.
    public static let maximumLimit = 1_000

    /// Whether `value` contains `search`, ASCII letters compared in either case (as both
    /// stores compare: SQLite's `lower`, ClickHouse's `positionCaseInsensitive`); every
    /// value matches an empty or absent search.
    public static func matches(_ value: String, search: String?) -> Bool {
        guard let search, !search.isEmpty else { return true }
        func folded(_ text: String) -> [UInt8] { text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 } }
        let haystack = folded(value)
        let needle = folded(search)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<start + needle.count].elementsEqual(needle) }
    }

    /// `values` that match `search`, by value, at most `limit`, with no visit counts.
    static func matching(_ values: [String], search: String?, limit: Int) -> [ValueVisits] {
        values.filter { matches($0, search: search) }.prefix(max(0, limit)).map { ValueVisits(value: $0, visits: 0) }
    }
}
