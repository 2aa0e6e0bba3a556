import FramescopeStore
import GRDB

/// The schema's timeline: each migration registered once, named by its version, appended
/// and never edited (GRDB's migrator records which have run). A migration is frozen SQL,
/// or frozen code of its own in this folder; it never calls the live store.
extension SQLiteStore {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: apps, keys, batches, events, rollups") { db in
            try db.execute(sql: """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    revoked_at REAL
                );
                CREATE TABLE keys (
                    hash TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    kind TEXT NOT NULL CHECK (kind IN ('ingest', 'read'))
                );
                CREATE TABLE batches (
                    app_id TEXT NOT NULL,
                    batch_id TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    events INTEGER NOT NULL,
                    PRIMARY KEY (app_id, batch_id)
                );
                CREATE TABLE events (
                    id INTEGER PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    batch_id TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    started_at REAL NOT NULL,
                    screen TEXT NOT NULL,
                    app_version TEXT NOT NULL,
                    os_version TEXT NOT NULL,
                    device_model TEXT NOT NULL,
                    network TEXT NOT NULL,
                    low_power INTEGER NOT NULL,
                    payload TEXT NOT NULL
                );
                CREATE INDEX events_by_app_time ON events(app_id, started_at);
                CREATE TABLE rollups (
                    app_id TEXT NOT NULL,
                    hour INTEGER NOT NULL,
                    screen TEXT NOT NULL,
                    app_version TEXT NOT NULL,
                    os_version TEXT NOT NULL,
                    device_model TEXT NOT NULL,
                    network TEXT NOT NULL,
                    low_power INTEGER NOT NULL,
                    visits INTEGER NOT NULL,
                    report TEXT NOT NULL,
                    motion TEXT,
                    PRIMARY KEY (app_id, hour, screen, app_version, os_version, device_model, network, low_power)
                );
                """)
        }
        migrator.registerMigration("v2: rollup levels with per-visit statistics") { db in
            // Frozen: the table names as they were, not the live ones.
            for table in ["rollups_hourly", "rollups_daily", "rollups_screen_hourly", "rollups_screen_daily"] {
                try db.execute(sql: """
                    CREATE TABLE \(table) (
                        app_id TEXT NOT NULL,
                        bucket INTEGER NOT NULL,
                        screen TEXT NOT NULL,
                        app_version TEXT NOT NULL,
                        os_version TEXT NOT NULL,
                        device_model TEXT NOT NULL,
                        network TEXT NOT NULL,
                        low_power INTEGER NOT NULL,
                        visits INTEGER NOT NULL,
                        report BLOB NOT NULL,
                        motion BLOB,
                        stats BLOB NOT NULL,
                        PRIMARY KEY (app_id, bucket, screen, app_version, os_version, device_model, network, low_power)
                    ) WITHOUT ROWID
                    """)
            }
            try db.execute(sql: "CREATE INDEX events_by_start ON events(started_at)")
        }
        migrator.registerMigration("v3: device sketches in rollups; v1 rollups carried over") { db in
            // Frozen code of its own (Migrations/MigrationV3.swift), streaming v1's rows.
            try MigrationV3.run(db)
        }
        migrator.registerMigration("v4: event indexes that grow at their end") { db in
            // Indexed by exact start time, every new event landed at a random place among
            // recent start times and dirtied an index page of its own, in each of two
            // indexes: about 300 of the 390 pages a 100-event commit wrote. Keyed by app,
            // or by the start's hour, a new event goes to the end of its key's range
            // (entries with equal keys are in rowid order), so a commit dirties a few pages.
            try db.execute(sql: """
                DROP INDEX events_by_app_time;
                DROP INDEX events_by_start;
                CREATE INDEX events_by_app ON events(app_id);
                CREATE INDEX events_by_start_hour ON events(CAST(started_at / 3600 AS INTEGER));
                """)
        }
        migrator.registerMigration("v5: key expiry, dashboard sessions, batch ledger by receipt") { db in
            try db.execute(sql: """
                ALTER TABLE keys ADD COLUMN expires_at REAL;
                CREATE TABLE sessions (
                    hash TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    key_hash TEXT NOT NULL,
                    csrf TEXT NOT NULL,
                    expires_at REAL NOT NULL
                );
                CREATE INDEX sessions_by_key ON sessions(key_hash);
                CREATE INDEX batches_by_received ON batches(received_at);
                """)
        }
        migrator.registerMigration("v6: distinct dimension values per app and day") { db in
            try db.execute(sql: """
                CREATE TABLE dimension_values (
                    app_id TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    dimension TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (app_id, day, dimension, value)
                ) WITHOUT ROWID;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'screen', screen FROM rollups_daily;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'appVersion', app_version FROM rollups_daily;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'osVersion', os_version FROM rollups_daily;
                INSERT OR IGNORE INTO dimension_values SELECT DISTINCT app_id, bucket, 'deviceModel', device_model FROM rollups_daily;
                """)
        }
        migrator.registerMigration("v7: per-visit statistics stored by figure name") { db in
            // Frozen code of its own (Migrations/MigrationV7.swift), inside SQLite's UPDATE.
            try MigrationV7.run(db)
        }
        migrator.registerMigration("v8: MetricKit payloads") { db in
            try db.execute(sql: """
                CREATE TABLE metrickit_payloads (
                    app_id TEXT NOT NULL,
                    digest TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    begin_at REAL,
                    end_at REAL NOT NULL,
                    app_version TEXT NOT NULL,
                    os_version TEXT NOT NULL,
                    device_model TEXT NOT NULL,
                    scroll_hitch_time_ratio REAL,
                    hang_diagnostics INTEGER NOT NULL,
                    hang_time REAL NOT NULL,
                    longest_hang REAL NOT NULL,
                    histogram_hangs INTEGER NOT NULL,
                    PRIMARY KEY (app_id, digest)
                );
                CREATE INDEX metrickit_by_app_end ON metrickit_payloads(app_id, end_at);
                CREATE INDEX metrickit_by_received ON metrickit_payloads(received_at);
                """)
        }
        migrator.registerMigration("v9: app admin keys; per-app bands and verdict rules") { db in
            // SQLite cannot change a CHECK constraint in place: the keys table is rebuilt
            // with 'admin' allowed, its rows carried over as they are. Existing apps get an
            // admin key from `apps rotate APP --key admin` (a migration cannot show a secret).
            try db.execute(sql: """
                CREATE TABLE keys_v9 (
                    hash TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    kind TEXT NOT NULL CHECK (kind IN ('ingest', 'read', 'admin')),
                    expires_at REAL
                );
                INSERT INTO keys_v9 (hash, app_id, kind, expires_at) SELECT hash, app_id, kind, expires_at FROM keys;
                DROP TABLE keys;
                ALTER TABLE keys_v9 RENAME TO keys;
                CREATE TABLE app_bands (
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    figure TEXT NOT NULL,
                    good_below REAL NOT NULL CHECK (good_below >= 0),
                    critical_above REAL NOT NULL CHECK (critical_above > good_below),
                    PRIMARY KEY (app_id, figure)
                ) WITHOUT ROWID;
                CREATE TABLE app_verdict_rules (
                    app_id TEXT PRIMARY KEY REFERENCES apps(id),
                    minimum_change REAL CHECK (minimum_change >= 0),
                    minimum_visits INTEGER CHECK (minimum_visits >= 2)
                );
                """)
        }
        migrator.registerMigration("v10: regression alerts and webhooks") { db in
            // An alert fires once per (app, screen, metric, baseline, candidate): the unique
            // key makes raising it again a no-op. Its figures are kept as evaluated. A
            // webhook's secret is the HMAC key the collector signs with, so it is stored as
            // it is (the database file grants everything anyway). One delivery row per
            // alert and webhook the app had when the alert was raised.
            try db.execute(sql: """
                CREATE TABLE alerts (
                    id INTEGER PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    screen TEXT NOT NULL,
                    metric TEXT NOT NULL,
                    baseline_version TEXT NOT NULL,
                    candidate_version TEXT NOT NULL,
                    unit TEXT NOT NULL,
                    baseline_value REAL,
                    candidate_value REAL,
                    change REAL,
                    relative_change REAL,
                    change_low REAL,
                    change_high REAL,
                    baseline_visits INTEGER NOT NULL,
                    candidate_visits INTEGER NOT NULL,
                    verdict TEXT NOT NULL,
                    range_from REAL NOT NULL,
                    range_to REAL NOT NULL,
                    created_at REAL NOT NULL,
                    acknowledged_at REAL,
                    UNIQUE (app_id, screen, metric, baseline_version, candidate_version)
                );
                CREATE INDEX alerts_by_app ON alerts(app_id, id);
                CREATE TABLE webhooks (
                    id INTEGER PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    url TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE INDEX webhooks_by_app ON webhooks(app_id);
                CREATE TABLE alert_deliveries (
                    alert_id INTEGER NOT NULL REFERENCES alerts(id),
                    webhook_id INTEGER NOT NULL REFERENCES webhooks(id),
                    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'undelivered')),
                    attempts INTEGER NOT NULL,
                    last_error TEXT,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (alert_id, webhook_id)
                ) WITHOUT ROWID;
                CREATE INDEX alert_deliveries_by_state ON alert_deliveries(state, alert_id);
                CREATE INDEX alert_deliveries_by_webhook ON alert_deliveries(webhook_id);
                """)
        }
        migrator.registerMigration("v11: thermal state and display maximum as dimensions") { db in
            // Raw events get both columns: the thermal state from each event's own JSON; the
            // display maximum was not kept before, so it is 'unknown'. The rollup tables are
            // rebuilt with both in their keys (SQLite cannot change a primary key in place):
            // rows carried over hold 'unknown' where a level keeps dimensions and '*' (every
            // value) where it does not, so every figure stays where it was.
            try db.execute(sql: """
                ALTER TABLE events ADD COLUMN thermal_state TEXT NOT NULL DEFAULT 'unknown';
                ALTER TABLE events ADD COLUMN max_refresh_rate TEXT NOT NULL DEFAULT 'unknown';
                UPDATE events SET thermal_state = COALESCE(json_extract(payload, '$.context.thermalState'), 'unknown')
                    WHERE json_valid(payload);
                """)
            for (table, carried) in [("rollups_hourly", "unknown"), ("rollups_daily", "unknown"),
                                     ("rollups_screen_hourly", "*"), ("rollups_screen_daily", "*")] {
                try db.execute(sql: """
                    CREATE TABLE \(table)_v11 (
                        app_id TEXT NOT NULL,
                        bucket INTEGER NOT NULL,
                        screen TEXT NOT NULL,
                        app_version TEXT NOT NULL,
                        os_version TEXT NOT NULL,
                        device_model TEXT NOT NULL,
                        network TEXT NOT NULL,
                        low_power INTEGER NOT NULL,
                        thermal_state TEXT NOT NULL,
                        max_refresh_rate TEXT NOT NULL,
                        visits INTEGER NOT NULL,
                        report BLOB NOT NULL,
                        motion BLOB,
                        stats BLOB NOT NULL,
                        devices BLOB,
                        PRIMARY KEY (app_id, bucket, screen, app_version, os_version, device_model, network, low_power,
                                     thermal_state, max_refresh_rate)
                    ) WITHOUT ROWID;
                    INSERT INTO \(table)_v11 (app_id, bucket, screen, app_version, os_version, device_model, network, low_power,
                                              thermal_state, max_refresh_rate, visits, report, motion, stats, devices)
                        SELECT app_id, bucket, screen, app_version, os_version, device_model, network, low_power,
                               '\(carried)', '\(carried)', visits, report, motion, stats, devices FROM \(table);
                    DROP TABLE \(table);
                    ALTER TABLE \(table)_v11 RENAME TO \(table);
                    """)
            }
        }
        migrator.registerMigration("v12: declared tag keys and their rollups") { db in
            // A declared key's visits from its declaration on, hourly and daily, keyed by the
            // tag's value and every dimension of v11 (frozen here as they are today).
            try db.execute(sql: """
                CREATE TABLE app_tag_keys (
                    app_id TEXT NOT NULL REFERENCES apps(id),
                    tag_key TEXT NOT NULL,
                    declared_at REAL NOT NULL,
                    PRIMARY KEY (app_id, tag_key)
                ) WITHOUT ROWID;
                """)
            for table in ["rollups_tag_hourly", "rollups_tag_daily"] {
                try db.execute(sql: """
                    CREATE TABLE \(table) (
                        app_id TEXT NOT NULL,
                        tag_key TEXT NOT NULL,
                        tag_value TEXT NOT NULL,
                        bucket INTEGER NOT NULL,
                        screen TEXT NOT NULL,
                        app_version TEXT NOT NULL,
                        os_version TEXT NOT NULL,
                        device_model TEXT NOT NULL,
                        network TEXT NOT NULL,
                        low_power INTEGER NOT NULL,
                        thermal_state TEXT NOT NULL,
                        max_refresh_rate TEXT NOT NULL,
                        visits INTEGER NOT NULL,
                        report BLOB NOT NULL,
                        motion BLOB,
                        stats BLOB NOT NULL,
                        devices BLOB,
                        PRIMARY KEY (app_id, tag_key, tag_value, bucket, screen, app_version, os_version, device_model, network,
                                     low_power, thermal_state, max_refresh_rate)
                    ) WITHOUT ROWID
                    """)
            }
        }
        migrator.registerMigration("v13: per-app alert rules") { db in
            // The fewest distinct installations a version needs to take part in regression
            // alerts; no row means the default (apps set before v13 read with it).
            try db.execute(sql: """
                CREATE TABLE app_alert_rules (
                    app_id TEXT PRIMARY KEY REFERENCES apps(id),
                    minimum_installations INTEGER NOT NULL CHECK (minimum_installations >= 0)
                );
                """)
        }
        migrator.registerMigration(MigrationV14.name) { db in
            // Frozen SQL of its own (Migrations/MigrationV14.swift).
            try MigrationV14.run(db)
        }
        migrator.registerMigration(MigrationV15.name) { db in
            // Frozen SQL of its own (Migrations/MigrationV15.swift).
            try MigrationV15.run(db)
        }
        migrator.registerMigration(MigrationV16.name) { db in
            // Frozen SQL of its own (Migrations/MigrationV16.swift).
            try MigrationV16.run(db)
        }
        migrator.registerMigration(MigrationV17.name) { db in
            // Frozen SQL of its own (Migrations/MigrationV17.swift).
            try MigrationV17.run(db)
        }
        migrator.registerMigration(MigrationV18.name) { db in
            // Frozen SQL of its own (Migrations/MigrationV18.swift).
            try MigrationV18.run(db)
        }
        migrator.registerMigration(MigrationV19.name) { db in
            // Frozen SQL and digest function of its own (Migrations/MigrationV19.swift).
            try MigrationV19.run(db)
        }
        migrator.registerMigration(MigrationV20.name) { db in
            // Frozen SQL of its own (Migrations/MigrationV20.swift).
            try MigrationV20.run(db)
        }
        return migrator
    }
}
