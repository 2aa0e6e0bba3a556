import Foundation
import FramescopeCollector
import FramescopeCore

/// Rollups for benchmarks over very large data, written without the visits they sum.
extension ClickHouseStore: RollupBulkLoading {
    /// Writes each hourly value as one `events` row standing for all its visits (the
    /// materialized views add it to every level as if the visits had come one by one), in
    /// one insert; with `tagged`, each key's row carries its declared tag's value (one tag
    /// row per key, as the benchmark builds them; values of a key given no tag row carry
    /// none). The rows use the batch id `bulk` and are raw events too: drop them with
    /// ``deleteRawEvents(startedBefore:limit:)`` when only the rollups are wanted.
    public func addRollups(app: String, hourly values: [RollupKey: RollupValue], tagged: [(tag: TagFilter, key: RollupKey, value: RollupValue)]) async throws {
        var tags: [RollupKey: TagFilter] = [:]
        for row in tagged { tags[row.key] = row.tag }
        var rows = RowBinaryWriter()
        for (index, (key, value)) in values.sorted(by: { $0.key.bucketStart < $1.key.bucketStart }).enumerated() {
            let columns: VisitColumns
            do { columns = try VisitColumns(value: value) } catch { throw ClickHouseError.server(code: 0, message: "bulk rollup: \(error)") }
            rows.append(app)
            rows.append("bulk")
            rows.append(Self.eventId(app: app, batch: "bulk-\(key.bucketStart)", index: index))
            rows.append(Double(key.bucketStart))
            for dimension in QueryDimension.all {
                if dimension.values == .boolean { rows.append(UInt8(key[dimension] == "true" ? 1 : 0)) } else { rows.append(key[dimension]) }
            }
            let tag = tags[key]
            rows.append(strings: tag.map { [$0.key] } ?? [])
            rows.append(strings: tag.map { [$0.value] } ?? [])
            rows.append(strings: [])
            rows.append(strings: [])
            rows.append("bulk")
            rows.append(UInt16(0))
            rows.append(UInt8(0))
            rows.append(columns.counts)
            rows.append(columns.sums)
            rows.append(columns.mins)
            rows.append(columns.maxes)
            rows.append(columns.tallyKeys)
            rows.append(columns.tallyCounts)
            rows.append(columns.band)
            rows.append("{}")
        }
        try await client.insert(into: "events", columns: Self.eventColumns, rows: rows.bytes, settings: insertSettings)
    }
}
