import FramescopeCore

/// The cardinality rule (``CardinalityLimits``) as a value: given what a store loaded of an
/// app's values per day and across the window, it says whether each value is admitted or
/// folds into ``CardinalityLimits/other``, and keeps the values admitted and the folded
/// counts of one write (a group-commit flush, a MetricKit upload).
///
/// It reads and writes nothing. Each store loads into it what its admissions need, in its
/// own way (SQLite per key as it goes, inside its transaction: ``CardinalityGate``;
/// ClickHouse for the whole flush before planning: `ClickHouseCardinalityGate`), asks it,
/// and writes ``admitted`` back. Tests drive it with made-up ledgers
/// (`CardinalityLedgerTests`).
///
/// A value is admitted when it is known for its app, day and dimension (or `tag.KEY`);
/// else, when fewer than the daily limit are known for that day and, where the dimension
/// has a window limit and the store loaded its window, the value is in the window or the
/// window holds fewer than that limit. Otherwise it folds, and is counted in ``folded``.
public struct CardinalityLedger: Sendable {
    /// One app's values of one dimension (a query name, or `tag.KEY`) on one UTC day.
    public struct Key: Hashable, Sendable {
        /// The app.
        public var app: String
        /// The UTC day's start, Unix seconds.
        public var day: Int64
        /// The dimension's query name, or `tag.KEY` for a declared tag.
        public var name: String

        /// A key; see each property.
        public init(app: String, day: Int64, name: String) {
            self.app = app
            self.day = day
            self.name = name
        }
    }

    /// One app's values of one dimension across the cardinality window, as far as the
    /// store has looked.
    public struct Window: Hashable, Sendable {
        /// How many distinct values the window holds, once read (`nil` until then).
        public var count: Int?
        /// Values known to be in the window.
        public var members: Set<StoredText>

        /// A window; see each property.
        public init(count: Int?, members: Set<StoredText>) {
            self.count = count
            self.members = members
        }
    }

    /// The limits applied.
    public let limits: CardinalityLimits
    /// Byte keys: the stores compare bytes, a `Set<String>` canonical equivalence.
    private var known: [Key: Set<StoredText>] = [:]
    /// By app, then dimension name.
    private var windows: [String: [String: Window]] = [:]
    /// The values admitted that were not known for their day, in the order admitted: what
    /// the store writes back to its ledger.
    public private(set) var admitted: [(key: Key, value: String)] = []
    /// Values folded into `(other)`, per app and dimension name.
    public private(set) var folded: [String: [String: Int]] = [:]

    /// An empty ledger under `limits`.
    public init(limits: CardinalityLimits) {
        self.limits = limits
    }

    // MARK: What the store loaded

    /// Whether the values of `key` were loaded.
    public func hasLoaded(_ key: Key) -> Bool {
        known[key] != nil
    }

    /// Adds `values` to what is known of `key` (marking it loaded, even when empty).
    public mutating func load(_ values: some Sequence<StoredText>, for key: Key) {
        known[key, default: []].formUnion(values)
    }

    /// How many values are known for `key`.
    public func knownCount(for key: Key) -> Int {
        known[key]?.count ?? 0
    }

    /// Whether `value` is known for `key`.
    public func isKnown(_ value: String, for key: Key) -> Bool {
        known[key]?.contains(StoredText(value)) == true
    }

    /// What is known of `app`'s window of `name`, or `nil` before anything was loaded.
    public func window(app: String, name: String) -> Window? {
        windows[app]?[name]
    }

    /// Sets what is known of `app`'s window of `name`. A window whose ``Window/count`` is
    /// `nil` must say of every value the ledger is asked about whether it is a member (a
    /// value outside it would be taken for room in an empty window).
    public mutating func setWindow(_ window: Window, app: String, name: String) {
        windows[app, default: [:]][name] = window
    }

    // MARK: Admission

    /// `value` of `dimension` when it is admitted, else `(other)`; a dimension whose values
    /// are a fixed set (no daily limit) admits every value without recording it.
    public mutating func admit(_ value: String, app: String, day: Int64, dimension: QueryDimension) -> String {
        guard let limit = limits.limit(dimension) else { return value }
        return admit(value, app: app, day: day, name: dimension.queryName, limit: limit)
    }

    /// `value` of the declared tag `tagKey` when it is admitted under the tag's daily limit
    /// (``DeclaredTags/defaultDailyValueLimit``) and window limit, else `(other)`.
    public mutating func admit(tagValue value: String, app: String, day: Int64, tagKey: String) -> String {
        admit(value, app: app, day: day, name: DeclaredTags.parameterPrefix + tagKey, limit: DeclaredTags.defaultDailyValueLimit)
    }

    /// `value` of the dimension (or `tag.KEY`) `name` when it is known for its day, or fits
    /// under the daily `limit` and is in the window or fits under its limit (recording it in
    /// ``admitted``), else `(other)` (counting it in ``folded``).
    /// - Complexity: O(1) hash lookups, plus a copy of the window's members when it grows.
    public mutating func admit(_ value: String, app: String, day: Int64, name: String, limit: Int) -> String {
        let key = Key(app: app, day: day, name: name)
        let text = StoredText(value)
        if known[key]?.contains(text) == true { return value }
        guard (known[key]?.count ?? 0) < limit else { return fold(app: app, name: name) }
        if let windowLimit = limits.windowLimit(ledgerName: name), var window = windows[app]?[name], !window.members.contains(text) {
            let count = window.count ?? 0
            guard count < windowLimit else { return fold(app: app, name: name) }
            window.count = count + 1
            window.members.insert(text)
            windows[app, default: [:]][name] = window
        }
        known[key, default: []].insert(text)
        admitted.append((key, value))
        return value
    }

    /// Counts a fold of `app`'s `name` and returns `(other)`.
    private mutating func fold(app: String, name: String) -> String {
        folded[app, default: [:]][name, default: 0] += 1
        return CardinalityLimits.other
    }

    /// The values of `app` folded since `before` (an earlier ``folded`` of the app), by
    /// dimension name: what one batch folded.
    public func folded(app: String, since before: [String: Int]) -> [String: Int] {
        var delta: [String: Int] = [:]
        for (name, count) in folded[app] ?? [:] where count > before[name] ?? 0 {
            delta[name] = count - (before[name] ?? 0)
        }
        return delta
    }
}
