import FramescopeCore

/// How many distinct values of each dimension one app may create per UTC day, and across
/// the cardinality window, before new ones fold into ``CardinalityLimits/other``.
///
/// Every distinct screen, app version, OS version or device model creates rollup rows
/// that are kept for good, and the dashboard lists them. A device holds the ingest key, so
/// without a bound it could create any number of them. As analytics backends do, values
/// beyond the limit are counted under one bucket, `(other)`, and
/// `framescope_folded_values_total{app, dimension}` in `/metrics` says how many were.
/// Network and low-power mode have a fixed set of values. Tags are a rollup dimension only
/// for the keys an app declares, each with ``DeclaredTags/defaultDailyValueLimit`` values
/// a day (ledger name `tag.KEY`); every other tag stays in the raw events only.
///
/// A daily limit alone is multiplied by the days an event may start in: events may start
/// up to 30 days back, so one client that backdates could create 30 days' worth of values
/// in a minute. The **window limits** bound the distinct values per app across the
/// ``window`` (the days the ledger keeps, ``AccessLifetimes/batchLedger``): a value the app
/// has not used on any day of the window is admitted only while fewer than the window
/// limit are; otherwise it folds into `(other)` as a daily fold does. A value already in
/// the window (used on any of its days) counts only against the daily limit.
public struct CardinalityLimits: Sendable, Hashable {
    /// The bucket that values beyond a limit fold into; devices may not send it themselves.
    public static let other = "(other)"

    /// The default window limits, by dimension query name: distinct values per app across
    /// the ``window``.
    ///
    /// Three times the daily limit for screens and versions (an app's screens and versions
    /// are mostly the same from day to day: a real app's window holds little more than one
    /// day's worth, while a backdating client could otherwise fill 31 days' worth), and four
    /// times for device models (a fleet's models are many and each day sees only part of
    /// them; Apple has made about 150 models, Android fleets show a few thousand).
    public static let defaultWindowLimits: [String: Int] = [
        QueryDimension.screen.queryName: 3_000,
        QueryDimension.appVersion.queryName: 300,
        QueryDimension.osVersion.queryName: 300,
        QueryDimension.deviceModel.queryName: 2_000,
    ]

    /// The default window limit of each declared tag: distinct values per app and key
    /// across the ``window`` (five times the daily ``DeclaredTags/defaultDailyValueLimit``).
    public static let defaultTagWindowLimit = 500

    /// How far back the window reaches, in seconds: the days the cardinality ledger keeps
    /// (``AccessLifetimes/batchLedger``, 32 days: every day an event may still start on,
    /// 30 back and 1 ahead, and one to spare). The retention sweep forgets a value once the
    /// app has not used it for that long.
    public static let window: Double = AccessLifetimes.batchLedger

    /// The ledger name under which window limits of declared tags are overridden.
    static let tagWindowName = DeclaredTags.parameterPrefix + "*"

    /// Limits set apart from the registry's defaults, by dimension query name.
    public private(set) var overrides: [String: Int] = [:]
    /// Window limits set apart from ``defaultWindowLimits``, by dimension query name
    /// (`tag.*` for every declared tag).
    public private(set) var windowOverrides: [String: Int] = [:]

    /// Distinct screens per app and day.
    public var screens: Int { get { limit(.screen) ?? 0 } set { overrides[QueryDimension.screen.queryName] = newValue } }
    /// Distinct app versions per app and day.
    public var appVersions: Int { get { limit(.appVersion) ?? 0 } set { overrides[QueryDimension.appVersion.queryName] = newValue } }
    /// Distinct OS versions per app and day.
    public var osVersions: Int { get { limit(.osVersion) ?? 0 } set { overrides[QueryDimension.osVersion.queryName] = newValue } }
    /// Distinct device models per app and day.
    public var deviceModels: Int { get { limit(.deviceModel) ?? 0 } set { overrides[QueryDimension.deviceModel.queryName] = newValue } }

    /// Distinct screens per app across the ``window``.
    public var screensInWindow: Int {
        get { windowLimit(.screen) ?? 0 }
        set { windowOverrides[QueryDimension.screen.queryName] = newValue }
    }
    /// Distinct app versions per app across the ``window``.
    public var appVersionsInWindow: Int {
        get { windowLimit(.appVersion) ?? 0 }
        set { windowOverrides[QueryDimension.appVersion.queryName] = newValue }
    }
    /// Distinct OS versions per app across the ``window``.
    public var osVersionsInWindow: Int {
        get { windowLimit(.osVersion) ?? 0 }
        set { windowOverrides[QueryDimension.osVersion.queryName] = newValue }
    }
    /// Distinct device models per app across the ``window``.
    public var deviceModelsInWindow: Int {
        get { windowLimit(.deviceModel) ?? 0 }
        set { windowOverrides[QueryDimension.deviceModel.queryName] = newValue }
    }
    /// Distinct values of each declared tag per app across the ``window``.
    public var tagValuesInWindow: Int {
        get { windowOverrides[Self.tagWindowName] ?? Self.defaultTagWindowLimit }
        set { windowOverrides[Self.tagWindowName] = newValue }
    }

    /// The defaults (``QueryDimension/defaultDailyLimit``, ``defaultWindowLimits``).
    public init() {}

    /// The daily limit of `dimension`, or `nil` for a dimension whose values are a fixed
    /// set (network, low-power mode), which needs none.
    public func limit(_ dimension: QueryDimension) -> Int? {
        guard dimension.defaultDailyLimit != nil else { return nil }
        return overrides[dimension.queryName] ?? dimension.defaultDailyLimit
    }

    /// The window limit of `dimension`, or `nil` for a dimension whose values are a fixed set.
    public func windowLimit(_ dimension: QueryDimension) -> Int? {
        guard dimension.defaultDailyLimit != nil else { return nil }
        return windowOverrides[dimension.queryName] ?? Self.defaultWindowLimits[dimension.queryName]
    }

    /// The window limit of a ledger name: a dimension's query name, or `tag.KEY`.
    public func windowLimit(ledgerName name: String) -> Int? {
        if DeclaredTags.key(inParameter: name) != nil { return tagValuesInWindow }
        return QueryDimension(queryName: name).flatMap(windowLimit)
    }
}
