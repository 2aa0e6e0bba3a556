import FramescopeCore

/// Tags as rollup dimensions, for the keys an app declares.
///
/// A device may send up to 16 tags per visit, any keys, any values: as dimensions they
/// would multiply the rollups without bound. So every tag stays in the raw events (the
/// export filters on any of them), and only the keys an app *declares*
/// (`framescope apps tags APP --add experiment`) are rolled up: at most
/// ``maximumKeys`` keys per app, each into its own rollup rows keyed by the tag's value
/// and every other dimension, with at most ``defaultDailyValueLimit`` distinct values per
/// key and UTC day before new ones fold into `(other)` (``CardinalityLimits/other``).
/// Visits without the tag count under ``none``, so a break-down by a tag adds up to every
/// visit. Rollups of a key start when it is declared (earlier visits are in the raw events).
public enum DeclaredTags {
    /// The most tag keys one app may declare.
    public static let maximumKeys = 10
    /// Distinct values of one declared key per app and UTC day before new ones fold into `(other)`.
    public static let defaultDailyValueLimit = 100
    /// The value that visits without the tag count under.
    public static let none = "(none)"
    /// The prefix of a tag filter's URL parameter (`tag.experiment=B`) and of a tag's name
    /// in the cardinality ledger and the break-down choice (`by=tag.experiment`).
    public static let parameterPrefix = "tag."

    /// What is wrong with `key` as a tag key (the wire format's rule), or `nil`.
    public static func problem(key: String) -> String? {
        WireText.isValid(key, maximumBytes: VisitContext.maximumTagLength) ? nil
            : "a tag key is 1 to \(VisitContext.maximumTagLength) bytes without control or format characters"
    }

    /// The error for declaring `key`, naming it, when it is not a tag key (``problem(key:)``); `nil` for a good key.
    public static func declarationError(key: String) -> TagKeyError? {
        problem(key: key).map { TagKeyError("\($0) (\(key.debugDescription))") }
    }

    /// The error for declaring one more key when `app` already declares `keys`
    /// (``maximumKeys`` of them): it names them, sorted.
    public static func tooManyKeysError(app: String, keys: [String]) -> TagKeyError {
        TagKeyError("an app declares at most \(maximumKeys) tag keys (\(app) has \(keys.sorted().joined(separator: ", "))); remove one first")
    }

    /// What is wrong with `value` as a tag value (the wire format's rule), or `nil`.
    public static func problem(value: String) -> String? {
        WireText.isValid(value, maximumBytes: VisitContext.maximumTagLength, allowEmpty: true) ? nil
            : "a tag value is 0 to \(VisitContext.maximumTagLength) bytes without control or format characters"
    }

    /// The value a visit's tags give the declared `key`: the tag's value, or ``none``.
    public static func value(of key: String, in tags: [String: String]) -> String {
        tags[key] ?? none
    }

    /// The key a parameter or break-down name (`tag.experiment`) names, or `nil` for a
    /// name without the prefix.
    public static func key(inParameter name: some StringProtocol) -> String? {
        guard name.hasPrefix(parameterPrefix) else { return nil }
        return String(name.dropFirst(parameterPrefix.count))
    }
}

/// A filter on one declared tag: only visits whose tag `key` has `value` (``DeclaredTags/none``
/// for visits without it).
public struct TagFilter: Sendable, Hashable, Codable {
    /// The declared key (`experiment`).
    public var key: String
    /// The value (`B`).
    public var value: String

    /// A filter; see each property.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// A tag key an app declared, and since when its visits are rolled up.
public struct DeclaredTagKey: Sendable, Hashable, Codable {
    /// The key.
    public var key: String
    /// When it was declared, Unix seconds: its rollups count visits stored from then on.
    public var declaredAt: Double

    /// A declared key; see each property.
    public init(key: String, declaredAt: Double) {
        self.key = key
        self.declaredAt = declaredAt
    }
}

/// Why a tag key could not be declared; the message names the key.
public struct TagKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in a sentence.
    public var message: String

    /// An error; see ``message``.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
