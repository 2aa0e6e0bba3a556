import FramescopeStore
import GRDB

/// Schema v20, frozen: symbol tables in chunks (issue 43, item 7). One row per app, image
/// and chunk number, each chunk a table of its own (`FSY1`, ``SymbolTableBlob``); the
/// image's row in `symbol_tables` then holds the chunks' index (`FSI1`,
/// ``SymbolTableIndex``) in `symbols`. Rows of `symbol_tables` stored before keep their
/// whole table there and have no chunks. A lookup past the symbol cache reads one chunk row
/// instead of the whole table.
///
/// SQL only; it calls no live type.
enum MigrationV20 {
    static let name = "v20: symbol tables in chunks"

    static func run(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE symbol_chunks (
                app_id TEXT NOT NULL,
                image_id TEXT NOT NULL,
                chunk INTEGER NOT NULL,
                symbols BLOB NOT NULL,
                PRIMARY KEY (app_id, image_id, chunk)
            ) WITHOUT ROWID;
            """)
    }
}
