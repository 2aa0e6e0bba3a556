import FramescopeStore
import GRDB

/// Schema v14, frozen: the cardinality window (`dimension_window`: per app, dimension and
/// value, the last UTC day the app used the value, filled from the daily ledger) and an
/// index of MetricKit payloads by their end, for the retention sweep.
///
/// SQL only; it calls no live type, so a later change to the gate cannot change it.
enum MigrationV14 {
    static let name = "v14: distinct values across the cardinality window; MetricKit payloads by end"

    static func run(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE dimension_window (
                app_id TEXT NOT NULL,
                dimension TEXT NOT NULL,
                value TEXT NOT NULL,
                last_day INTEGER NOT NULL,
                PRIMARY KEY (app_id, dimension, value)
            ) WITHOUT ROWID;
            CREATE INDEX dimension_window_by_last_day ON dimension_window(last_day);
            INSERT INTO dimension_window (app_id, dimension, value, last_day)
                SELECT app_id, dimension, value, MAX(day) FROM dimension_values GROUP BY app_id, dimension, value;
            CREATE INDEX metrickit_by_end ON metrickit_payloads(end_at);
            """)
    }
}
