import FramescopeCore

/// What the collector needs from storage. `SQLiteStore` is the embedded default; any
/// other store (ClickHouse) must pass the same contract tests (`StoreContractTests`).
public protocol CollectorStore: Sendable {
    /// Creates an app with a fresh ingest key and read key, shown only in the result.
    /// - Parameter id: The app id to use; derived from `name` when `nil`.
    func createApp(name: String, id: String?) async throws -> AppCredentials
    /// Replaces an app's keys with fresh ones (the old ones stop working).
    func rotateKeys(app: String) async throws -> AppCredentials?
    /// Every app, revoked ones included.
    func apps() async throws -> [AppRecord]
    /// Revokes an app's keys; returns whether the app existed.
    func revokeApp(_ id: String) async throws -> Bool
    /// The app and kind of key `key` grants, or `nil` for an unknown or revoked key.
    func authenticate(key: String) async throws -> KeyGrant?
    /// Stores a batch's valid events and adds them to the hourly rollups, in one transaction.
    /// A batch id already stored for the app is not stored again.
    func ingest(_ batch: IngestBatch) async throws -> IngestResult
    /// Per-screen reports over `query`'s time range and filters, merged from the rollups.
    func screens(app: String, query: ScreenQuery) async throws -> [ScreenSummary]
    /// Raw events stored for `app` (for retention and tests).
    func rawEventCount(app: String) async throws -> Int
}

/// An app's identity and its two keys, as `framescope apps create` prints them once.
public struct AppCredentials: Sendable, Hashable, Codable {
    /// The app id (`demo`).
    public var app: String
    /// The app's name.
    public var name: String
    /// The write-only key for `POST /v1/events`.
    public var ingestKey: String
    /// The read key for queries and the dashboard.
    public var readKey: String
}

/// An app as stored (keys are stored only as hashes).
public struct AppRecord: Sendable, Hashable, Codable {
    /// The app id.
    public var app: String
    /// The app's name.
    public var name: String
    /// When it was created, ISO 8601.
    public var createdAt: String
    /// Whether its keys are revoked.
    public var revoked: Bool
}

/// What a key allows.
public struct KeyGrant: Sendable, Hashable {
    /// The kinds of key.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// May send events, may not read.
        case ingest
        /// May read, may not send.
        case read
    }
    /// The app the key belongs to.
    public var app: String
    /// Ingest or read.
    public var kind: Kind
}

/// A batch whose events passed validation, ready to store.
public struct IngestBatch: Sendable {
    /// The app the ingest key belongs to.
    public var app: String
    /// The batch's id.
    public var batchId: String
    /// App version, build, device and OS, as the batch gave them.
    public var appVersion: String
    /// The device's OS version.
    public var osVersion: String
    /// The device model.
    public var deviceModel: String
    /// The valid events with their start times (Unix seconds).
    public var events: [(event: ScreenVisitEvent, startedAt: Double)]
    /// The original batch JSON per event, as stored raw.
    public var rawEvents: [String]
    /// When the collector received it, Unix seconds.
    public var receivedAt: Double
}

/// What storing a batch did.
public struct IngestResult: Sendable, Hashable {
    /// Events stored now (0 for a duplicate).
    public var stored: Int
    /// Whether the batch id had already been accepted.
    public var duplicate: Bool
}

/// A screens query: time range and rollup-key filters (`nil` = any).
public struct ScreenQuery: Sendable, Hashable {
    /// Start of the range, Unix seconds (inclusive, rounded down to the hour).
    public var from: Double
    /// End of the range, Unix seconds (exclusive).
    public var to: Double
    /// Only this app version.
    public var appVersion: String?
    /// Only this OS version.
    public var osVersion: String?
    /// Only this device model.
    public var deviceModel: String?
    /// Only this network type.
    public var network: String?
    /// Only visits with (true) or without (false) low-power mode.
    public var lowPower: Bool?

    /// Creates a query.
    public init(from: Double, to: Double, appVersion: String? = nil, osVersion: String? = nil, deviceModel: String? = nil, network: String? = nil, lowPower: Bool? = nil) {
        self.from = from
        self.to = to
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.network = network
        self.lowPower = lowPower
    }
}

/// One screen's merged figures over a query.
public struct ScreenSummary: Sendable, Hashable, Codable {
    /// The screen's name.
    public var screen: String
    /// Screen visits counted.
    public var visits: Int
    /// The merge of the visits' whole reports.
    public var report: FrameReport
    /// The merge of the visits' motion reports, or `nil` when none moved.
    public var motion: FrameReport?
}
