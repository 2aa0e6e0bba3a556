import Foundation
import FramescopeCore
import GRDB

/// Hangs (migration v15): rows written with their visits, read as groups by signature.
extension SQLiteStore {
    /// Inserts `rows` for `app`; a key already stored for the app is skipped.
    static func insertHangs(_ rows: [HangRow], app: String, _ db: Database) throws {
        guard !rows.isEmpty else { return }
        let columns = keyColumns.joined(separator: ", ")
        let placeholders = keyColumns.map { _ in "?" }.joined(separator: ", ")
        let insert = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO hangs (app_id, hang_key, started_at, \(columns), tags, duration, fatal, source, signature,
                                         dominant_image_id, dominant_image, dominant_offset, samples, stack)
            VALUES (?, ?, ?, \(placeholders), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for row in rows {
            var arguments: StatementArguments = [app, row.key, row.startedAt]
            arguments += storedValues(row.dimensionValues)
            let dominant = row.summary.dominant
            arguments += [row.storedTags, row.duration, row.fatal, row.source.rawValue, row.summary.signature,
                          dominant?.imageId, dominant?.image, dominant.map { Int64(bitPattern: $0.lookupOffset) },
                          row.summary.samples, row.storedStack]
            try insert.execute(arguments: arguments)
        }
    }

    /// The `WHERE` clause (after `app_id = ?`) and its arguments for `query` and `source`.
    private static func hangFilter(_ query: EventQuery, source: HangSource) -> (String, StatementArguments) {
        var sql = " AND started_at >= ? AND started_at < ? AND source = ?"
        var arguments: StatementArguments = [query.screens.from, query.screens.to, source.rawValue]
        for dimension in QueryDimension.all {
            guard let value = query.screens[dimension] else { continue }
            sql += " AND \(dimension.storeColumn) = ?"
            arguments += [storedValue(value, of: dimension)]
        }
        // Keys and values are bound, never spliced: json_each lists the tags object's members.
        for (key, value) in query.tags.sorted(by: { $0.key < $1.key }) {
            sql += " AND EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.key = ? AND json_each.value = ? AND json_each.type = 'text')"
            arguments += [key, value]
        }
        return (sql, arguments)
    }

    public func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int) async throws -> [HangGroup] {
        let (filter, filterArguments) = Self.hangFilter(query, source: source)
        return try await database.read { db in
            let groups = try Row.fetchAll(db, sql: """
                SELECT signature, COUNT(*) AS hangs, SUM(fatal) AS fatal, SUM(duration) AS duration,
                       MIN(started_at) AS first_seen, MAX(started_at) AS last_seen,
                       json_group_array(DISTINCT screen) AS screens, json_group_array(DISTINCT app_version) AS versions
                FROM hangs WHERE app_id = ?\(filter)
                GROUP BY signature ORDER BY SUM(duration) DESC, signature LIMIT ?
                """, arguments: [app] + filterArguments + [max(0, limit)])
            let longest = try db.cachedStatement(sql: """
                SELECT stack FROM hangs WHERE app_id = ?\(filter) AND signature = ? ORDER BY duration DESC, id LIMIT 1
                """)
            return try groups.map { row in
                let signature: String = row["signature"]
                let stack = HangGroup.stack(stored: try String.fetchOne(longest, arguments: [app] + filterArguments + [signature]) ?? "[]")
                return HangGroup(signature: signature, hangs: row["hangs"], fatal: row["fatal"], duration: row["duration"],
                                 screens: Self.sortedTexts(json: row["screens"]), appVersions: Self.sortedTexts(json: row["versions"]),
                                 firstSeen: row["first_seen"], lastSeen: row["last_seen"],
                                 dominant: HangGroup.dominant(of: signature, in: stack),
                                 stack: stack)
            }
        }
    }

    /// A JSON array of strings, in byte order.
    private static func sortedTexts(json: String) -> [String] {
        ((try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []).sorted { StoredText($0) < StoredText($1) }
    }

    public func hangCount(app: String) async throws -> Int {
        try await database.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM hangs WHERE app_id = ?", arguments: [app]) ?? 0
        }
    }

    public func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM hangs WHERE id IN (SELECT id FROM hangs WHERE started_at < ? ORDER BY started_at LIMIT ?)",
                           arguments: [cutoff, limit])
            return db.changesCount
        }
    }
}
