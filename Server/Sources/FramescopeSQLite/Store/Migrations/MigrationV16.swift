import FramescopeStore
import GRDB

/// Schema v16, frozen: the symbol tables of an app's builds (issue 33), one row per app and
/// image id: the image's name and architecture, its symbols in their binary form
/// (`FSY1`, ``SymbolTableBlob``), how many, and when they were uploaded.
///
/// SQL only; it calls no live type.
enum MigrationV16 {
    static let name = "v16: symbol tables"

    static func run(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE symbol_tables (
                app_id TEXT NOT NULL,
                image_id TEXT NOT NULL,
                name TEXT NOT NULL,
                arch TEXT NOT NULL,
                symbols BLOB NOT NULL,
                count INTEGER NOT NULL,
                uploaded_at REAL NOT NULL,
                PRIMARY KEY (app_id, image_id)
            ) WITHOUT ROWID;
            """)
    }
}
