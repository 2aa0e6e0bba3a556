import Foundation
import FramescopeCore
import FramescopeStore

/// Ingest: new batches as `INSERT … FORMAT RowBinary` into `events` (after their hangs and
/// their visits per sample rate), then their ledger rows: on one server a flush in one insert,
/// on a cluster each batch in one (one block, which a replicated table deduplicates on a retry).
extension ClickHouseStore {
    /// The columns of an `events` insert, in order (`hour` is computed by the server).
    static let eventColumns = ["app_id", "batch_id", "event_id", "started_at"] + QueryDimension.all.map(\.storeColumn)
        + ["tag_keys", "tag_values", "event_tag_keys", "event_tag_values", "device_key", "device_register", "device_rank",
           "event_counts", "event_sums", "event_mins", "event_maxes", "event_tally_keys", "event_tally_counts", "stability_band", "payload"]

    /// Appends one `events` row in ``eventColumns`` order.
    /// - Parameters:
    ///   - dimensionValues: Every ``QueryDimension``'s value, in registry order, as admitted.
    ///   - declaredTags: The app's declared tag keys and the visit's (admitted) values of them.
    ///   - eventTags: Every tag of the visit, for the export's tag filters.
    ///   - device: The installation's device sketch register and rank, or `nil` without one.
    static func appendEventRow(to rows: inout RowBinaryWriter, app: String, batchId: String, eventId: UInt64, startedAt: Double,
                               dimensionValues: [String], declaredTags: (keys: [String], values: [String]), eventTags: [(key: String, value: String)],
                               deviceKey: String, device: (index: Int, rank: UInt8)?, columns: VisitColumns, payload: String) {
        rows.append(app)
        rows.append(batchId)
        rows.append(eventId)
        rows.append(startedAt)
        for (dimension, value) in zip(QueryDimension.all, dimensionValues) {
            if dimension.values == .boolean { rows.append(UInt8(value == "true" ? 1 : 0)) } else { rows.append(value) }
        }
        rows.append(strings: declaredTags.keys)
        rows.append(strings: declaredTags.values)
        rows.append(strings: eventTags.map(\.key))
        rows.append(strings: eventTags.map(\.value))
        rows.append(deviceKey)
        rows.append(UInt16(device?.index ?? 0))
        rows.append(device?.rank ?? 0)
        rows.append(columns.counts)
        rows.append(columns.sums)
        rows.append(columns.mins)
        rows.append(columns.maxes)
        rows.append(columns.tallyKeys)
        rows.append(columns.tallyCounts)
        rows.append(columns.band)
        rows.append(payload)
    }

    /// How many batches of one flush are inserted at once.
    static let concurrentInserts = 8

