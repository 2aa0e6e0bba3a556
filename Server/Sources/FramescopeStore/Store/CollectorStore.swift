import Foundation
import FramescopeCore

/// What the collector needs from storage: every role at once. `SQLiteStore` is the
/// embedded default (on a file, or in memory), `ClickHouseStore` the one for more than one
/// machine; every store runs the same contract suite,
/// `Tests/FramescopeCollectorTests/StoreContractTests.swift`, which a new store joins by
/// adding itself to the suite's list of kinds.
///
/// A consumer asks only for the roles it uses (`CollectorStore+Roles.swift`): the group
/// commit an ``EventStore``, the authenticators an ``AppAccess``, the queries a
/// ``RollupReader``, so a test double implements one role, not the whole store.
public protocol CollectorStore: AppAccess, EventStore, RollupReader, SettingsStore, AlertStore, MetricKitStore, HangStore, SymbolStore,
    SampleRateStore {}

extension EventStore {
    /// 10 000 events a call.
    public var retentionChunk: Int { 10_000 }

    /// Stores one batch (a group of one).
    public func ingest(_ batch: IngestBatch) async throws -> IngestResult {
        let results = try await ingest([batch])
        return results.first ?? IngestResult(stored: 0, duplicate: false)
    }
}

extension RollupReader {
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

    /// Per-screen reports over `query`'s time range and filters, by screen name.
    public func screens(app: String, query: ScreenQuery) async throws -> [ScreenSummary] {
        try await aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true))
            .map { ScreenSummary(screen: $0.screen ?? "", visits: $0.visits, devices: $0.rollup.devices.estimate, report: $0.report, motion: $0.motion) }
            .sorted { $0.screen < $1.screen }
    }
}

extension AppAccess {
    /// What `key` grants now, by the system clock.
    public func authenticate(key: String) async throws -> KeyGrant? {
        try await authenticate(key: key, now: Date().timeIntervalSince1970)
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
    /// The share of installations that measure, as the batch said (``EventBatch/sampleRate``;
    /// 1 when absent), in parts per million (``SampleRate``): 1…1 000 000.
    public var sampleRatePPM: Int = SampleRate.full
    /// The valid fatal hangs with their start times (Unix seconds).
    public var fatalHangs: [(event: FatalHangEvent, startedAt: Double)] = []
    /// Hang stacks the validator left out of the events above (answered, never stored).
    public var stacksDropped: [RejectedEvent] = []
    /// The symbol tables of the app images the stacks name, by image id, where uploaded:
    /// hang signatures are then chosen per function (``HangSummary``).
    public var symbolTables: [String: SymbolTableBlob] = [:]
    /// Each hang's summary, computed before the write transaction (``summarizeHangs()``):
    /// per event of ``events``, per hang, `nil` for a hang without a stack or an idle one;
    /// `nil` until computed, when the stores compute them as they write (``IngestPlan/Batch/hangRows``).
    public var visitHangSummaries: [[HangSummary?]]?
    /// Each fatal hang's summary (``fatalHangs``, in order), computed with ``visitHangSummaries``.
    public var fatalHangSummaries: [HangSummary]?

    /// A batch of `events` (with their start times, Unix seconds) and their stored JSON
    /// (`rawEvents`, one per event) for `app`, received at `receivedAt` (Unix seconds); the
    /// other fields start at their defaults.
    public init(app: String, batchId: String, appVersion: String, osVersion: String, deviceModel: String, installationId: String? = nil,
                events: [(event: ScreenVisitEvent, startedAt: Double)], rawEvents: [String], receivedAt: Double) {
        self.app = app
        self.batchId = batchId
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.installationId = installationId
        self.events = events
        self.rawEvents = rawEvents
        self.receivedAt = receivedAt
    }

    /// Computes every hang's summary (``HangSummary``, O(samples × depth) each, up to 32
    /// stacks of 50 × 256 frames a visit) with ``symbolTables``, so that the store's write
    /// transaction, which every other request's batch waits for, does not (issue 43, item 1).
    public mutating func summarizeHangs() {
        let tables = symbolTables
        visitHangSummaries = events.map { entry in
            entry.event.hangs.map { hang in
                guard hang.idle != true, let stack = hang.stack else { return nil }
                return HangSummary(stack, symbols: tables)
            }
        }
        fatalHangSummaries = fatalHangs.map { entry in entry.event.stack.map { HangSummary($0, symbols: tables) } ?? .withoutStack }
    }

    /// The app's images that the batch's hang stacks name, by id, with the offsets their
    /// frames are looked up at (``HangStack/addLookups(to:where:)``).
    public var stackedAppLookups: [String: Set<UInt64>] {
        var lookups: [String: Set<UInt64>] = [:]
        for (event, _) in events {
            for hang in event.hangs { hang.stack?.addLookups(to: &lookups, where: \.app) }
        }
        for (fatal, _) in fatalHangs { fatal.stack?.addLookups(to: &lookups, where: \.app) }
        return lookups
    }

    /// What the dimensions of a fatal hang in this batch are read from: its own screen,
    /// context, app and OS versions, the batch's device.
    public func facts(of fatalHang: FatalHangEvent) -> VisitFacts {
        // The visit the facts name has the hang's screen and context and no frames; only
        // they are read from it.
        let carrier = ScreenVisitEvent(screen: fatalHang.screen, startedAt: fatalHang.startedAt, duration: fatalHang.duration,
                                       context: fatalHang.context, report: FrameReport(), motion: nil)
        return VisitFacts(appVersion: fatalHang.appVersion, osVersion: fatalHang.osVersion, deviceModel: deviceModel,
                          maxRefreshRate: maxRefreshRate, event: carrier)
    }

    /// Everything the cardinality gate admits values of, with its start: the visits, with
    /// their tags (declared tags are gated), then the fatal hangs, without (they add to no
    /// tag rollup).
    public var gated: [(facts: VisitFacts, startedAt: Double, tags: [String: String]?)] {
        events.map { (facts(of: $0.event), $0.startedAt, $0.event.context.tags) }
            + fatalHangs.map { (facts(of: $0.event), $0.startedAt, nil) }
    }

    /// What the dimensions of `event` in this batch are read from (``QueryDimension/read``).
    public func facts(of event: ScreenVisitEvent) -> VisitFacts {
        VisitFacts(appVersion: appVersion, osVersion: osVersion, deviceModel: deviceModel, maxRefreshRate: maxRefreshRate, event: event)
    }

    /// The bytes the batch holds in memory, approximately: its events' JSON, plus its
    /// hangs' stacks (which the raw events leave out) at about their JSON size, in bytes.
    public var approximateBytes: Int {
        var bytes = rawEvents.reduce(0) { $0 &+ $1.utf8.count }
        func add(_ stack: HangStack?) {
            guard let stack else { return }
            bytes &+= stack.images.count &* 128 &+ stack.frames.count &* 24
            for sample in stack.samples { bytes &+= 16 &+ sample.frames.count &* 6 }
        }
        for (event, _) in events {
            for hang in event.hangs { add(hang.stack) }
        }
        for (fatal, _) in fatalHangs { bytes &+= 512; add(fatal.stack) }
        return bytes
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


