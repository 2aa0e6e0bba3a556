import Foundation
import FramescopeCore

/// Apps, their keys and dashboard sessions: who may do what (``KeyGrant``).
public protocol AppAccess: Sendable {
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
}

/// Screen visits in and raw events out: the group commit's one write (``ingest(_:)``),
/// the export's reads and the retention sweep's deletes.
public protocol EventStore: Sendable {
    /// Stores the batches' valid events and adds them to the rollups, all in one
    /// transaction (one flush of the group commit), and returns one result per batch in
    /// order. A batch id already stored for its app — before or earlier in `batches` —
    /// is not stored again.
    func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult]
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
}

/// The pre-aggregated visits (rollups) and the values a filter menu lists. Reads go
/// through one door, ``CollectorQueries``, for the query API and the dashboard alike.
public protocol RollupReader: Sendable {
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
    /// The values of the declared tag `key` that have data for `app` on the UTC days that
    /// `[from, to)` touches, sorted (for filter menus).
    func tagValues(app: String, key: String, from: Double, to: Double) async throws -> [String]
    /// The values of the declared tag `key` as ``topDimensionValues(app:dimension:from:to:search:limit:)``
    /// gives a dimension's: most visits first, matching `search`, at most `limit`.
    func topTagValues(app: String, key: String, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits]
}

/// What an app sets: its declared tag keys and its thresholds.
public protocol SettingsStore: Sendable {
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
    /// The thresholds `app` set (bands and verdict rules; what it did not set is absent
    /// and takes its default), or `nil` for an unknown app.
    func thresholds(app: String) async throws -> AppThresholds?
    /// Replaces `app`'s thresholds with `thresholds`; returns `false` for an unknown app.
    /// - Throws: ``ThresholdError`` naming the field when a value is not physical
    ///   (``AppThresholds/problem()``); nothing is stored then.
    func setThresholds(_ thresholds: AppThresholds, app: String) async throws -> Bool
}

/// Regression alerts, the app's webhooks and their deliveries.
public protocol AlertStore: Sendable {
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

/// Apple's MetricKit payloads, beside Framescope's own figures.
public protocol MetricKitStore: Sendable {
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
}

/// Hangs with their signatures and stacks (issue 33): written by ``EventStore/ingest(_:)``
/// in the same transaction as their visits, read as groups, swept with the raw events.
public protocol HangStore: Sendable {
    /// `app`'s hangs from `source` that began in `query`'s range and match its dimension
    /// and tag filters, grouped by signature, by total hang time (longest first, then
    /// signature): at most `limit` groups whose dominant image is not in `mergeable`
    /// (nothing can merge them), followed by at most ``HangsResponse/maximumLimit`` groups
    /// whose dominant image is (the images with uploaded symbols, whose groups may merge by
    /// function). Each group's screens and versions are listed by hangs (``HangGroup/byHangs(_:)``)
    /// and its stack is ``HangGroup/representative(of:)`` of its ``HangGroup/candidateCount``
    /// longest hangs (then by key). A store reads each group's candidates through an index
    /// on signature and length, so a request costs what it answers, not the app's every hang.
    func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int, mergeable: Set<String>) async throws -> [HangGroup]
    /// Hangs stored for `app` (for retention and tests).
    func hangCount(app: String) async throws -> Int
    /// Deletes hangs that began before `cutoff` (Unix seconds), at most `limit` of them;
    /// returns how many were deleted (the retention sweep, with the raw events' cutoff).
    func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int
}

extension HangStore {
    /// `app`'s `limit` groups with the most hang time, none read as mergeable: as
    /// ``hangGroups(app:query:source:limit:mergeable:)`` with no image's symbols uploaded.
    public func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int) async throws -> [HangGroup] {
        try await hangGroups(app: app, query: query, source: source, limit: limit, mergeable: [])
    }
}

/// How many screen visits arrived at each sample rate (issue 35: ``EventBatch/sampleRate``,
/// kept in parts per million, ``SampleRate``), per app and UTC day: written by
/// ``EventStore/ingest(_:)`` with the visits (once per batch, behind the batch ledger), read to
/// say which rates the figures come from, swept with the raw events.
public protocol SampleRateStore: Sendable {
    /// `app`'s screen visits per sample rate on the UTC days that `[from, to)` (Unix seconds)
    /// touches, by rate (lowest first); a rate without visits is left out.
    func sampleRates(app: String, from: Double, to: Double) async throws -> [SampleRateVisits]
    /// Deletes the counts of the UTC days that ended by `cutoff` (Unix seconds; the raw
    /// events' retention cutoff), whose raw events are all gone then; returns how many
    /// (app, day, rate) counts went (on ClickHouse, the per-batch rows of those days).
    func deleteSampleRates(before cutoff: Double) async throws -> Int
}

/// The symbol tables of an app's builds (issue 33), by image id.
public protocol SymbolStore: Sendable {
    /// Stores `images`' symbols for `app` at `now` (Unix seconds), replacing an image's
    /// earlier upload.
    func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws
    /// What `app` has uploaded, by image name then id.
    func symbolImages(app: String) async throws -> [SymbolImageRecord]
    /// The symbols of `app`'s images among `ids`, by id (an image without an upload is
    /// absent): whole tables, however they are stored.
    func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob]
    /// The index of each of `app`'s images among `ids` whose table is stored in chunks
    /// (``SymbolTableIndex``), by id; an image without an upload, or whose table is stored
    /// whole (uploaded before the store kept chunks), is absent. A short read: about 8 bytes
    /// per 256 symbols, never the table.
    func symbolIndexes(app: String, ids: Set<String>) async throws -> [String: SymbolTableIndex]
    /// The chunks numbered `chunks` of `app`'s image `id`'s table stored in chunks, each a
    /// table of its own, by number; a chunk not stored is absent. Reads those chunks only.
    func symbolChunks(app: String, id: String, chunks: Set<Int>) async throws -> [Int: SymbolTableBlob]
}

extension SymbolStore {
    /// No table is stored in chunks: a store (or a test's stand-in) that keeps tables whole.
    public func symbolIndexes(app: String, ids: Set<String>) async throws -> [String: SymbolTableIndex] { [:] }
    /// No chunk is stored.
    public func symbolChunks(app: String, id: String, chunks: Set<Int>) async throws -> [Int: SymbolTableBlob] { [:] }
}

/// One image whose symbols an app uploaded.
public struct SymbolImageRecord: Codable, Sendable, Hashable {
    /// The image's build identity.
    public var id: String
    /// Its file name.
    public var name: String
    /// Its architecture.
    public var arch: String
    /// How many symbols.
    public var symbols: Int
    /// When they were uploaded, ISO 8601 in UTC.
    public var uploadedAt: String

    /// Creates a record.
    public init(id: String, name: String, arch: String, symbols: Int, uploadedAt: String) {
        self.id = id
        self.name = name
        self.arch = arch
        self.symbols = symbols
        self.uploadedAt = uploadedAt
    }
}