    /// Reads the ledger for the flush's batch ids in one query, the apps' declared tags and
    /// the cardinality gate's days and windows, plans the flush (``IngestPlanner``: a batch
    /// id in the ledger, or earlier in `batches`, is a duplicate and writes nothing), then
    /// writes the values admitted first (so a retry folds exactly as the first attempt did),
    /// inserts the new batches and records them in the ledger. An event that starts outside
    /// 1970–2106 or whose report ClickHouse cannot keep refuses the flush before anything is
    /// written (``StoreError/invalidEvent(field:message:)``).
    ///
    /// Not one transaction: on a cluster, when the insert of one batch fails, the batches
    /// inserted before it stay stored and the error goes to the whole flush; their retries
    /// are then duplicates (ledger), and a batch whose insert wrote but answered an error is
    /// dropped by its shard's replicated table.
    public func ingest(_ batches: [IngestBatch]) async throws -> [IngestResult] {
        guard !batches.isEmpty else { return [] }
        let known = try await storedAlready(batches)
        var declared: [String: [String]] = [:]
        for batch in batches where declared[batch.app] == nil { declared[batch.app] = try await declaredTagKeyNames(app: batch.app) }
        var gate = ClickHouseCardinalityGate(limits: cardinality)
        try await gate.load(for: batches, declaredTags: declared, from: self)
        let plan = IngestPlanner.plan(batches, known: known, declaredTags: declared, ledger: gate.ledger)
        var inserts: [(rows: [UInt8], batch: IngestBatch, hangs: [HangRow])] = []
        for stored in plan.stored {
            let batch = stored.batch
            var rows = RowBinaryWriter()
            let device = batch.installationId.map { DeviceSketch.register(of: $0) }
            for planned in stored.events {
                let index = planned.index
                let (event, startedAt) = batch.events[index]
                guard startedAt >= 0, startedAt < 4_294_967_296 else {
                    throw StoreError.invalidEvent(field: "events[\(index)].startedAt", message: "is outside 1970–2106")
                }
                let columns: VisitColumns
                do { columns = try VisitColumns(visit: event) } catch {
                    throw StoreError.invalidEvent(field: "events[\(index)].report", message: error.message)
                }
                Self.appendEventRow(to: &rows, app: batch.app, batchId: batch.batchId, eventId: Self.eventId(app: batch.app, batch: batch.batchId, index: index),
                                    startedAt: startedAt, dimensionValues: planned.dimensionValues, declaredTags: (stored.tagKeys, planned.tagValues),
                                    eventTags: event.context.tags.sorted { $0.key < $1.key }, deviceKey: batch.installationId ?? batch.batchId,
                                    device: device, columns: columns, payload: batch.rawEvents[index])
            }
            inserts.append((rows.bytes, batch, stored.hangRows))
        }
        let results = plan.results
        try await ClickHouseCardinalityGate.record(plan.admitted, into: self)
        if topology.cluster == nil {
            // One server: the flush is one insert, its ledger rows a second. A retry is
            // caught by the ledger; only a failure after the rows were written and before
            // the ledger was (a crash, a lost answer) could count a batch twice.
            // Hangs first: a failure after them and before the events leaves hangs that
            // the retry inserts again, which FINAL reads once; never visits without hangs.
            for (app, stored) in Dictionary(grouping: inserts, by: \.batch.app) {
                try await insertHangs(stored.flatMap(\.hangs), app: app)
            }
            // Visits per sample rate too: a retry inserts them again, which FINAL reads once.
            try await insertSampleRates(inserts.map(\.batch))
            let rows = inserts.reduce(into: [UInt8]()) { $0 += $1.rows }
            if !rows.isEmpty {
                try await client.insert(into: "events", columns: Self.eventColumns, rows: rows, settings: insertSettings)
            }
            try await recordInLedger(inserts.map(\.batch))
            return results
        }
        // A cluster: each batch is one block, which its shard's replicated table drops when
        // a retry sends it again, so not even a batch written before an error counts twice.
        try await withThrowingTaskGroup(of: Void.self) { group in
            var running = 0
            for insert in inserts {
                if running == Self.concurrentInserts {
                    try await group.next()
                    running -= 1
                }
                group.addTask {
                    try await self.insertHangs(insert.hangs, app: insert.batch.app)
                    try await self.insertSampleRates([insert.batch])
                    if !insert.rows.isEmpty {
                        try await self.client.insert(into: "events", columns: Self.eventColumns, rows: insert.rows, settings: self.insertSettings)
                    }
                    try await self.recordInLedger([insert.batch])
                }
                running += 1
            }
            try await group.waitForAll()
        }
        return results
    }

    /// Records `batches` in the ledger, in one insert. Each row carries the time it was
    /// written (`recorded_at`), so that a cluster's replicated ledger never takes a second
    /// record of a batch for a retried block and drops it.
    func recordInLedger(_ batches: [IngestBatch]) async throws {
        guard !batches.isEmpty else { return }
        let recordedAt = Date().timeIntervalSince1970
        var ledger = RowBinaryWriter()
        for batch in batches {
            ledger.append(batch.app)
            ledger.append(batch.batchId)
            ledger.append(batch.receivedAt)
            ledger.append(UInt32(clamping: batch.events.count))
            ledger.append(recordedAt)
        }
        try await client.insert(into: "batches", columns: ["app_id", "batch_id", "received_at", "events", "recorded_at"], rows: ledger.bytes,
                                settings: insertSettings)
    }

