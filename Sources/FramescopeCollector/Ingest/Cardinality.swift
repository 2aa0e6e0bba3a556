import FramescopeCore
import GRDB

/// How many distinct values of each dimension one app may create per UTC day before new
/// ones fold into ``CardinalityLimits/other``.
///
/// Every distinct screen, app version, OS version or device model creates rollup rows
/// that are kept for good, and the dashboard lists them. A device holds the ingest key, so
/// without a bound it could create any number of them. As analytics backends do, values
/// beyond the limit are counted under one bucket, `(other)`, and
/// `framescope_folded_values_total{app, dimension}` in `/metrics` says how many were.
/// Network and low-power mode have a fixed set of values. Tags are a rollup dimension only
/// for the keys an app declares, each with ``DeclaredTags/defaultDailyValueLimit`` values
/// a day (ledger name `tag.KEY`); every other tag stays in the raw events only.
public struct CardinalityLimits: Sendable, Hashable {
    /// The bucket that values beyond a limit fold into; devices may not send it themselves.
    public static let other = "(other)"

    /// Limits set apart from the registry's defaults, by dimension query name.
    public private(set) var overrides: [String: Int] = [:]

    /// Distinct screens per app and day.
    public var screens: Int { get { limit(.screen) ?? 0 } set { overrides[QueryDimension.screen.queryName] = newValue } }
    /// Distinct app versions per app and day.
    public var appVersions: Int { get { limit(.appVersion) ?? 0 } set { overrides[QueryDimension.appVersion.queryName] = newValue } }
    /// Distinct OS versions per app and day.
    public var osVersions: Int { get { limit(.osVersion) ?? 0 } set { overrides[QueryDimension.osVersion.queryName] = newValue } }
    /// Distinct device models per app and day.
    public var deviceModels: Int { get { limit(.deviceModel) ?? 0 } set { overrides[QueryDimension.deviceModel.queryName] = newValue } }

    /// The defaults (``QueryDimension/defaultDailyLimit``).
    public init() {}

    /// The daily limit of `dimension`, or `nil` for a dimension whose values are a fixed
    /// set (network, low-power mode), which needs none.
    public func limit(_ dimension: QueryDimension) -> Int? {
        guard dimension.defaultDailyLimit != nil else { return nil }
        return overrides[dimension.queryName] ?? dimension.defaultDailyLimit
    }
}

/// The distinct values each app has used per day and dimension, as one write transaction
/// sees them: read once per (app, day, dimension) from `dimension_values`, extended as new
/// values are admitted, and written back in the same transaction.
struct CardinalityGate {
    let limits: CardinalityLimits
    private var known: [Key: Set<StoredText>] = [:]
    // Byte keys: the table compares bytes, a `Set<String>` canonical equivalence.
    /// Values folded into `(other)` in this transaction, per app and dimension.
    private(set) var folded: [String: [String: Int]] = [:]

    struct Key: Hashable {
        var app: String
        var day: Int64
        var dimension: String
    }

    init(limits: CardinalityLimits) {
        self.limits = limits
    }

    /// `value` when it is known or fits under the limit (recording it), else `(other)`.
    mutating func admit(_ value: String, app: String, day: Int64, dimension queryDimension: QueryDimension, _ db: Database) throws -> String {
        guard let limit = limits.limit(queryDimension) else { return value }
        return try admit(value, app: app, day: day, name: queryDimension.queryName, limit: limit, db)
    }

    /// `value` of the declared tag `key` when it is known or fits under the tag's daily
    /// limit (recording it as `tag.KEY`), else `(other)`.
    mutating func admit(_ value: String, app: String, day: Int64, tagKey: String, _ db: Database) throws -> String {
        try admit(value, app: app, day: day, name: DeclaredTags.parameterPrefix + tagKey, limit: DeclaredTags.defaultDailyValueLimit, db)
    }

    private mutating func admit(_ value: String, app: String, day: Int64, name dimension: String, limit: Int, _ db: Database) throws -> String {
        let key = Key(app: app, day: day, dimension: dimension)
        if known[key] == nil {
            known[key] = Set(try String.fetchAll(db, sql: "SELECT value FROM dimension_values WHERE app_id = ? AND day = ? AND dimension = ?",
                                                  arguments: [app, day, dimension]).map(StoredText.init))
        }
        if known[key]?.contains(StoredText(value)) == true { return value }
        guard (known[key]?.count ?? 0) < limit else {
            folded[app, default: [:]][dimension, default: 0] += 1
            return CardinalityLimits.other
        }
        known[key]?.insert(StoredText(value))
        try db.execute(sql: "INSERT INTO dimension_values (app_id, day, dimension, value) VALUES (?, ?, ?, ?)",
                       arguments: [app, day, dimension, value])
        return value
    }
}
