import FramescopeCore
import FramescopeStore
import GRDB

/// Visits per sample rate (``SampleRateStore``) in `sample_rates` (schema v17): one row per
/// app, UTC day and rate in parts per million, added to by ingest in the transaction that
/// stores the visits, after the batch ledger said the batch is new (so a retried batch adds
/// nothing).
extension SQLiteStore {
    /// `SUM(visits)` per rate over the days `[from, to)` touches (``SampleRate/days(from:to:)``).
    public func sampleRates(app: String, from: Double, to: Double) async throws -> [SampleRateVisits] {
        let days = SampleRate.days(from: from, to: to)
        return try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT rate_ppm, SUM(visits) FROM sample_rates WHERE app_id = ? AND day >= ? AND day < ?
                GROUP BY rate_ppm HAVING SUM(visits) > 0 ORDER BY rate_ppm
                """, arguments: [app, days.start, days.end])
                .map { SampleRateVisits(partsPerMillion: $0[0], visits: $0[1]) }
        }
    }

    /// Deletes the rows of days that ended by `cutoff` (`day + 86 400 ≤ cutoff`), by the day index.
    public func deleteSampleRates(before cutoff: Double) async throws -> Int {
        guard cutoff.isFinite else { return 0 }
        let lastDay = IngestPlanner.day(of: cutoff) - 86_400
        return try await database.write { db in
            try db.execute(sql: "DELETE FROM sample_rates WHERE day <= ?", arguments: [lastDay])
            return db.changesCount
        }
    }

    /// Adds `counts` (visits per app, day and rate) to `sample_rates`, in the caller's transaction.
    static func addSampleRates(_ counts: [SampleRateDay: Int], _ db: Database) throws {
        guard !counts.isEmpty else { return }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO sample_rates (app_id, day, rate_ppm, visits) VALUES (?, ?, ?, ?)
            ON CONFLICT (app_id, day, rate_ppm) DO UPDATE SET visits = visits + excluded.visits
            """)
        for (key, visits) in counts {
            try upsert.execute(arguments: [key.app, key.day, key.partsPerMillion, visits])
        }
    }
}

/// The key of one count of visits per sample rate: the app, the UTC day (its start, Unix
/// seconds) and the rate in parts per million.
struct SampleRateDay: Hashable {
    var app: String
    var day: Int64
    var partsPerMillion: Int
}
