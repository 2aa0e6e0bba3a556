import Foundation
import FramescopeCollector
import FramescopeCore

/// Symbol tables (migration 4): one row per app and image, the latest upload read with FINAL.
extension ClickHouseStore {
    public func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {
        guard !images.isEmpty else { return }
        var writer = RowBinaryWriter()
        // The rows encoded, then the upload let go before the insert is sent.
        for image in consume images {
            writer.append(app)
            writer.append(image.id)
            writer.append(image.name)
            writer.append(image.arch)
            writer.append(Base64.encode(SymbolTableBlob.bytes(of: image.symbols)))
            writer.append(UInt32(clamping: image.symbols.count))
            writer.append(now)
        }
        try await client.insert(into: "symbol_tables", columns: ["app_id", "image_id", "name", "arch", "symbols", "count", "uploaded_at"],
                                rows: writer.bytes, settings: insertSettings)
    }

    public func symbolImages(app: String) async throws -> [SymbolImageRecord] {
        try await client.rows("SELECT image_id, name, arch, count, uploaded_at FROM symbol_tables FINAL WHERE app_id = \(Self.quote(app))")
            .filter { $0.count == 5 }
            .map { SymbolImageRecord(id: $0[0], name: $0[1], arch: $0[2], symbols: Int($0[3]) ?? 0, uploadedAt: ISO8601.format(unixSeconds: Double($0[4]) ?? 0)) }
            .sorted { (StoredText($0.name), $0.id) < (StoredText($1.name), $1.id) }
    }

    public func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] {
        guard !ids.isEmpty else { return [:] }
        var tables: [String: SymbolTableBlob] = [:]
        let sorted = ids.sorted()
        // Lists of at most 500 ids: a statement stays far below max_query_size (256 KiB).
        for chunk in stride(from: 0, to: sorted.count, by: 500) {
            let list = sorted[chunk..<min(chunk + 500, sorted.count)].map(Self.quote).joined(separator: ", ")
            for row in try await client.rows("SELECT image_id, symbols FROM symbol_tables FINAL WHERE app_id = \(Self.quote(app)) AND image_id IN (\(list))")
            where row.count == 2 {
                guard let bytes = Base64.decode(row[1]), let table = SymbolTableBlob(bytes: bytes) else { continue }
                tables[row[0]] = table
            }
        }
        return tables
    }
}