    /// Which of `batches` (app, batch id) are stored already: those the ledger holds, and
    /// those whose events are in `events` without a ledger row (an insert that wrote but
    /// answered an error or timed out, a ledger insert that failed after the events', a
    /// collector that died between the two), read from the batches' own hours only. The
    /// latter get their ledger rows now, so each is counted once, never twice.
    func storedAlready(_ batches: [IngestBatch]) async throws -> Set<[String]> {
        guard !batches.isEmpty else { return [] }
        var known: Set<[String]> = []
        for chunk in stride(from: 0, to: batches.count, by: 500) {
            let part = Array(batches[chunk..<min(chunk + 500, batches.count)])
            let list = part.map { "(\(Self.quote($0.app)), \(Self.quote($0.batchId)))" }.joined(separator: ", ")
            let ledger = Set(try await client.rows("SELECT DISTINCT app_id, batch_id FROM batches WHERE (app_id, batch_id) IN (\(list))").filter { $0.count == 2 })
            known.formUnion(ledger)
            let open = part.filter { !ledger.contains([$0.app, $0.batchId]) && !$0.events.isEmpty }
            guard !open.isEmpty else { continue }
            var hours: Set<Int64> = []
            for batch in open { for (_, start) in batch.events where start >= 0 && start < 4_294_967_296 { hours.insert(Int64(start / 3600) * 3600) } }
            let apps = Set(open.map(\.app)).sorted().map(Self.quote).joined(separator: ", ")
            let hourList = hours.sorted().map { "toDateTime(\($0), 'UTC')" }.joined(separator: ", ")
            let openList = open.map { "(\(Self.quote($0.app)), \(Self.quote($0.batchId)))" }.joined(separator: ", ")
            let written = Set(try await client.rows("""
                SELECT DISTINCT app_id, batch_id FROM events WHERE app_id IN (\(apps)) AND hour IN (\(hourList)) AND (app_id, batch_id) IN (\(openList))
                """).filter { $0.count == 2 })
            guard !written.isEmpty else { continue }
            known.formUnion(written)
            try await recordInLedger(open.filter { written.contains([$0.app, $0.batchId]) })
        }
        return known
    }

    /// A raw event's id: the app, the batch id and the event's place in it, hashed (FNV-1a,
    /// 63 bits): the same on every retry, so the block stays byte-identical.
    static func eventId(app: String, batch: String, index: Int) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(app.utf8) + [0] + Array(batch.utf8) + [0] + Array(String(index).utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash & UInt64(Int64.max)
    }
}

extension RowBinaryWriter {
    /// Appends an `Array(String)`.
    mutating func append(strings values: [String]) {
        appendLength(values.count)
        for value in values { append(value) }
    }
}

/// The distinct values each app has used per UTC day and dimension (or declared tag), and
/// across the cardinality window, as one flush sees them.
///
/// The days: read once per flush for the days its batches touch from `dimension_values`,
/// extended as values are admitted, and the new ones written back before the events. The
/// window (``CardinalityLimits/window``: every day the ledger keeps): only for the values
/// new for their day in this flush, per app, how many distinct values each of their
/// dimensions has on any day of the ledger, and which of those values are among them (two
/// queries); a flush whose values are all known for their days reads nothing more. Several
/// collectors admit concurrently without a lock, so on a busy day a limit can be passed by
/// the values admitted in one instant (docs/decisions.md).
struct ClickHouseCardinalityGate {
    /// The decisions, and what the flush has read.
    private(set) var ledger: CardinalityLedger

