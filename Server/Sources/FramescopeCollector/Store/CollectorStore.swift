import Foundation
import FramescopeCore

/// What the collector needs from storage. `SQLiteStore` is the embedded default (on a
/// file, or in memory); every store runs the same contract suite,
/// `Tests/FramescopeCollectorTests/StoreContractTests.swift`, which a new store (ClickHouse)
/// joins by adding itself to the suite's list of kinds.
public protocol CollectorStore: Sendable {
    /// Creates an app with a fresh ingest key, read key and admin key, shown only in the result.
    /// - Parameter id: The app id to use; derived from `name` when `nil`.
    func createApp(name: String, id: String?) async throws -> AppCredentials
    /// Replaces an app's keys with fresh ones (the old ones stop working).
    func rotateKeys(app: String) async throws -> AppCredentials?
    /// Every app, revoked ones included.
    func apps() async throws -> [AppRecord]
    /// Revokes an app's keys; returns whether the app existed.
    func revokeApp(_ id: String) async throws -> Bool
    /// The app and kind of key `key` grants at `now` (Unix seconds), or `nil` for an
    /// unknown or revoked key, or an old key whose grace period ended before `now`.
    func authenticate(key: String, now: Double) async throws -> KeyGrant?
    /// Stores the batches' valid events and adds them to the rollups, all in one
    /// transaction (one flush of the group commit), and returns one result per batch in
    /// order. A batch id already stored for its app — before or earlier in `batches` —
    /// is not stored again.
    func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult]
    /// The rollups over `query`'s time range and filters, merged into one
    /// ``RollupAggregate`` per group (screen, time bucket and dimension value, as asked).
    func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate]
    /// The values of `dimension` that have data for `app` on the UTC days that
    /// `[from, to)` touches, sorted (for filter menus).
    func dimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double) async throws -> [String]
    /// The values of `dimension` that have data for `app` on the UTC days that `[from, to)`
    /// touches, most visits first (then by value, bytewise), only those that contain
    /// `search` (ASCII letters in either case) when it is given, at most `limit`: what a
    /// filter menu shows, however many values there are (``ValueVisits``).
    func topDimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits]
    /// Raw events stored for `app` (for retention and tests).
    func rawEventCount(app: String) async throws -> Int
    /// The first hour (hours since the epoch) from `hour` through `lastHour` in which any of
    /// `app`'s raw events started, or `nil` when none did: how an export skips empty hours,
    /// so that a range of any length costs reads in proportion to the hours with events.
    func firstRawEventHour(app: String, from hour: Int64, through lastHour: Int64) async throws -> Int64?
    /// The keys of `app`'s raw events that started in `hour` (hours since the epoch) and
    /// match `query`, after `after` if given, in export order (start time, then id).
    func rawEventKeys(app: String, query: EventQuery, hour: Int64, after: RawEventKey?) async throws -> [RawEventKey]
    /// `app`'s raw events of `keys`, in the keys' order; an event deleted meanwhile is left out.
    func rawEvents(app: String, keys: [RawEventKey]) async throws -> [StoredEvent]
    /// Deletes raw events that started before `cutoff` (Unix seconds), at most `limit`
    /// of them; returns how many were deleted. Rollups are kept.
    func deleteRawEvents(startedBefore cutoff: Double, limit: Int) async throws -> Int
    /// How many raw events the retention sweep asks ``deleteRawEvents(startedBefore:limit:)``
    /// to delete at a time: small where each call is a transaction that holds the writer
    /// (SQLite), unbounded where deleting is cheapest in whole partitions (ClickHouse).
    var retentionChunk: Int { get }
    /// The tag keys `app` declared, by key; `nil` for an unknown app.
    func tagKeys(app: String) async throws -> [DeclaredTagKey]?
    /// Declares the tag key `key` for `app` at `now` (Unix seconds): its values become a
    /// rollup dimension from then on. Returns `true` when declared now, `false` when it
    /// was already, `nil` for an unknown app.
    /// - Throws: ``TagKeyError`` for a key the wire format refuses, or past
    ///   ``DeclaredTags/maximumKeys``; nothing is stored then.
    func declareTagKey(app: String, key: String, now: Double) async throws -> Bool?
    /// Stops rolling up `app`'s tag key `key` (its rollups are kept, and a later
    /// declaration adds to them); returns whether it was declared.
    func removeTagKey(app: String, key: String) async throws -> Bool
    /// The values of the declared tag `key` that have data for `app` on the UTC days that
    /// `[from, to)` touches, sorted (for filter menus).
    func tagValues(app: String, key: String, from: Double, to: Double) async throws -> [String]
    /// The values of the declared tag `key` as ``topDimensionValues(app:dimension:from:to:search:limit:)``
    /// gives a dimension's: most visits first, matching `search`, at most `limit`.
    func topTagValues(app: String, key: String, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits]
    /// Replaces one kind of an app's key with a fresh one and returns it (`nil` for an
    /// unknown or revoked app): old ingest keys keep working for `gracePeriod` seconds,
    /// old read keys and their dashboard sessions end at once, and so do old admin keys.
    func rotateKey(app: String, kind: KeyGrant.Kind, gracePeriod: Double, now: Double) async throws -> String?
    /// Opens a dashboard session for a live read key, lasting `lifetime` seconds; `nil` otherwise.
    func createSession(readKey: String, lifetime: Double, now: Double) async throws -> DashboardSession?
    /// What the session `id` grants, or `nil` when it is unknown, expired, or its key or app was revoked.
    func session(id: String, now: Double) async throws -> SessionGrant?
    /// Ends the session `id`.
    func deleteSession(id: String) async throws
    /// Forgets batch ids received before `cutoff` (at most `limit`), expired sessions and
    /// keys past their grace period; returns how many batch ids were forgotten.
    func pruneAccessRecords(batchesReceivedBefore cutoff: Double, now: Double, limit: Int) async throws -> Int
    /// Stores MetricKit payloads for `app`; a record whose digest is stored already is not
    /// stored again. Returns how many were stored.
    func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int
    /// Apple's figures per app version from the MetricKit payloads whose end falls in
    /// `query`'s range, filtered by its app version, OS version and device model (MetricKit
    /// has no screens, networks or power modes, so those filters are not applied), by
    /// version.
    func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary]
    /// Deletes MetricKit payloads whose end is before `cutoff` (Unix seconds), at most
    /// `limit` of them; returns how many were deleted (the retention sweep, with the
    /// raw events' cutoff).
    func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int
    /// The thresholds `app` set (bands and verdict rules; what it did not set is absent
    /// and takes its default), or `nil` for an unknown app.
    func thresholds(app: String) async throws -> AppThresholds?
    /// Replaces `app`'s thresholds with `thresholds`; returns `false` for an unknown app.
    /// - Throws: ``ThresholdError`` naming the field when a value is not physical
    ///   (``AppThresholds/problem()``); nothing is stored then.
    func setThresholds(_ thresholds: AppThresholds, app: String) async throws -> Bool
    /// Stores each of `alerts` unless an alert of the same app, screen, metric, baseline and
    /// candidate is stored already, with a pending delivery for each webhook its app has
    /// at that moment; returns the alerts stored now (so an alert is raised once).
    func raiseAlerts(_ alerts: [NewAlert], now: Double) async throws -> [RegressionAlert]
    /// `app`'s alerts, newest first, at most `limit`.
    func alerts(app: String, limit: Int) async throws -> [RegressionAlert]
    /// Marks `app`'s alert `id` acknowledged at `now` (Unix seconds) unless it is already,
    /// and returns it; `nil` when `app` has no alert `id`.
    func acknowledgeAlert(app: String, id: Int64, now: Double) async throws -> RegressionAlert?
    /// Adds a webhook to `app` with a fresh secret; `nil` for an unknown app.
    /// - Throws: ``WebhookURLError`` when `url` is not an http or https URL (``WebhookURL``).
    func addWebhook(app: String, url: String, now: Double) async throws -> WebhookCredentials?
    /// `app`'s webhooks by id, without their secrets; `nil` for an unknown app.
    func webhooks(app: String) async throws -> [WebhookRecord]?
    /// Removes `app`'s webhook `id` and its deliveries; returns whether it existed.
    func removeWebhook(app: String, id: Int64) async throws -> Bool
    /// Pending deliveries of every app, oldest alert first, at most `limit`.
    func pendingDeliveries(limit: Int) async throws -> [PendingDelivery]
    /// Records the outcome of a delivery's attempts: its state, attempts made in all, and
    /// the last error (`nil` after a success).
    func recordDelivery(alert: Int64, webhook: Int64, state: DeliveryState, attempts: Int, lastError: String?, now: Double) async throws
}

