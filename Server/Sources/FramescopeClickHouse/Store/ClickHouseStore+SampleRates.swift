import FramescopeCore
import FramescopeStore

/// Visits per sample rate (migration 5, ``SampleRateStore``): one `sample_rates` row per
/// batch and UTC day it has visits on, inserted before the batch's events and read with
/// `FINAL`, so a batch whose insert is retried counts once.
extension ClickHouseStore {
    /// The columns of a `sample_rates` insert, in order.
    static let sampleRateColumns = ["app_id", "day", "rate_ppm", "batch_id", "visits"]

    /// Inserts the rows of `batches` (their visits per day, at each batch's rate) as one
    /// block; nothing when they have no visits. A visit that starts outside 1970–2106 is
    /// refused before this (``ingest(_:)``).
    func insertSampleRates(_ batches: [IngestBatch]) async throws {
        var writer = RowBinaryWriter()
        var any = false
        for batch in batches {
            var visits: [Int64: Int] = [:]
            for (_, startedAt) in batch.events { visits[IngestPlanner.day(of: startedAt), default: 0] += 1 }
            for (day, count) in visits.sorted(by: { $0.key < $1.key }) where day >= 0 && day < 4_294_967_296 {
                any = true
                writer.append(batch.app)
                writer.append(UInt32(day))
                writer.append(UInt32(clamping: batch.sampleRatePPM))
                writer.append(batch.batchId)
                writer.append(UInt32(clamping: count))
            }
        }
        guard any else { return }
        try await client.insert(into: "sample_rates", columns: Self.sampleRateColumns, rows: writer.bytes, settings: insertSettings)
    }

    /// Visits per rate over the days `[from, to)` touches (``SampleRate/days(from:to:)``), each
    /// batch's row once (`FINAL`).
    public func sampleRates(app: String, from: Double, to: Double) async throws -> [SampleRateVisits] {
        let days = SampleRate.days(from: from, to: to)
        let start = min(max(days.start, 0), 4_294_967_295), end = min(max(days.end, 0), 4_294_967_295)
        guard start < end else { return [] }
        return try await client.rows("""
            SELECT rate_ppm, sum(visits) AS total FROM sample_rates FINAL
            WHERE app_id = \(Self.quote(app)) AND day >= \(start) AND day < \(end)
            GROUP BY rate_ppm HAVING total > 0 ORDER BY rate_ppm
            """).compactMap { row in
            guard row.count == 2, let rate = Int(row[0]), let visits = Int(row[1]) else { return nil }
            return SampleRateVisits(partsPerMillion: rate, visits: visits)
        }
    }

    /// Deletes the rows of days that ended by `cutoff` with one mutation, run only when there
    /// is something to delete; returns how many rows went.
    public func deleteSampleRates(before cutoff: Double) async throws -> Int {
        guard cutoff.isFinite else { return 0 }
        let lastDay = IngestPlanner.day(of: min(cutoff, 4_294_967_295)) - 86_400
        guard lastDay >= 0 else { return 0 }
        let condition = "day <= \(lastDay)"
        let old = try await count("sample_rates", where: condition)
        guard old > 0 else { return 0 }
        try await deleteRows("sample_rates", where: condition)
        return old
    }
}
