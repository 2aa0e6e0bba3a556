import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// Hangs (migrations v15, v18, v19): rows written with their visits, read as groups by
/// signature. A row keeps what is its own (start, length, source, signature, samples, a
/// 16-byte digest of its key) and refers to what many hangs share: its place (`context_id`, a
/// `hang_contexts` row of the visit's dimension values and its `hang_tags` row) and its
/// representative stack (`stack_id`, a `hang_stacks` row), each stored once per app.
extension SQLiteStore {
    /// Inserts `rows` for `app`; a key already stored for the app is skipped. Each distinct
    /// tags object, place and stack among them is looked up (or added) once, so a visit's 32
    /// hangs store its tags, dimension values and a shared stack once, not 32 times.
    static func insertHangs(_ rows: [HangRow], app: String, _ db: Database) throws {
        guard !rows.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO hangs (app_id, hang_key, started_at, context_id, duration, fatal, source, signature,
                                         dominant_image_id, dominant_image, dominant_offset, samples, stack_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var shared = SharedHangParts(app: app)
        for row in rows {
            let tagsID = try shared.tagsID(row.storedTags, db)
            let contextID = try shared.contextID(dimensionValues: row.dimensionValues, tagsID: tagsID, db)
            let stackID = try shared.stackID(row.storedStack, db)
            let dominant = row.summary.dominant
            try insert.execute(arguments: [app, MigrationV19.digest(row.key), row.startedAt, contextID, row.duration, row.fatal,
                                           row.source.rawValue, row.summary.signature, dominant?.imageId, dominant?.image,
                                           dominant.map { Int64(bitPattern: $0.lookupOffset) }, row.summary.samples, stackID])
        }
    }

    /// The rows of `hang_tags`, `hang_contexts` and `hang_stacks` one insert refers to, each
    /// looked up (or added) once per insert.
    private struct SharedHangParts {
        let app: String
        var tags: [String: Int64] = [:]
        var contexts: [[String]: Int64] = [:]
        var stacks: [String: Int64] = [:]

        init(app: String) { self.app = app }

        /// The id of the `hang_tags` row holding `tags` (a stored tags object) for the app.
        mutating func tagsID(_ text: String, _ db: Database) throws -> Int64 {
            if let known = tags[text] { return known }
            let id = try Self.idOfRow(db, table: "hang_tags", columns: ["app_id", "tags"], values: [app, text])
            tags[text] = id
            return id
        }

        /// The id of the `hang_contexts` row of `dimensionValues` (every ``QueryDimension``'s
        /// value in registry order, as admitted) and the tags row `tagsID`, for the app.
        mutating func contextID(dimensionValues: [String], tagsID: Int64, _ db: Database) throws -> Int64 {
            let key = dimensionValues + [String(tagsID)]
            if let known = contexts[key] { return known }
            var values: [any DatabaseValueConvertible] = [app]
            for (dimension, text) in zip(QueryDimension.all, dimensionValues) { values.append(SQLiteStore.storedValue(text, of: dimension)) }
            values.append(tagsID)
            let id = try Self.idOfRow(db, table: "hang_contexts", columns: ["app_id"] + SQLiteStore.keyColumns + ["tags_id"], values: values)
            contexts[key] = id
            return id
        }

        /// The id of the `hang_stacks` row holding `stack` (a stored stack) for the app, found
        /// by its digest.
        mutating func stackID(_ stack: String, _ db: Database) throws -> Int64 {
            if let known = stacks[stack] { return known }
            let id = try Self.idOfRow(db, table: "hang_stacks", columns: ["app_id", "digest"], values: [app, MigrationV19.digest(stack)],
                                      adding: ["stack": stack])
            stacks[stack] = id
            return id
        }

        /// The id of the row of `table` whose `columns` (its unique key) hold `values`, added
        /// first, with the `adding` columns beside them, when there is none.
        private static func idOfRow(_ db: Database, table: String, columns: [String], values: [any DatabaseValueConvertible],
                                    adding extra: KeyValuePairs<String, any DatabaseValueConvertible> = [:]) throws -> Int64 {
            let names = columns.joined(separator: ", ")
            let inserted = columns + extra.map(\.key)
            let add = try db.cachedStatement(sql: """
                INSERT INTO \(table) (\(inserted.joined(separator: ", "))) VALUES (\(inserted.map { _ in "?" }.joined(separator: ", ")))
                ON CONFLICT (\(names)) DO NOTHING
                """)
            let arguments = StatementArguments(values)
            try add.execute(arguments: StatementArguments(values + extra.map(\.value)))
            let find = try db.cachedStatement(sql: "SELECT id FROM \(table) WHERE " + columns.map { "\($0) = ?" }.joined(separator: " AND "))
            guard let id = try Int64.fetchOne(find, arguments: arguments) else {
                throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "\(table): the row just added was not found")
            }
            return id
        }
    }

