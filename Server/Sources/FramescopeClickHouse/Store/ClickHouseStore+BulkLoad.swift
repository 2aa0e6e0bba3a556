import Foundation
import FramescopeCore
import FramescopeStore

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
            let tag = tags[key]
            Self.appendEventRow(to: &rows, app: app, batchId: "bulk", eventId: Self.eventId(app: app, batch: "bulk-\(key.bucketStart)", index: index),
                                startedAt: Double(key.bucketStart), dimensionValues: key.values,
                                declaredTags: (tag.map { [$0.key] } ?? [], tag.map { [$0.value] } ?? []), eventTags: [],
                                deviceKey: "bulk", device: nil, columns: columns, payload: "{}")
        }
        try await client.insert(into: "events", columns: Self.eventColumns, rows: rows.bytes, settings: insertSettings)
    }
}