extension CollectorStore {
    /// 10 000 events a call.
    public var retentionChunk: Int { 10_000 }

    /// Deletes nothing: for stores that keep no MetricKit payloads (test doubles).
    public func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int { 0 }

    /// From ``dimensionValues(app:dimension:from:to:)``, without visit counts (0), by value:
    /// for stores that cannot count (test doubles).
    public func topDimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double, search: String?,
                                   limit: Int) async throws -> [ValueVisits] {
        ValueVisits.matching(try await dimensionValues(app: app, dimension: dimension, from: from, to: to), search: search, limit: limit)
    }

    /// From ``tagValues(app:key:from:to:)``, without visit counts (0), by value: for stores
    /// that cannot count (test doubles).
    public func topTagValues(app: String, key: String, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits] {
        ValueVisits.matching(try await tagValues(app: app, key: key, from: from, to: to), search: search, limit: limit)
    }

    /// What `key` grants now, by the system clock.
    public func authenticate(key: String) async throws -> KeyGrant? {
        try await authenticate(key: key, now: Date().timeIntervalSince1970)
    }

    /// Stores one batch (a group of one).
    public func ingest(_ batch: IngestBatch) async throws -> IngestResult {
        let results = try await ingest([batch])
        return results.first ?? IngestResult(stored: 0, duplicate: false)
    }

    /// Per-screen reports over `query`'s time range and filters, by screen name.
    public func screens(app: String, query: ScreenQuery) async throws -> [ScreenSummary] {
        try await aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true))
            .map { ScreenSummary(screen: $0.screen ?? "", visits: $0.visits, devices: $0.rollup.devices.estimate, report: $0.report, motion: $0.motion) }
            .sorted { $0.screen < $1.screen }
    }
}

