import FramescopeStore
import GRDB

/// Schema v18, frozen: a hang's tags stored once, not copied into every hang row (issue 43,
/// item 3).
///
/// Until v18 each of a visit's up to 32 hang rows held the visit's tags, a JSON object of up
/// to 16 keys and values of 64 bytes (about 2 KiB): a row then filled a 4 KiB page of its
/// own, and 1.6 MB of gzip sent grew the store by 583 MB (355×). `hang_tags` holds each
/// distinct tags object of an app once (`UNIQUE (app_id, tags)`); a hang row refers to it by
/// `tags_id` and keeps `''` in `tags`. Existing rows are moved: their distinct objects become
/// `hang_tags` rows, each row gets its `tags_id` and loses its copy. Indexed by `tags_id`, so
/// that the retention sweep finds the objects no hang refers to any more.
///
/// SQL only; it calls no live type, so a later change to tags cannot change it.
enum MigrationV18 {
    static let name = "v18: hang tags stored once per app and tags object"

    static func run(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE hang_tags (
                id INTEGER PRIMARY KEY,
                app_id TEXT NOT NULL,
                tags TEXT NOT NULL,
                UNIQUE (app_id, tags)
            );
            ALTER TABLE hangs ADD COLUMN tags_id INTEGER;
            INSERT OR IGNORE INTO hang_tags (app_id, tags) SELECT DISTINCT app_id, tags FROM hangs;
            UPDATE hangs SET tags_id = (SELECT hang_tags.id FROM hang_tags WHERE hang_tags.app_id = hangs.app_id AND hang_tags.tags = hangs.tags),
                             tags = '';
            CREATE INDEX hangs_by_tags ON hangs(tags_id);
            """)
    }
}