    /// Values folded into `(other)` in this flush, per app and dimension name.
    var folded: [String: [String: Int]] { ledger.folded }

    var limits: CardinalityLimits { ledger.limits }

    init(limits: CardinalityLimits) {
        ledger = CardinalityLedger(limits: limits)
    }

    /// The UTC day of a start time (Unix seconds) as the ledger keys it, or `nil` outside
    /// what `UInt32` holds.
    static func day(of startedAt: Double) -> UInt32? {
        guard startedAt >= 0, startedAt < 4_294_967_296 else { return nil }
        return UInt32(startedAt / 86_400) * 86_400
    }

    /// Reads the known values of every app and day the batches' events touch, then the
    /// window of each app and dimension that has a value new for its day.
    /// - Parameter declaredTags: Each app's declared tag keys (their values are gated too).
    mutating func load(for batches: [IngestBatch], declaredTags: [String: [String]] = [:], from store: ClickHouseStore) async throws {
        var days: [String: Set<UInt32>] = [:]
        for batch in batches {
            for (_, startedAt, _) in batch.gated {
                if let day = Self.day(of: startedAt) { days[batch.app, default: []].insert(day) }
            }
        }
        try await loadDays(days, from: store)
        // Only the dimensions with a value not yet used on its day need the window.
        var needed: [String: [String: Set<StoredText>]] = [:]
        let windowed = QueryDimension.all.filter { limits.windowLimit($0) != nil }
        for batch in batches {
            let tagKeys = declaredTags[batch.app] ?? []
            for (facts, startedAt, tags) in batch.gated {
                guard let day = Self.day(of: startedAt) else { continue }
                var values = windowed.map { ($0.queryName, $0.read(facts)) }
                if let tags { values += tagKeys.map { (DeclaredTags.parameterPrefix + $0, DeclaredTags.value(of: $0, in: tags)) } }
                for (name, value) in values where !ledger.isKnown(value, for: CardinalityLedger.Key(app: batch.app, day: Int64(day), name: name)) {
                    needed[batch.app, default: [:]][name, default: []].insert(StoredText(value))
                }
            }
        }
        try await loadWindows(needed, from: store)
    }

    /// Reads the known values of the days `records` (MetricKit payloads of `app`) end on,
    /// then the window of each dimension that has a value new for its day.
    mutating func load(metricKit records: [MetricKitRecord], app: String, from store: ClickHouseStore) async throws {
        guard !records.isEmpty else { return }
        try await loadDays([app: Set(records.compactMap { Self.day(of: $0.end) })], from: store)
        var needed: [String: Set<StoredText>] = [:]
        for record in records {
            guard let day = Self.day(of: record.end) else { continue }
            for (dimension, path) in MetricKitRecord.gatedDimensions where !record[keyPath: path].isEmpty
                && !ledger.isKnown(record[keyPath: path], for: CardinalityLedger.Key(app: app, day: Int64(day), name: dimension.queryName)) {
                needed[dimension.queryName, default: []].insert(StoredText(record[keyPath: path]))
            }
        }
        try await loadWindows([app: needed], from: store)
    }

    /// Reads the known values of each app's `days` (UTC day starts).
    mutating func loadDays(_ days: [String: Set<UInt32>], from store: ClickHouseStore) async throws {
        for (app, appDays) in days.sorted(by: { $0.key < $1.key }) {
            for day in appDays {
                for dimension in QueryDimension.all where limits.limit(dimension) != nil {
                    ledger.load([], for: CardinalityLedger.Key(app: app, day: Int64(day), name: dimension.queryName))
                }
            }
            let list = appDays.sorted().map(String.init).joined(separator: ", ")
            let rows = try await store.client.rows("SELECT day, dimension, value FROM dimension_values WHERE app_id = \(ClickHouseStore.quote(app)) AND day IN (\(list))")
            for row in rows where row.count == 3 {
                guard let day = UInt32(row[0]) else { continue }
                ledger.load([StoredText(row[2])], for: CardinalityLedger.Key(app: app, day: Int64(day), name: row[1]))
            }
        }
    }

