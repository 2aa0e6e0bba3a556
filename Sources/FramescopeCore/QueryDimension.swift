/// A dimension: a field that queries filter and group by: one entry per dimension, with the
/// one name it has in URLs, JSON and the OpenAPI document (``queryName``), the column it
/// has in the store (``storeColumn``), its label on the dashboard and the values it takes.
///
/// Everything that lists dimensions derives from ``all``: the collector's parameter
/// parsing and validation, the store's filter columns and value lists, the dashboard's
/// filter bar, and the test that holds `openapi.json` to the registry. Adding a dimension
/// is an entry here and a schema migration (docs/architecture.md says how).
public struct QueryDimension: Sendable, Hashable, CustomStringConvertible {
    /// The values a dimension takes.
    public enum Values: Sendable, Hashable {
        /// Free text from the device (any text is a valid filter; a value no device sent
        /// matches nothing).
        case text
        /// One of these words.
        case oneOf([String])
        /// `true` or `false` (stored as an integer).
        case boolean
    }

    /// The name in URL parameters, JSON, the OpenAPI document and the cardinality
    /// ledger (`deviceModel`).
    public let queryName: String
    /// The column in the store's events and rollup tables (`device_model`).
    public let storeColumn: String
    /// The label on the dashboard ("Device model").
    public let label: String
    /// The values it takes.
    public let values: Values
    /// Whether only the detailed rollup levels keep it (every dimension but the screen,
    /// which every level keeps).
    public let isRollupDimension: Bool
    /// How many distinct values one app may create per UTC day before new ones fold into
    /// `(other)` (the collector's default; `framescope serve` can change it), or `nil` for
    /// a fixed set of values, which needs no limit.
    public let defaultDailyLimit: Int?
    /// Reads the dimension's value (text; `"true"`/`"false"` for a boolean) from a visit.
    public let read: @Sendable (VisitFacts) -> String

    /// The screen's name (every rollup level keeps it).
    public static let screen = QueryDimension(queryName: "screen", storeColumn: "screen", label: "Screen", values: .text,
                                               isRollupDimension: false, defaultDailyLimit: 1000, read: { $0.event.screen })
    /// The app's marketing version (`3.1.0`).
    public static let appVersion = QueryDimension(queryName: "appVersion", storeColumn: "app_version", label: "App version", values: .text,
                                               isRollupDimension: true, defaultDailyLimit: 100, read: { $0.appVersion })
    /// The OS version (`18.1`).
    public static let osVersion = QueryDimension(queryName: "osVersion", storeColumn: "os_version", label: "OS version", values: .text,
                                               isRollupDimension: true, defaultDailyLimit: 100, read: { $0.osVersion })
    /// The device model (`iPhone15,2`).
    public static let deviceModel = QueryDimension(queryName: "deviceModel", storeColumn: "device_model", label: "Device model", values: .text,
                                               isRollupDimension: true, defaultDailyLimit: 500, read: { $0.deviceModel })
    /// The network type during the visit.
    public static let network = QueryDimension(queryName: "network", storeColumn: "network", label: "Network", values: .oneOf(VisitContext.Network.allCases.map(\.rawValue)),
                                               isRollupDimension: true, defaultDailyLimit: nil, read: { $0.event.context.network.rawValue })
    /// Whether low-power mode was on during the visit.
    public static let lowPower = QueryDimension(queryName: "lowPower", storeColumn: "low_power", label: "Low-power mode", values: .boolean,
                                               isRollupDimension: true, defaultDailyLimit: nil, read: { $0.event.context.lowPowerMode ? "true" : "false" })

