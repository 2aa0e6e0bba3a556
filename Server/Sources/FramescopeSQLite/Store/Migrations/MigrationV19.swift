import Crypto
import Foundation
import FramescopeStore
import GRDB

/// Schema v19, frozen: a hang row keeps only what is its own (issue 43, item 3).
///
/// Until v19 each hang row copied its visit's dimension values (a screen name alone may be
/// 128 bytes), its key as text (`<batch id>/<visit start>/<screen>/<index>`, about 165 bytes,
/// stored again in the key's unique index) and its representative stack as JSON (up to a few
/// KiB for a deep stack, the same for every hang of a group). A hostile but legal body grew
/// the store by 82 bytes a byte sent, 587 bytes a hang row and 205 in its key index.
///
/// - `hang_contexts` holds each distinct place a hang happened once per app: the eight
///   dimension values as admitted and the `hang_tags` row of its tags (`UNIQUE` over all of
///   them; about 200 bytes per context, shared by all the hangs of a visit and of every visit
///   alike).
/// - `hang_stacks` holds each distinct stored stack once per app, keyed by ``digest(_:)`` of
///   its text (`UNIQUE (app_id, digest)`), so a group's thousand hangs of one stack store it
///   once.
/// - `hangs` is rebuilt without those columns: `context_id` and `stack_id` refer to them,
///   and `hang_key` is ``digest(_:)`` of the key's text (16 bytes), still unique per app.
///
/// Existing rows are moved: a row without a `tags_id` (none should be left by v18) is given
/// its app's `{}` tags object, their contexts and stacks become rows of the new tables, their
/// keys are digested with the same function a new row's are. Indexed as before (app and
/// start, start, app and signature and length), and by `context_id` and `stack_id` for the
/// retention sweep (a context or stack goes with the last hang that refers to it); contexts
/// by `tags_id` likewise.
///
/// SQL and one digest function of its own (``digest(_:)``); it calls no live type, so a later
/// change to a dimension, a key or a stack cannot change it. The live store digests keys and
/// stacks with this same function, so that a key moved here and a key sent again after the
/// upgrade are one key.
enum MigrationV19 {
    static let name = "v19: hang contexts and stacks stored once, hang keys digested"

    /// The SQL function the migration digests with: `framescope_v19_digest(text) → blob`.
    static let functionName = "framescope_v19_digest"

    /// The first 16 bytes of SHA-256 over `text`'s UTF-8 bytes: 128 bits, so that two keys or
    /// two stacks a device chose cannot be made one by a collision.
    static func digest(_ text: String) -> Data {
        Data(SHA256.hash(data: Data(text.utf8)).prefix(16))
    }

    static func run(_ db: Database) throws {
        let function = DatabaseFunction(functionName, argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return nil }
            return digest(text)
        }
        db.add(function: function)
        defer { db.remove(function: function) }
        try db.execute(sql: """
            INSERT OR IGNORE INTO hang_tags (app_id, tags) SELECT DISTINCT app_id, '{}' FROM hangs WHERE tags_id IS NULL;
            UPDATE hangs SET tags_id = (SELECT hang_tags.id FROM hang_tags WHERE hang_tags.app_id = hangs.app_id AND hang_tags.tags = '{}')
                WHERE tags_id IS NULL;
            CREATE TABLE hang_contexts (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL,
                screen TEXT NOT NULL,
                app_version TEXT NOT NULL,
                os_version TEXT NOT NULL,
                device_model TEXT NOT NULL,
                network TEXT NOT NULL,
                low_power INTEGER NOT NULL,
                thermal_state TEXT NOT NULL,
                max_refresh_rate TEXT NOT NULL,
                tags_id INTEGER NOT NULL,
                UNIQUE (app_id, screen, app_version, os_version, device_model, network, low_power, thermal_state, max_refresh_rate, tags_id)
            );
            CREATE INDEX hang_contexts_by_tags ON hang_contexts(tags_id);
            CREATE TABLE hang_stacks (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL,
                digest BLOB NOT NULL,
                stack TEXT NOT NULL,
                UNIQUE (app_id, digest)
            );
            INSERT OR IGNORE INTO hang_contexts (app_id, screen, app_version, os_version, device_model, network, low_power,
                                                 thermal_state, max_refresh_rate, tags_id)
                SELECT DISTINCT app_id, screen, app_version, os_version, device_model, network, low_power, thermal_state,
                                max_refresh_rate, tags_id FROM hangs;
            INSERT OR IGNORE INTO hang_stacks (app_id, digest, stack)
                SELECT DISTINCT app_id, framescope_v19_digest(stack), stack FROM hangs;
            CREATE TABLE hangs_v19 (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL,
                hang_key BLOB NOT NULL,
                started_at REAL NOT NULL,
                context_id INTEGER NOT NULL,
                duration REAL NOT NULL,
                fatal INTEGER NOT NULL,
                source TEXT NOT NULL,
                signature TEXT NOT NULL,
                dominant_image_id TEXT,
                dominant_image TEXT,
                dominant_offset INTEGER,
                samples INTEGER NOT NULL,
                stack_id INTEGER NOT NULL,
                UNIQUE (app_id, hang_key)
            );
            INSERT OR IGNORE INTO hangs_v19 (id, app_id, hang_key, started_at, context_id, duration, fatal, source, signature,
                                             dominant_image_id, dominant_image, dominant_offset, samples, stack_id)
                SELECT h.id, h.app_id, framescope_v19_digest(h.hang_key), h.started_at, c.id, h.duration, h.fatal, h.source,
                       h.signature, h.dominant_image_id, h.dominant_image, h.dominant_offset, h.samples, s.id
                FROM hangs h
                JOIN hang_contexts c ON c.app_id = h.app_id AND c.screen = h.screen AND c.app_version = h.app_version
                    AND c.os_version = h.os_version AND c.device_model = h.device_model AND c.network = h.network
                    AND c.low_power = h.low_power AND c.thermal_state = h.thermal_state
                    AND c.max_refresh_rate = h.max_refresh_rate AND c.tags_id = h.tags_id
                JOIN hang_stacks s ON s.app_id = h.app_id AND s.digest = framescope_v19_digest(h.stack);
            DROP TABLE hangs;
            ALTER TABLE hangs_v19 RENAME TO hangs;
            CREATE INDEX hangs_by_app_start ON hangs(app_id, started_at);
            CREATE INDEX hangs_by_start ON hangs(started_at);
            CREATE INDEX hangs_by_signature ON hangs(app_id, signature, duration);
            CREATE INDEX hangs_by_context ON hangs(context_id);
            CREATE INDEX hangs_by_stack ON hangs(stack_id);
            """)
    }
}
