import FramescopeStore
import GRDB

/// Schema v17, frozen: visits per sample rate (issue 35).
///
/// `sample_rates` holds, per app, UTC day (its start, Unix seconds) and sample rate (in parts
/// per million, 1…1 000 000: ``SampleRate``), how many screen visits arrived; ingest adds to
/// it in the transaction that stores the visits. The raw events stored before v17 all came
/// from SDKs that did not sample, so they are counted at 1 000 000, by the day they started.
/// Indexed by day for the retention sweep.
///
/// SQL only; it calls no live type, so a later change to sampling cannot change it.
enum MigrationV17 {
    static let name = "v17: visits per sample rate"

    static func run(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE sample_rates (
                app_id TEXT NOT NULL,
                day INTEGER NOT NULL,
                rate_ppm INTEGER NOT NULL CHECK (rate_ppm BETWEEN 1 AND 1000000),
                visits INTEGER NOT NULL CHECK (visits >= 0),
                PRIMARY KEY (app_id, day, rate_ppm)
            ) WITHOUT ROWID;
            CREATE INDEX sample_rates_by_day ON sample_rates(day);
            INSERT INTO sample_rates (app_id, day, rate_ppm, visits)
                SELECT app_id, CAST(started_at / 86400 AS INTEGER) * 86400 AS day, 1000000, COUNT(*)
                FROM events GROUP BY app_id, day;
            """)
    }
}
