import Foundation
import FramescopeCore
import GRDB

/// Symbol tables (migration v16): one row per app and image.
extension SQLiteStore {
    public func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {
        // Each table encoded, then the upload let go before the write: SQLite copies a bound
        // blob twice, and with the decoded symbols still held beside them a 60 MiB upload
        // peaked at 4.5 times its size (docs/benchmarks.md, "Symbol uploads").
        let rows = (consume images).map { image in
            (id: image.id, name: image.name, arch: image.arch, count: image.symbols.count, blob: SymbolTableBlob.data(of: image.symbols))
        }
        try await database.write { db in
            for row in rows {
                try db.execute(sql: """
                    INSERT INTO symbol_tables (app_id, image_id, name, arch, symbols, count, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, image_id) DO UPDATE SET name = excluded.name, arch = excluded.arch, symbols = excluded.symbols,
                        count = excluded.count, uploaded_at = excluded.uploaded_at
                    """, arguments: [app, row.id, row.name, row.arch, row.blob, row.count, now])
            }
        }
    }

    public func symbolImages(app: String) async throws -> [SymbolImageRecord] {
        // Records, not rows, leave the closure: `Row` is not Sendable, and with it the read
        // was GRDB's blocking one, run on the cooperative pool.
        let images = try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT image_id, name, arch, count, uploaded_at FROM symbol_tables WHERE app_id = ?", arguments: [app])
                .map { row in
                    SymbolImageRecord(id: row[0], name: row[1], arch: row[2], symbols: row[3], uploadedAt: ISO8601.format(unixSeconds: row[4]))
                }
        }
        return images.sorted { (StoredText($0.name), $0.id) < (StoredText($1.name), $1.id) }
    }

    public func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] {
        guard !ids.isEmpty else { return [:] }
        return try await database.read { db in
            var tables: [String: SymbolTableBlob] = [:]
            let select = try db.cachedStatement(sql: "SELECT symbols FROM symbol_tables WHERE app_id = ? AND image_id = ?")
            for id in ids {
                guard let data = try Data.fetchOne(select, arguments: [app, id]), let table = SymbolTableBlob(bytes: [UInt8](data)) else { continue }
                tables[id] = table
            }
            return tables
        }
    }
}