/// An app's identity and its three keys, as `framescope apps create` prints them once.
public struct AppCredentials: Sendable, Hashable, Codable {
    /// The app id (`demo`).
    public var app: String
    /// The app's name.
    public var name: String
    /// The write-only key for `POST /v1/events`.
    public var ingestKey: String
    /// The read key for queries and the dashboard.
    public var readKey: String
    /// The admin key for the app's settings (`PUT /v1/apps/{app}/thresholds`); it reads no data.
    public var adminKey: String
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

    /// An app record; see each property.
    public init(app: String, name: String, createdAt: String, revoked: Bool) {
        self.app = app
        self.name = name
        self.createdAt = createdAt
        self.revoked = revoked
    }
}

/// What a key allows.
public struct KeyGrant: Sendable, Hashable {
    /// The kinds of key.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// May send events, may not read.
        case ingest
        /// May read, may not send.
        case read
        /// May read and change the app's settings (thresholds), may not read data or send.
        case admin
    }
    /// The app the key belongs to.
    public var app: String
    /// Ingest, read or admin.
    public var kind: Kind

    /// A grant of `kind` for `app`.
    public init(app: String, kind: Kind) {
        self.app = app
        self.kind = kind
    }
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
    /// The installation's random id, when the batch carries one (for device counts).
    public var installationId: String?
    /// The valid events with their start times (Unix seconds).
    public var events: [(event: ScreenVisitEvent, startedAt: Double)]
    /// The original batch JSON per event, as stored raw.
    public var rawEvents: [String]
    /// When the collector received it, Unix seconds.
    public var receivedAt: Double
    /// The display's maximum refresh rate, in Hz, as the batch's device said.
    public var maxRefreshRate: Int = 60

    /// What the dimensions of `event` in this batch are read from (``QueryDimension/read``).
    public func facts(of event: ScreenVisitEvent) -> VisitFacts {
        VisitFacts(appVersion: appVersion, osVersion: osVersion, deviceModel: deviceModel, maxRefreshRate: maxRefreshRate, event: event)
    }

    /// The bytes the batch holds in memory, approximately: its events' JSON, in bytes.
    public var approximateBytes: Int {
        rawEvents.reduce(0) { $0 &+ $1.utf8.count }
    }
}

