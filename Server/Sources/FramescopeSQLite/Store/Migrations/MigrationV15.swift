import FramescopeStore
import GRDB

/// Schema v15, frozen: hangs (issue 33).
///
/// `hangs` holds one row per hang a device reported with a stack (idle ones left out) and
/// per fatal hang, with the visit's
/// dimension values as admitted and its tags (a JSON object), its length, whether the
/// process died in it, its source (`sdk`, `metrickit`), its signature (the dominant app
/// frame, ``HangSummary``), that frame's image id and name and its lookup offset, its sample
/// count and its representative stack (a JSON array). `hang_key` is unique per app, so a
/// fatal hang sent twice (a kill between its delivery and its deletion) counts once.
/// Indexed by app and start (queries), by start (the retention sweep), and by app,
/// signature and length (each group's longest hang).
///
/// SQL only; it calls no live type, so a later change to a dimension cannot change it.
enum MigrationV15 {
    static let name = "v15: hangs with their signatures and stacks"

    static func run(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE hangs (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL,
                hang_key TEXT NOT NULL,
                started_at REAL NOT NULL,
                screen TEXT NOT NULL,
                app_version TEXT NOT NULL,
                os_version TEXT NOT NULL,
                device_model TEXT NOT NULL,
                network TEXT NOT NULL,
                low_power INTEGER NOT NULL,
                thermal_state TEXT NOT NULL,
                max_refresh_rate TEXT NOT NULL,
                tags TEXT NOT NULL,
                duration REAL NOT NULL,
                fatal INTEGER NOT NULL,
                source TEXT NOT NULL,
                signature TEXT NOT NULL,
                dominant_image_id TEXT,
                dominant_image TEXT,
                dominant_offset INTEGER,
                samples INTEGER NOT NULL,
                stack TEXT NOT NULL,
                UNIQUE (app_id, hang_key)
            );
            CREATE INDEX hangs_by_app_start ON hangs(app_id, started_at);
            CREATE INDEX hangs_by_start ON hangs(started_at);
            CREATE INDEX hangs_by_signature ON hangs(app_id, signature, duration);
            """)
    }
}
