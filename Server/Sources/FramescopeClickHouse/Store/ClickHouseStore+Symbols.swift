import Foundation
import FramescopeCore
import FramescopeStore

/// Symbol tables (migrations 4, 6): one row per app and image, the latest upload read with
/// FINAL, its table in chunk rows (`symbol_chunks`) and the chunks' index in the image's
/// row; a row stored before migration 6 keeps its whole table there.
extension ClickHouseStore {
    public func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {
        guard !images.isEmpty else { return }
        // Chunks an earlier upload stored past this one's last are replaced by empty rows,
        // which read as absent, as SQLite deletes them: a chunk read names this upload's or none.
        let previous = try await symbolIndexes(app: app, ids: Set(images.map(\.id)))
        var tables = RowBinaryWriter()
        var chunks = RowBinaryWriter()
        var chunkRows = 0
        // The rows encoded, then the upload let go before the inserts are sent.
        for image in consume images {
            let (index, ranges) = SymbolTableIndex.chunks(of: image.symbols)
            for number in ranges.count..<max(ranges.count, previous[image.id]?.chunkCount ?? 0) {
                chunks.append(app)
                chunks.append(image.id)
                chunks.append(UInt32(number))
                chunks.append("")
                chunks.append(now)
                chunkRows += 1
            }
            tables.append(app)
            tables.append(image.id)
            tables.append(image.name)
            tables.append(image.arch)
            tables.append(Base64.encode(index.bytes))
            tables.append(UInt32(clamping: image.symbols.count))
            tables.append(now)
            for (number, range) in ranges.enumerated() {
                chunks.append(app)
                chunks.append(image.id)
                chunks.append(UInt32(number))
                chunks.append(Base64.encode(SymbolTableBlob.bytes(of: image.symbols[range])))
                chunks.append(now)
                chunkRows += 1
            }
        }
        // The chunks before the index that names them: a reader that finds the new index
        // finds its chunks; one that still holds the old index and reads a new chunk sees it
        // is not that index's (``SymbolTableIndex/isChunk(_:_:)``).
        if chunkRows > 0 {
            try await client.insert(into: "symbol_chunks", columns: ["app_id", "image_id", "chunk", "symbols", "uploaded_at"],
                                    rows: chunks.bytes, settings: insertSettings)
        }
        try await client.insert(into: "symbol_tables", columns: ["app_id", "image_id", "name", "arch", "symbols", "count", "uploaded_at"],
                                rows: tables.bytes, settings: insertSettings)
    }

    public func symbolImages(app: String) async throws -> [SymbolImageRecord] {
        try await client.rows("SELECT image_id, name, arch, count, uploaded_at FROM symbol_tables FINAL WHERE app_id = \(Self.quote(app))")
            .filter { $0.count == 5 }
            .map { SymbolImageRecord(id: $0[0], name: $0[1], arch: $0[2], symbols: Int($0[3]) ?? 0, uploadedAt: ISO8601.format(unixSeconds: Double($0[4]) ?? 0)) }
            .sorted { (StoredText($0.name), $0.id) < (StoredText($1.name), $1.id) }
    }

    public func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] {
        var tables: [String: SymbolTableBlob] = [:]
        var indexes: [String: SymbolTableIndex] = [:]
        for row in try await symbolRows(app: app, ids: ids, indexesOnly: false) where row.count == 2 {
            guard let bytes = Base64.decode(row[1]) else { continue }
            if SymbolTableIndex.isIndex(bytes) {
                if let index = SymbolTableIndex(bytes: bytes) { indexes[row[0]] = index }
            } else if let table = SymbolTableBlob(bytes: bytes) {
                // Stored before migration 6: the whole table.
                tables[row[0]] = table
            }
        }
        for (id, index) in indexes {
            let parts = try await symbolChunks(app: app, id: id, chunks: Set(0..<index.chunkCount))
            let ordered = (0..<index.chunkCount).compactMap { number in parts[number].flatMap { index.isChunk(number, $0) ? $0 : nil } }
            // A table missing a chunk is not a table.
            if ordered.count == index.chunkCount, let table = SymbolTableBlob(joining: ordered) { tables[id] = table }
        }
        return tables
    }

    public func symbolIndexes(app: String, ids: Set<String>) async throws -> [String: SymbolTableIndex] {
        var indexes: [String: SymbolTableIndex] = [:]
        for row in try await symbolRows(app: app, ids: ids, indexesOnly: true) where row.count == 2 {
            guard let bytes = Base64.decode(row[1]), let index = SymbolTableIndex(bytes: bytes) else { continue }
            indexes[row[0]] = index
        }
        return indexes
    }

    public func symbolChunks(app: String, id: String, chunks: Set<Int>) async throws -> [Int: SymbolTableBlob] {
        var found: [Int: SymbolTableBlob] = [:]
        let sorted = chunks.filter { $0 >= 0 && $0 <= Int(UInt32.max) }.sorted()
        // Lists of at most 2,000 numbers: a statement stays far below max_query_size (256 KiB).
        for start in stride(from: 0, to: sorted.count, by: 2_000) {
            let list = sorted[start..<min(start + 2_000, sorted.count)].map(String.init).joined(separator: ", ")
            for row in try await client.rows("""
                SELECT chunk, symbols FROM symbol_chunks FINAL WHERE app_id = \(Self.quote(app)) AND image_id = \(Self.quote(id)) AND chunk IN (\(list))
                """) where row.count == 2 {
                guard let number = Int(row[0]), let bytes = Base64.decode(row[1]), let table = SymbolTableBlob(bytes: bytes) else { continue }
                found[number] = table
            }
        }
        return found
    }

    /// (image id, `symbols` in base64) of `app`'s images among `ids`, the latest upload of
    /// each; with `indexesOnly`, only rows holding an index (`FSI1`, base64 `RlNJ…`), so that
    /// a whole table stored before migration 6 is not sent.
    private func symbolRows(app: String, ids: Set<String>, indexesOnly: Bool) async throws -> [[String]] {
        guard !ids.isEmpty else { return [] }
        var rows: [[String]] = []
        let sorted = ids.sorted()
        // Lists of at most 500 ids: a statement stays far below max_query_size (256 KiB).
        for chunk in stride(from: 0, to: sorted.count, by: 500) {
            let list = sorted[chunk..<min(chunk + 500, sorted.count)].map(Self.quote).joined(separator: ", ")
            // The filter outside FINAL: inside, the server may apply it before choosing the
            // latest upload, and return an earlier one.
            let latest = "SELECT image_id, symbols FROM symbol_tables FINAL WHERE app_id = \(Self.quote(app)) AND image_id IN (\(list))"
            rows += try await client.rows(indexesOnly ? "SELECT image_id, symbols FROM (\(latest)) WHERE substring(symbols, 1, 4) = 'RlNJ'" : latest)
        }
        return rows
    }
}
