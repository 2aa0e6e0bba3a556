import Foundation
import FramescopeCore
import FramescopeStore

/// Hangs (migration 3): rows inserted before their visits' events, read as groups by
/// signature with `FINAL`, so a hang inserted twice (a retried flush, a fatal hang sent
/// again) counts once.
extension ClickHouseStore {
    /// The columns of a `hangs` insert, in order (`hour` is computed by the server).
    static let hangColumns = ["app_id", "hang_key", "started_at"] + QueryDimension.all.map(\.storeColumn)
        + ["event_tag_keys", "event_tag_values", "duration", "fatal", "source", "signature", "dominant_image_id", "dominant_image",
           "dominant_offset", "samples", "stack"]

    /// Inserts `rows` of `app` as one block; nothing for none. A hang that starts outside
    /// 1970–2106 (never validated) is left out.
    func insertHangs(_ rows: [HangRow], app: String) async throws {
        var writer = RowBinaryWriter()
        var any = false
        for row in rows where row.startedAt >= 0 && row.startedAt < 4_294_967_296 {
            any = true
            writer.append(app)
            writer.append(row.key)
            writer.append(row.startedAt)
            for (dimension, value) in zip(QueryDimension.all, row.dimensionValues) {
                if dimension.values == .boolean { writer.append(UInt8(value == "true" ? 1 : 0)) } else { writer.append(value) }
            }
            let tags = row.tags.sorted { $0.key < $1.key }
            writer.append(strings: tags.map(\.key))
            writer.append(strings: tags.map(\.value))
            writer.append(row.duration)
            writer.append(UInt8(row.fatal ? 1 : 0))
            writer.append(row.source.rawValue)
            writer.append(row.summary.signature)
            writer.append(row.summary.dominant?.imageId ?? "")
            writer.append(row.summary.dominant?.image ?? "")
            writer.append(row.summary.dominant?.lookupOffset ?? 0)
            writer.append(UInt32(clamping: row.summary.samples))
            writer.append(row.storedStack)
        }
        guard any else { return }
        try await client.insert(into: "hangs", columns: Self.hangColumns, rows: writer.bytes, settings: insertSettings)
    }

    /// The condition for `app`'s hangs from `source` matching `query`.
    private static func hangCondition(app: String, query: EventQuery, source: HangSource) -> String {
        var condition = "app_id = \(quote(app)) AND started_at >= \(number(query.screens.from)) AND started_at < \(number(query.screens.to))"
            + " AND source = \(quote(source.rawValue))"
        for dimension in QueryDimension.all {
            guard let value = query.screens[dimension] else { continue }
            condition += dimension.values == .boolean
                ? " AND \(dimension.storeColumn) = \(value == "true" ? 1 : 0)"
                : " AND \(dimension.storeColumn) = \(quote(value))"
        }
        for (key, value) in query.tags.sorted(by: { $0.key < $1.key }) {
            condition += " AND arrayExists((k, v) -> k = \(quote(key)) AND v = \(quote(value)), event_tag_keys, event_tag_values)"
        }
        return condition
    }

    public func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int, mergeable: Set<String>) async throws -> [HangGroup] {
        let condition = Self.hangCondition(app: app, query: query, source: source)
        let ids = mergeable.sorted().map(Self.quote).joined(separator: ", ")
        // Totals per signature: only `limit` groups of hangs whose dominant image has no
        // symbols (nothing can merge them), and up to the most a merge reads of the others.
        func totals(_ scope: String, limit: Int) async throws -> [[String]] {
            try await client.rows("""
                SELECT signature, count(), sum(fatal), sum(duration), min(started_at), max(started_at)
                FROM hangs FINAL WHERE \(condition) AND \(scope)
                GROUP BY signature ORDER BY sum(duration) DESC, signature LIMIT \(max(0, limit))
                """).filter { $0.count == 6 }
        }
        var groups = try await totals(mergeable.isEmpty ? "1" : "dominant_image_id NOT IN (\(ids))", limit: limit)
        if !mergeable.isEmpty { groups += try await totals("dominant_image_id IN (\(ids))", limit: HangsResponse.maximumLimit) }
        guard !groups.isEmpty else { return [] }
        let signatures = groups.map { Self.quote($0[0]) }.joined(separator: ", ")
        var screens: [String: [StoredText: Int]] = [:], versions: [String: [StoredText: Int]] = [:]
        for row in try await client.rows("""
            SELECT signature, screen, app_version, count() FROM hangs FINAL WHERE \(condition) AND signature IN (\(signatures))
            GROUP BY signature, screen, app_version
            """) where row.count == 4 {
            let count = Int(row[3]) ?? 0
            screens[row[0], default: [:]][StoredText(row[1]), default: 0] += count
            versions[row[0], default: [:]][StoredText(row[2]), default: 0] += count
        }
        // Each group's longest hangs (ties by key), the candidates for the stack it shows.
        var candidates: [String: [HangCandidate]] = [:]
        for row in try await client.rows("""
            SELECT signature, hang_key, duration, stack FROM hangs FINAL WHERE \(condition) AND signature IN (\(signatures))
            ORDER BY signature, duration DESC, hang_key LIMIT \(HangGroup.candidateCount) BY signature
            """) where row.count == 4 {
            candidates[row[0], default: []].append(HangCandidate(key: row[1], duration: Double(row[2]) ?? 0, storedStack: row[3]))
        }
        return groups.map { row in
            let stack = HangGroup.representative(of: candidates[row[0]] ?? [])
            return HangGroup(signature: row[0], hangs: Int(row[1]) ?? 0, fatal: Int(row[2]) ?? 0, duration: Double(row[3]) ?? 0,
                             screens: HangGroup.byHangs(screens[row[0]] ?? [:]), appVersions: HangGroup.byHangs(versions[row[0]] ?? [:]),
                             firstSeen: Double(row[4]) ?? 0, lastSeen: Double(row[5]) ?? 0,
                             dominant: HangGroup.dominant(of: row[0], in: stack), stack: stack)
        }
    }

    public func hangCount(app: String) async throws -> Int {
        Int(try await client.rows("SELECT count() FROM hangs FINAL WHERE app_id = \(Self.quote(app))").first?.first ?? "0") ?? 0
    }

    public func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int {
        guard cutoff > 0, limit > 0 else { return 0 }
        let condition = "started_at < \(Self.number(cutoff))"
        let old = try await count("hangs", where: condition)
        guard old > 0 else { return 0 }
        try await deleteRows("hangs", where: condition)
        return old
    }
}