    /// The `WHERE` clause (after `app_id = ?`) and its arguments for `app`'s hangs matching
    /// `query` and `source`. Dimension values and tags are a hang's context's: one
    /// uncorrelated `context_id IN (…)` over the app's contexts (by the unique index, which
    /// begins with the app), evaluated once, never a lookup per hang.
    static func hangFilter(_ query: EventQuery, source: HangSource, app: String) -> (String, StatementArguments) {
        var sql = " AND started_at >= ? AND started_at < ? AND source = ?"
        var arguments: StatementArguments = [query.screens.from, query.screens.to, source.rawValue]
        var context = ""
        var contextArguments: StatementArguments = [app]
        for dimension in QueryDimension.all {
            guard let value = query.screens[dimension] else { continue }
            context += " AND c.\(dimension.storeColumn) = ?"
            contextArguments += [storedValue(value, of: dimension)]
        }
        // Keys and values are bound, never spliced: json_each lists the members of the tags
        // object the context refers to (its `hang_tags` row, by primary key).
        for (key, value) in query.tags.sorted(by: { $0.key < $1.key }) {
            context += " AND EXISTS (SELECT 1 FROM hang_tags t, json_each(t.tags) WHERE t.id = c.tags_id"
                + " AND json_each.key = ? AND json_each.value = ? AND json_each.type = 'text')"
            contextArguments += [key, value]
        }
        if !context.isEmpty {
            sql += " AND context_id IN (SELECT c.id FROM hang_contexts c WHERE c.app_id = ?\(context))"
            arguments += contextArguments
        }
        return (sql, arguments)
    }

    public func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int, mergeable: Set<String>) async throws -> [HangGroup] {
        let (filter, filterArguments) = Self.hangFilter(query, source: source, app: app)
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
            // Screens and versions by hangs, of the chosen groups only, through the signature index:
            // hangs counted by context, then the contexts read by primary key.
            var byContext: [(signature: String, context: Int64, hangs: Int)] = []
            let places = try Row.fetchCursor(db, sql: """
                SELECT signature, context_id, COUNT(*) FROM hangs INDEXED BY hangs_by_signature
                WHERE app_id = ? AND signature IN (SELECT value FROM json_each(?))\(filter)
                GROUP BY signature, context_id
                """, arguments: [app, Self.jsonArray(signatures)] + filterArguments)
            while let row = try places.next() { byContext.append((row[0], row[1], row[2])) }
            var contexts: [Int64: (screen: StoredText, version: StoredText)] = [:]
            let contextList = Self.jsonArray(Set(byContext.map(\.context)).sorted().map(String.init))
            let rows = try Row.fetchCursor(db, sql: "SELECT id, screen, app_version FROM hang_contexts WHERE id IN (SELECT CAST(value AS INTEGER) FROM json_each(?))",
                                           arguments: [contextList])
            while let row = try rows.next() { contexts[row[0]] = (StoredText(row[1]), StoredText(row[2])) }
            var screens: [String: [StoredText: Int]] = [:], versions: [String: [StoredText: Int]] = [:]
            for (signature, context, hangs) in byContext {
                guard let place = contexts[context] else { continue }
                screens[signature, default: [:]][place.screen, default: 0] += hangs
                versions[signature, default: [:]][place.version, default: 0] += hangs
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
    /// Each candidate's key is its digest in hex, its stack read from `hang_stacks` by id.
    static func hangCandidatesSQL(filter: String) -> String {
        """
        SELECT hex(hang_key), duration, (SELECT stack FROM hang_stacks WHERE hang_stacks.id = stack_id)
        FROM hangs INDEXED BY hangs_by_signature
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
    /// then what only they referred to: their contexts and stacks no hang refers to any more
    /// (by the `context_id` and `stack_id` indexes), then the tags objects no context refers
    /// to (by `tags_id`). Returns the hangs deleted.
    public func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        try await database.write { db in
            let old = "SELECT id FROM hangs WHERE started_at < ? ORDER BY started_at LIMIT ?"
            let contextIDs = try Int64.fetchAll(db, sql: "SELECT DISTINCT context_id FROM hangs WHERE id IN (\(old))", arguments: [cutoff, limit])
            let stackIDs = try Int64.fetchAll(db, sql: "SELECT DISTINCT stack_id FROM hangs WHERE id IN (\(old))", arguments: [cutoff, limit])
            try db.execute(sql: "DELETE FROM hangs WHERE id IN (\(old))", arguments: [cutoff, limit])
            let deleted = db.changesCount
            var tagIDs: Set<Int64> = []
            let tagsOf = try db.cachedStatement(sql: "SELECT tags_id FROM hang_contexts WHERE id = ?")
            let orphanContext = try db.cachedStatement(sql: """
                DELETE FROM hang_contexts WHERE id = ? AND NOT EXISTS (SELECT 1 FROM hangs INDEXED BY hangs_by_context WHERE context_id = ?)
                """)
            for id in contextIDs {
                let tags = try Int64.fetchOne(tagsOf, arguments: [id])
                try orphanContext.execute(arguments: [id, id])
                if db.changesCount > 0, let tags { tagIDs.insert(tags) }
            }
            let orphanTags = try db.cachedStatement(sql: """
                DELETE FROM hang_tags WHERE id = ? AND NOT EXISTS (SELECT 1 FROM hang_contexts INDEXED BY hang_contexts_by_tags WHERE tags_id = ?)
                """)
            for id in tagIDs { try orphanTags.execute(arguments: [id, id]) }
            let orphanStack = try db.cachedStatement(sql: """
                DELETE FROM hang_stacks WHERE id = ? AND NOT EXISTS (SELECT 1 FROM hangs INDEXED BY hangs_by_stack WHERE stack_id = ?)
                """)
            for id in stackIDs { try orphanStack.execute(arguments: [id, id]) }
            return deleted
        }
    }
}
