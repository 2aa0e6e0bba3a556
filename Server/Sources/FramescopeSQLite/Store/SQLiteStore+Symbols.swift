import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Symbol tables (migrations v16, v20): one row per app and image, its table in chunk rows
/// (`symbol_chunks`) with the chunks' index in the image's row; a row stored before v20
/// keeps its whole table there.
extension SQLiteStore {
    public func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {
        // Each table cut into chunks and encoded, then the upload let go before the write
        // (docs/benchmarks.md, "Symbol uploads"). Chunks of about 18 KiB bind without the two
        // copies of a whole table's blob SQLite made.
        let rows = (consume images).map { image in
            let (index, chunks) = SymbolTableIndex.chunks(of: image.symbols)
            return (id: image.id, name: image.name, arch: image.arch, count: image.symbols.count, index: Data(index.bytes),
                    chunks: chunks.map { SymbolTableBlob.data(of: image.symbols[$0]) })
        }
        try await database.write { db in
            let deleteChunks = try db.cachedStatement(sql: "DELETE FROM symbol_chunks WHERE app_id = ? AND image_id = ?")
            let insertChunk = try db.cachedStatement(sql: "INSERT INTO symbol_chunks (app_id, image_id, chunk, symbols) VALUES (?, ?, ?, ?)")
            for row in rows {
                try db.execute(sql: """
                    INSERT INTO symbol_tables (app_id, image_id, name, arch, symbols, count, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, image_id) DO UPDATE SET name = excluded.name, arch = excluded.arch, symbols = excluded.symbols,
                        count = excluded.count, uploaded_at = excluded.uploaded_at
                    """, arguments: [app, row.id, row.name, row.arch, row.index, row.count, now])
                try deleteChunks.execute(arguments: [app, row.id])
                for (number, chunk) in row.chunks.enumerated() { try insertChunk.execute(arguments: [app, row.id, number, chunk]) }
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
            let chunks = try db.cachedStatement(sql: "SELECT chunk, symbols FROM symbol_chunks WHERE app_id = ? AND image_id = ? ORDER BY chunk")
            for id in ids {
                guard let data = try Data.fetchOne(select, arguments: [app, id]) else { continue }
                let bytes = [UInt8](data)
                guard SymbolTableIndex.isIndex(bytes) else {
                    // Stored before v20: the whole table.
                    if let table = SymbolTableBlob(bytes: bytes) { tables[id] = table }
                    continue
                }
                guard let index = SymbolTableIndex(bytes: bytes) else { continue }
                // Row by row: each chunk's blob let go once it is read, not the whole table's held.
                var parts: [SymbolTableBlob] = []
                parts.reserveCapacity(index.chunkCount)
                let rows = try Row.fetchCursor(chunks, arguments: [app, id])
                while let row = try rows.next() {
                    let number: Int = row[0]
                    let data: Data = row[1]
                    if let part = SymbolTableBlob(bytes: [UInt8](data)), index.isChunk(number, part) { parts.append(part) }
                }
                // A table missing a chunk is not a table.
                if parts.count == index.chunkCount, let table = SymbolTableBlob(joining: parts) { tables[id] = table }
            }
            return tables
        }
    }

    public func symbolIndexes(app: String, ids: Set<String>) async throws -> [String: SymbolTableIndex] {
        guard !ids.isEmpty else { return [:] }
        return try await database.read { db in
            var indexes: [String: SymbolTableIndex] = [:]
            // Only rows whose table is in chunks (or empty): a whole table stored before v20 is
            // not read here, since SQLite reads a blob whole.
            let select = try db.cachedStatement(sql: """
                SELECT symbols FROM symbol_tables t WHERE app_id = ? AND image_id = ?
                    AND (count = 0 OR EXISTS (SELECT 1 FROM symbol_chunks c WHERE c.app_id = t.app_id AND c.image_id = t.image_id AND c.chunk = 0))
                """)
            for id in ids {
                guard let data = try Data.fetchOne(select, arguments: [app, id]), let index = SymbolTableIndex(bytes: [UInt8](data)) else { continue }
                indexes[id] = index
            }
            return indexes
        }
    }

    public func symbolChunks(app: String, id: String, chunks: Set<Int>) async throws -> [Int: SymbolTableBlob] {
        guard !chunks.isEmpty else { return [:] }
        return try await database.read { db in
            var found: [Int: SymbolTableBlob] = [:]
            let select = try db.cachedStatement(sql: "SELECT symbols FROM symbol_chunks WHERE app_id = ? AND image_id = ? AND chunk = ?")
            for number in chunks {
                guard let data = try Data.fetchOne(select, arguments: [app, id, number]), let table = SymbolTableBlob(bytes: [UInt8](data)) else { continue }
                found[number] = table
            }
            return found
        }
    }
}