    /// The device's thermal state during the visit; `unknown` for rollups carried over from
    /// before it was a dimension (migration v11).
    public static let thermalState = QueryDimension(queryName: "thermalState", storeColumn: "thermal_state", label: "Thermal state",
                                               values: .oneOf(VisitContext.ThermalState.allCases.map(\.rawValue) + [unknownValue]),
                                               isRollupDimension: true, defaultDailyLimit: nil, read: { $0.event.context.thermalState.rawValue })
    /// The display's maximum refresh rate, from the batch's `device.maxRefreshRate`: `60`,
    /// `120`, or `other` (another rate, such as 90 Hz); `unknown` for rollups carried over
    /// from before it was a dimension (migration v11).
    public static let maxRefreshRate = QueryDimension(queryName: "maxRefreshRate", storeColumn: "max_refresh_rate", label: "Display maximum",
                                               values: .oneOf(["60", "120", "other", unknownValue]),
                                               isRollupDimension: true, defaultDailyLimit: nil, read: { maxRefreshRateClass($0.maxRefreshRate) })

    /// The value of a dimension that data from before the dimension existed carries.
    public static let unknownValue = "unknown"

    /// The ``maxRefreshRate`` value of a display's maximum rate in Hz: `60`, `120` or `other`.
    public static func maxRefreshRateClass(_ hertz: Int) -> String {
        hertz == 60 ? "60" : hertz == 120 ? "120" : "other"
    }

    /// Every dimension, in the store's key order.
    public static let all: [QueryDimension] = [screen, appVersion, osVersion, deviceModel, network, lowPower, thermalState, maxRefreshRate]

    /// The dimensions the detailed rollup levels add to the screen.
    public static let rollupDimensions: [QueryDimension] = all.filter(\.isRollupDimension)

    /// The dimension called `queryName`, or `nil`.
    public init?(queryName: String) {
        guard let found = Self.all.first(where: { $0.queryName == queryName }) else { return nil }
        self = found
    }

    private init(queryName: String, storeColumn: String, label: String, values: Values, isRollupDimension: Bool,
                 defaultDailyLimit: Int?, read: @escaping @Sendable (VisitFacts) -> String) {
        self.queryName = queryName
        self.storeColumn = storeColumn
        self.label = label
        self.values = values
        self.isRollupDimension = isRollupDimension
        self.defaultDailyLimit = defaultDailyLimit
        self.read = read
    }

    /// Dimensions are the same when their query names are.
    public static func == (a: QueryDimension, b: QueryDimension) -> Bool { a.queryName == b.queryName }

    /// Hashes the query name.
    public func hash(into hasher: inout Hasher) { hasher.combine(queryName) }

    /// What is wrong with `text` as a value of this dimension (in words that name the
    /// parameter), or `nil` when it is a valid value.
    public func problem(with text: String) -> String? {
        switch values {
        case .text:
            return nil
        case .oneOf(let words):
            return words.contains(text) ? nil : "\(queryName) must be one of \(words.joined(separator: ", "))"
        case .boolean:
            return text == "true" || text == "false" ? nil : "\(queryName) must be true or false"
        }
    }

    /// A value as the dashboard shows it: "on"/"off" for booleans, the value otherwise.
    public func displayValue(_ value: String) -> String {
        guard values == .boolean else { return value }
        return value == "true" ? "on" : "off"
    }

    /// The label inside a sentence ("Hitch ratio by device model"): the first letter in
    /// lower case, unless the label starts with an abbreviation ("OS version").
    public var labelInSentence: String {
        let characters = Array(label)
        guard characters.count > 1, !characters[1].isUppercase else { return label }
        return characters[0].lowercased() + String(characters.dropFirst())
    }

    /// The query name.
    public var description: String { queryName }
}

/// What a dimension's value is read from: one screen visit and what its batch says of
/// the app and the device.
public struct VisitFacts: Sendable {
    /// The app's marketing version.
    public var appVersion: String
    /// The device's OS version.
    public var osVersion: String
    /// The device model.
    public var deviceModel: String
    /// The visit.
    public var event: ScreenVisitEvent
    /// The display's maximum refresh rate, in Hz, as the batch's device said.
    public var maxRefreshRate: Int

    /// The facts of `event`, sent in a batch from `deviceModel` (whose display refreshes at
    /// up to `maxRefreshRate` Hz) on `osVersion` by `appVersion`.
    public init(appVersion: String, osVersion: String, deviceModel: String, maxRefreshRate: Int = 60, event: ScreenVisitEvent) {
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.maxRefreshRate = maxRefreshRate
        self.event = event
    }
}