/// What storing a batch did.
public struct IngestResult: Sendable, Hashable {
    /// Events stored now (0 for a duplicate).
    public var stored: Int
    /// Whether the batch id had already been accepted.
    public var duplicate: Bool
    /// Values of each dimension (`screen`, `appVersion`, …) that were over the app's
    /// ``CardinalityLimits`` and stored as `(other)`.
    public var folded: [String: Int] = [:]

    /// A result.
    public init(stored: Int, duplicate: Bool, folded: [String: Int] = [:]) {
        self.stored = stored
        self.duplicate = duplicate
        self.folded = folded
    }
}

/// A screens query: time range and a filter per ``QueryDimension`` (absent = any value).
public struct ScreenQuery: Sendable, Hashable {
    /// Start of the range, Unix seconds (inclusive, rounded down to the hour).
    public var from: Double
    /// End of the range, Unix seconds (exclusive).
    public var to: Double
    /// The filters as text by dimension query name (`"true"`/`"false"` for a boolean).
    public private(set) var filters: [String: String] = [:]
    /// Only visits with this value of a declared tag (``DeclaredTags``), answered from the
    /// tag's rollups; `nil` for any.
    public var tag: TagFilter?

    /// A query over `[from, to)` with `filters`: a value per dimension (text; `"true"` or
    /// `"false"` for a boolean dimension), absent for any value.
    public init(from: Double, to: Double, _ filters: [QueryDimension: String] = [:]) {
        self.from = from
        self.to = to
        for (dimension, value) in filters { self[dimension] = value }
    }

    /// The filter on `dimension` as text (`"true"`/`"false"` for a boolean dimension), `nil`
    /// for any value; setting a boolean dimension to anything but `true` or `false` clears it.
    public subscript(dimension: QueryDimension) -> String? {
        get { filters[dimension.queryName] }
        set {
            if dimension.values == .boolean, let newValue, newValue != "true", newValue != "false" {
                filters[dimension.queryName] = nil
            } else {
                filters[dimension.queryName] = newValue
            }
        }
    }

    /// Whether any rollup dimension (not the screen) or a declared tag is filtered.
    public var filtersDimensions: Bool {
        tag != nil || QueryDimension.rollupDimensions.contains { self[$0] != nil }
    }

    /// The same query with one dimension fixed to `value` (`"true"`/`"false"` for a boolean dimension).
    public func fixing(_ dimension: QueryDimension, to value: String) -> ScreenQuery {
        var query = self
        query[dimension] = value
        return query
    }
}

/// The length of a time bucket in time series.
public enum BucketInterval: String, CaseIterable, Sendable, Codable, Hashable {
    /// One hour (3 600 s).
    case hour
    /// One UTC day (86 400 s).
    case day

    /// The bucket length in seconds.
    public var seconds: Double { self == .hour ? 3600 : 86_400 }

    /// The start of every bucket that overlaps `[from, to)`, in order (Unix seconds), at most `limit`.
    public func starts(from: Double, to: Double, limit: Int = 10_000) -> [Double] {
        var starts: [Double] = []
        var start = Double(RollupLevel.floor(Int64(from.rounded(.down)), to: Int64(seconds)))
        while start < to, starts.count < limit {
            starts.append(start)
            start += seconds
        }
        return starts
    }
}

