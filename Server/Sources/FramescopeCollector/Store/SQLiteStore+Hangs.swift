import Foundation
import FramescopeCore
import GRDB

/// Hangs (migrations v15, v18): rows written with their visits, read as groups by signature.
/// A row refers to its tags (`tags_id`, a `hang_tags` row: each distinct tags object of an
/// app stored once) and keeps `''` in its own `tags`.
extension SQLiteStore {
    /// Inserts `rows` for `app`; a key already stored for the app is skipped. Each distinct
    /// tags object among them is looked up (or added) once in `hang_tags`, so a visit's 32
    /// hangs store its tags once, not 32 times.
    static func insertHangs(_ rows: [HangRow], app: String, _ db: Database) throws {
        guard !rows.isEmpty else { return }
        let columns = keyColumns.joined(separator: ", ")
        let placeholders = keyColumns.map { _ in "?" }.joined(separator: ", ")
        let insert = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO hangs (app_id, hang_key, started_at, \(columns), tags, tags_id, duration, fatal, source, signature,
                                         dominant_image_id, dominant_image, dominant_offset, samples, stack)
            VALUES (?, ?, ?, \(placeholders), '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let addTags = try db.cachedStatement(sql: "INSERT INTO hang_tags (app_id, tags) VALUES (?, ?) ON CONFLICT (app_id, tags) DO NOTHING")
        let findTags = try db.cachedStatement(sql: "SELECT id FROM hang_tags WHERE app_id = ? AND tags = ?")
        var tagIDs: [String: Int64] = [:]
        for row in rows {
            let tags = row.storedTags
            let tagsID: Int64
            if let known = tagIDs[tags] { tagsID = known } else {
                try addTags.execute(arguments: [app, tags])
                guard let found = try Int64.fetchOne(findTags, arguments: [app, tags]) else {
                    throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "hang_tags: the row just added for a tags object was not found")
                }
                tagIDs[tags] = found
                tagsID = found
            }
            var arguments: StatementArguments = [app, row.key, row.startedAt]
            arguments += storedValues(row.dimensionValues)
            let dominant = row.summary.dominant
            arguments += [tagsID, row.duration, row.fatal, row.source.rawValue, row.summary.signature,
                          dominant?.imageId, dominant?.image, dominant.map { Int64(bitPattern: $0.lookupOffset) },
                          row.summary.samples, row.storedStack]
            try insert.execute(arguments: arguments)
        }
    }

    /// The `WHERE` clause (after `app_id = ?`) and its arguments for `query` and `source`.
    static func hangFilter(_ query: EventQuery, source: HangSource) -> (String, StatementArguments) {
        var sql = " AND started_at >= ? AND started_at < ? AND source = ?"
        var arguments: StatementArguments = [query.screens.from, query.screens.to, source.rawValue]
        for dimension in QueryDimension.all {
            guard let value = query.screens[dimension] else { continue }
            sql += " AND \(dimension.storeColumn) = ?"
            arguments += [storedValue(value, of: dimension)]
        }
        // Keys and values are bound, never spliced: json_each lists the members of the tags
        // object the hang refers to (its `hang_tags` row, by primary key).
        for (key, value) in query.tags.sorted(by: { $0.key < $1.key }) {
            sql += " AND EXISTS (SELECT 1 FROM hang_tags, json_each(hang_tags.tags) WHERE hang_tags.id = hangs.tags_id"
                + " AND json_each.key = ? AND json_each.value = ? AND json_each.type = 'text')"
            arguments += [key, value]
        }
        return (sql, arguments)
    }

