import Foundation
import FramescopeCore
import FramescopeStore

/// MetricKit payloads as control records of kind `metrickit` (app = its id, id = the
/// record's digest), never deleted: the digest as id makes a body sent twice one record.
/// Summaries are computed here from the app's records, as SQLite's `GROUP BY app_version`.
extension ClickHouseStore {
    /// One MetricKit payload as stored (``MetricKitRecord`` without its digest, which is the
    /// record's id). Times are Unix seconds; a figure that is not finite is stored as
    /// `nil` where it is optional, else as 0 (NaN) or the largest finite value (±infinity).
    struct StoredMetricKit: Codable, Sendable {
        /// When the collector received it.
        var receivedAt: Double
        /// `timeStampBegin`, when the payload has one.
        var begin: Double?
        /// `timeStampEnd` (the receipt time when the payload has none).
        var end: Double
        /// Who sent it.
        var appVersion, osVersion, deviceModel: String
        /// `scrollHitchTimeRatio`, ms per s.
        var scrollHitchTimeRatio: Double?
        /// Hang diagnostics in the payload.
        var hangDiagnostics: Int
        /// Their durations together, and the longest, in seconds.
        var hangTime, longestHang: Double
        /// Hangs counted by the hang-time histogram.
        var histogramHangs: Int

        /// The stored form of `record`.
        init(_ record: MetricKitRecord) {
            receivedAt = StoredMetricKit.storable(record.receivedAt)
            begin = ClickHouseStore.finite(record.begin)
            end = StoredMetricKit.storable(record.end)
            appVersion = record.appVersion
            osVersion = record.osVersion
            deviceModel = record.deviceModel
            scrollHitchTimeRatio = ClickHouseStore.finite(record.scrollHitchTimeRatio)
            hangDiagnostics = record.hangDiagnostics
            hangTime = StoredMetricKit.storable(record.hangTime)
            longestHang = StoredMetricKit.storable(record.longestHang)
            histogramHangs = record.histogramHangs
        }

        /// `value` as JSON can hold it: 0 for NaN, ±infinity as the largest finite value.
        static func storable(_ value: Double) -> Double {
            value.isNaN ? 0 : max(-Double.greatestFiniteMagnitude, min(value, Double.greatestFiniteMagnitude))
        }
    }

    /// Stores the records whose digest `app` has not stored yet (nor earlier in `records`),
    /// in one insert; returns how many. The digests are looked up first, 200 a query. The
    /// new records' app version, OS version and device model pass the cardinality gate of
    /// the day their payload ends (``ClickHouseCardinalityGate``, the events' daily and
    /// window limits: a value past them is stored as `(other)`), whose new values are
    /// recorded before the records.
    public func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int {
        var seen = Set<String>()
        for chunk in stride(from: 0, to: records.count, by: 200).map({ Array(records[$0..<min($0 + 200, records.count)]) }) {
            let ids = chunk.map { Self.quote($0.digest) }.joined(separator: ", ")
            let sql = "SELECT id FROM control WHERE kind = \(Self.quote("metrickit")) AND app_id = \(Self.quote(app)) AND id IN (\(ids))"
                + " GROUP BY id HAVING argMax(deleted, version) = 0"
            for row in try await client.rows(sql) { if let id = row.first { seen.insert(id) } }
        }
        var new: [MetricKitRecord] = []
        for record in records where !seen.contains(record.digest) {
            seen.insert(record.digest)
            new.append(record)
        }
        var gate = ClickHouseCardinalityGate(limits: cardinality)
        try await gate.load(metricKit: new, app: app, from: self)
        for index in new.indices {
            guard let day = ClickHouseCardinalityGate.day(of: new[index].end) else { continue }
            for (dimension, path) in MetricKitRecord.gatedDimensions where !new[index][keyPath: path].isEmpty {
                new[index][keyPath: path] = gate.admit(new[index][keyPath: path], app: app, day: day, dimension: dimension)
            }
        }
        try await gate.record(into: self)
        // The hang rows first: a retry after a failure below inserts them again, and the
        // table keeps one per key.
        try await insertHangs(new.flatMap(\.hangRows), app: app)
        try await putControl("metrickit", new.map { (app: app, id: $0.digest, value: Optional(StoredMetricKit($0))) })
        return new.count
    }

    /// Deletes the MetricKit records (every version) whose payload ended before `cutoff`
    /// (Unix seconds), with one mutation of `control` run only when there is one, and waits
    /// until it is done; returns how many. Deleting in one mutation is cheapest here, so
    /// `limit` is not applied (as ``deleteRawEvents(startedBefore:limit:)`` drops whole
    /// partitions).
    public func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int {
        let condition = "kind = \(Self.quote("metrickit")) AND deleted = 0 AND visitParamExtractFloat(body, 'end') < \(Self.number(cutoff))"
        let old = try await count("control", where: condition)
        guard old > 0 else { return 0 }
        try await deleteRows("control", where: condition)
        return old
    }

    /// Apple's figures per app version over `app`'s payloads whose end is in
    /// `[query.from, query.to)` (Unix seconds), filtered by the query's app version, OS
    /// version and device model; by version (bytewise), at most 1,000 versions.
    public func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary] {
        let filters = [(QueryDimension.appVersion, \StoredMetricKit.appVersion), (.osVersion, \.osVersion), (.deviceModel, \.deviceModel)]
            .compactMap { dimension, path in query[dimension].map { (value: $0, path: path) } }
        var groups: [String: VersionTotals] = [:]
        for row in try await control(StoredMetricKit.self, "metrickit", app: app) {
            let payload = row.value
            guard payload.end >= query.from, payload.end < query.to, filters.allSatisfy({ payload[keyPath: $0.path] == $0.value }) else { continue }
            groups[payload.appVersion, default: VersionTotals()].add(payload)
        }
        return groups.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.prefix(1000).map { version, totals in
            MetricKitVersionSummary(
                appVersion: version, payloads: totals.payloads, scrollHitchTimeRatioPayloads: totals.ratioPayloads,
                scrollHitchTimeRatio: totals.ratioPayloads > 0 ? totals.ratioSum / Double(totals.ratioPayloads) : nil,
                hangDiagnostics: MetricKitVersionSummary.clampedCount(totals.hangDiagnostics), hangTime: totals.hangTime,
                longestHang: totals.longestHang, histogramHangs: MetricKitVersionSummary.clampedCount(totals.histogramHangs))
        }
    }

    /// One app version's sums, as SQLite's `COUNT`, `AVG`, `TOTAL` and `MAX` make them
    /// (counts summed as `Double`, so no sum overflows).
    struct VersionTotals {
        /// Payloads, and those with a scroll hitch time ratio.
        var payloads = 0, ratioPayloads = 0
        /// The ratios' sum, ms per s.
        var ratioSum = 0.0
        /// Hang diagnostics and histogram hangs, summed.
        var hangDiagnostics = 0.0, histogramHangs = 0.0
        /// Hang time summed, and the longest hang, in seconds.
        var hangTime = 0.0, longestHang = 0.0

        /// Adds one payload.
        mutating func add(_ payload: StoredMetricKit) {
            payloads += 1
            if let ratio = payload.scrollHitchTimeRatio {
                ratioPayloads += 1
                ratioSum += ratio
            }
            hangDiagnostics += Double(payload.hangDiagnostics)
            histogramHangs += Double(payload.histogramHangs)
            hangTime += payload.hangTime
            longestHang = payloads == 1 ? payload.longestHang : max(longestHang, payload.longestHang)
        }
    }
}