/// What to merge the rollups of a ``ScreenQuery`` into: one group per combination of
/// the screen (if ``byScreen``), the time bucket (if ``interval``) and the value of
/// ``dimension`` (if set).
public struct AggregateQuery: Sendable, Hashable {
    /// Time range and filters.
    public var filter: ScreenQuery
    /// Group by screen.
    public var byScreen: Bool
    /// Group by time bucket of this length.
    public var interval: BucketInterval?
    /// Group by this dimension's value.
    public var dimension: QueryDimension?
    /// Group by the value of this declared tag key (``DeclaredTags``); the group's
    /// ``RollupAggregate/dimensionValue`` is the tag's value. Not with ``dimension``, nor
    /// with a filter on another tag key (one tag's rollups answer a query).
    public var tagKey: String?

    /// Creates an aggregate query.
    public init(filter: ScreenQuery, byScreen: Bool = false, interval: BucketInterval? = nil, dimension: QueryDimension? = nil,
                tagKey: String? = nil) {
        self.filter = filter
        self.byScreen = byScreen
        self.interval = interval
        self.dimension = dimension
        self.tagKey = tagKey
    }

    /// The declared tag whose rollups answer the query: the filtered one, else the one
    /// grouped by; `nil` when no tag is involved.
    public var tagRollup: String? { filter.tag?.key ?? tagKey }

    /// What is wrong with the query, in words that name the parameter, or `nil`: grouping
    /// by a tag while filtering on another tag, or by a tag and a dimension at once.
    public var problem: (field: String, message: String)? {
        guard let tagKey else { return nil }
        if dimension != nil { return ("by", "group by one dimension or one tag, not both") }
        if let filtered = filter.tag?.key, filtered != tagKey {
            return ("by", "a break-down by tag \(tagKey) cannot be filtered by another tag (\(filtered)): one tag's rollups answer a query")
        }
        return nil
    }
}

/// The merged rollups of one group of an ``AggregateQuery``.
public struct RollupAggregate: Sendable, Hashable {
    /// The screen, when grouped by screen.
    public var screen: String?
    /// The bucket's start, Unix seconds, when grouped by time.
    public var bucketStart: Double?
    /// The dimension's value, when grouped by a dimension.
    public var dimensionValue: String?
    /// The group's merged sums.
    public var rollup: RollupValue

    /// Creates a group.
    public init(screen: String?, bucketStart: Double?, dimensionValue: String?, rollup: RollupValue) {
        self.screen = screen
        self.bucketStart = bucketStart
        self.dimensionValue = dimensionValue
        self.rollup = rollup
    }

    /// Screen visits in the group.
    public var visits: Int { rollup.visits }
    /// The merge of the visits' whole reports.
    public var report: FrameReport { rollup.report }
    /// The merge of the visits' motion reports, `nil` when none moved.
    public var motion: FrameReport? { rollup.motion }
    /// Per-visit statistics.
    public var statistics: VisitStatistics { rollup.statistics }
}

/// One screen's merged figures over a query.
public struct ScreenSummary: Sendable, Hashable, Codable {
    /// The screen's name.
    public var screen: String
    /// Screen visits counted.
    public var visits: Int
    /// Estimated distinct devices the visits came from (``DeviceSketch``, ±5 %).
    public var devices: Int
    /// The merge of the visits' whole reports.
    public var report: FrameReport
    /// The merge of the visits' motion reports, or `nil` when none moved.
    public var motion: FrameReport?
}

/// A store that can take rollups without the visits they sum, for benchmarks over very
/// large data (`framescope bench queries`).
public protocol RollupBulkLoading: CollectorStore {
    /// Adds `values` (hourly keys) to every rollup level as if the visits they sum had been
    /// ingested, and `tagged` (the same visits by a declared tag's value) to that tag's rollups.
    func addRollups(app: String, hourly values: [RollupKey: RollupValue], tagged: [(tag: TagFilter, key: RollupKey, value: RollupValue)]) async throws
}

extension SQLiteStore: RollupBulkLoading {}