    public func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int, mergeable: Set<String>) async throws -> [HangGroup] {
        let (filter, filterArguments) = Self.hangFilter(query, source: source)
        let ids = Self.jsonArray(mergeable.sorted())
        return try await database.read { db in
            // Totals per signature, by the app and start index. Only `limit` groups of hangs whose
            // dominant image has no symbols (nothing can merge them), and up to the most a merge
            // reads of those whose image has (symbols may join them into one function).
            var groups = try Row.fetchAll(db, sql: Self.hangTotalsSQL(filter: filter, mergeable: false),
                                          arguments: [app] + filterArguments + [ids, max(0, limit)])
            if !mergeable.isEmpty {
                groups += try Row.fetchAll(db, sql: Self.hangTotalsSQL(filter: filter, mergeable: true),
                                           arguments: [app] + filterArguments + [ids, HangsResponse.maximumLimit])
            }
            guard !groups.isEmpty else { return [] }
            let signatures: [String] = groups.map { $0["signature"] }
            // Screens and versions by hangs, of the chosen groups only, through the signature index.
            var screens: [String: [StoredText: Int]] = [:], versions: [String: [StoredText: Int]] = [:]
            let places = try Row.fetchCursor(db, sql: """
                SELECT signature, screen, app_version, COUNT(*) FROM hangs INDEXED BY hangs_by_signature
                WHERE app_id = ? AND signature IN (SELECT value FROM json_each(?))\(filter)
                GROUP BY signature, screen, app_version
                """, arguments: [app, Self.jsonArray(signatures)] + filterArguments)
            while let row = try places.next() {
                let signature: String = row[0], count: Int = row[3]
                screens[signature, default: [:]][StoredText(row[1]), default: 0] += count
                versions[signature, default: [:]][StoredText(row[2]), default: 0] += count
            }
            // Each group's longest hangs, the candidates for the stack it shows: the signature
            // index read backwards (length, then id), never the start index (which read every hang).
            let longest = try db.cachedStatement(sql: Self.hangCandidatesSQL(filter: filter))
            return try groups.map { row in
                let signature: String = row["signature"]
                let candidates = try Row.fetchAll(longest, arguments: [app, signature] + filterArguments + [HangGroup.candidateCount])
                    .map { HangCandidate(key: $0[0], duration: $0[1], storedStack: $0[2]) }
                let stack = HangGroup.representative(of: candidates)
                return HangGroup(signature: signature, hangs: row["hangs"], fatal: row["fatal"], duration: row["duration"],
                                 screens: HangGroup.byHangs(screens[signature] ?? [:]), appVersions: HangGroup.byHangs(versions[signature] ?? [:]),
                                 firstSeen: row["first_seen"], lastSeen: row["last_seen"],
                                 dominant: HangGroup.dominant(of: signature, in: stack),
                                 stack: stack)
            }
        }
    }

    /// Totals per signature of the hangs matching `filter` (after `app_id = ?`), by total
    /// time, `LIMIT ?`: of the groups whose dominant image is in the JSON array bound after
    /// the filter's arguments (`mergeable`), or of the others. Read by the app and start
    /// index, which the range narrows.
    static func hangTotalsSQL(filter: String, mergeable: Bool) -> String {
        let scope = mergeable ? "dominant_image_id IN (SELECT value FROM json_each(?))"
            : "(dominant_image_id IS NULL OR dominant_image_id NOT IN (SELECT value FROM json_each(?)))"
        return """
            SELECT signature, COUNT(*) AS hangs, SUM(fatal) AS fatal, SUM(duration) AS duration,
                   MIN(started_at) AS first_seen, MAX(started_at) AS last_seen
            FROM hangs INDEXED BY hangs_by_app_start WHERE app_id = ?\(filter) AND \(scope)
            GROUP BY signature ORDER BY SUM(duration) DESC, signature LIMIT ?
            """
    }

    /// One group's longest hangs matching `filter` (after `app_id = ? AND signature = ?`),
    /// `LIMIT ?`: the signature index read backwards (length, then id), never the start
    /// index, on which SQLite planned it before and read every hang of the app for each group.
    static func hangCandidatesSQL(filter: String) -> String {
        """
        SELECT hang_key, duration, stack FROM hangs INDEXED BY hangs_by_signature
        WHERE app_id = ? AND signature = ?\(filter) ORDER BY duration DESC, id DESC LIMIT ?
        """
    }

    /// `texts` as a JSON array (bound as one argument and read with `json_each`, so a list of
    /// any length is one parameter).
    private static func jsonArray(_ texts: [String]) -> String {
        var out = JSONWriter()
        out.raw("[")
        for (index, text) in texts.enumerated() {
            if index > 0 { out.raw(",") }
            out.string(text)
        }
        out.raw("]")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    public func hangCount(app: String) async throws -> Int {
        try await database.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM hangs WHERE app_id = ?", arguments: [app]) ?? 0
        }
    }

    /// Deletes up to `limit` hangs that started before `cutoff` (Unix seconds), oldest first,
    /// then the tags objects (`hang_tags`) those hangs referred to that no hang refers to any
    /// more (by the `tags_id` index). Returns the hangs deleted.
    public func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await database.write { db in
            let old = "SELECT id FROM hangs WHERE started_at < ? ORDER BY started_at LIMIT ?"
            let tagIDs = try Int64.fetchAll(db, sql: "SELECT DISTINCT tags_id FROM hangs WHERE id IN (\(old)) AND tags_id IS NOT NULL",
                                            arguments: [cutoff, limit])
            try db.execute(sql: "DELETE FROM hangs WHERE id IN (\(old))", arguments: [cutoff, limit])
            let deleted = db.changesCount
            let orphan = try db.cachedStatement(sql: """
                DELETE FROM hang_tags WHERE id = ? AND NOT EXISTS (SELECT 1 FROM hangs INDEXED BY hangs_by_tags WHERE tags_id = ?)
                """)
            for id in tagIDs { try orphan.execute(arguments: [id, id]) }
            return deleted
        }
    }
}