    /// Candidates per app past which the window's whole value sets are read instead (at most
    /// the window limits' worth of rows) of the candidates looked up 500 at a time.
    static let candidateLookups = 2_000

    /// Reads, per app, for each dimension with `candidates` (values new for their day): how
    /// many distinct values it has on every day the ledger holds, and which candidates are
    /// among them (in lists of at most 500, so a statement stays far below max_query_size),
    /// or, past ``candidateLookups`` candidates, its whole set of values.
    mutating func loadWindows(_ candidates: [String: [String: Set<StoredText>]], from store: ClickHouseStore) async throws {
        for (app, dimensions) in candidates.sorted(by: { $0.key < $1.key }) where !dimensions.isEmpty {
            let names = dimensions.keys.sorted()
            var window = Dictionary(uniqueKeysWithValues: names.map { ($0, CardinalityLedger.Window(count: 0, members: [])) })
            defer { for (name, loaded) in window { ledger.setWindow(loaded, app: app, name: name) } }
            let quotedApp = ClickHouseStore.quote(app)
            let nameList = names.map(ClickHouseStore.quote).joined(separator: ", ")
            if dimensions.values.reduce(0, { $0 + $1.count }) > Self.candidateLookups {
                let rows = try await store.client.rows("""
                    SELECT dimension, value FROM dimension_values WHERE app_id = \(quotedApp) AND dimension IN (\(nameList)) GROUP BY dimension, value
                    """)
                for row in rows where row.count == 2 {
                    window[row[0]]?.members.insert(StoredText(row[1]))
                }
                for name in names {
                    let count = window[name]?.members.count ?? 0
                    window[name]?.count = count
                }
                continue
            }
            let counts = try await store.client.rows("""
                SELECT dimension, uniqExact(value) FROM dimension_values WHERE app_id = \(quotedApp)
                AND dimension IN (\(nameList)) GROUP BY dimension
                """)
            for row in counts where row.count == 2 {
                window[row[0]]?.count = Int(row[1]) ?? 0
            }
            let pairs = names.flatMap { name in (dimensions[name] ?? []).map { "(\(ClickHouseStore.quote(name)), \(ClickHouseStore.quote($0.text)))" } }
            for start in stride(from: 0, to: pairs.count, by: 500) {
                let list = pairs[start..<min(start + 500, pairs.count)].joined(separator: ", ")
                let rows = try await store.client.rows("""
                    SELECT DISTINCT dimension, value FROM dimension_values WHERE app_id = \(quotedApp) AND (dimension, value) IN (\(list))
                    """)
                for row in rows where row.count == 2 {
                    window[row[0]]?.members.insert(StoredText(row[1]))
                }
            }
        }
    }

    /// `value` when ``CardinalityLedger`` admits it for its day, else `(other)`.
    mutating func admit(_ value: String, app: String, day: UInt32, dimension: QueryDimension) -> String {
        ledger.admit(value, app: app, day: Int64(day), dimension: dimension)
    }

    /// Writes the values admitted in this flush (``CardinalityLedger/admitted``), in one insert.
    func record(into store: ClickHouseStore) async throws {
        try await Self.record(ledger.admitted, into: store)
    }

    /// Writes `admitted` (values new for their day), in one insert.
    static func record(_ admitted: [(key: CardinalityLedger.Key, value: String)], into store: ClickHouseStore) async throws {
        guard !admitted.isEmpty else { return }
        var rows = RowBinaryWriter()
        for (key, value) in admitted {
            rows.append(key.app)
            rows.append(UInt32(clamping: key.day))
            rows.append(key.name)
            rows.append(value)
        }
        try await store.client.insert(into: "dimension_values", columns: ["app_id", "day", "dimension", "value"], rows: rows.bytes, settings: store.insertSettings)
    }
}
