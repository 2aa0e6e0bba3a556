import Foundation
import FramescopeStore

/// The control plane on ClickHouse: apps, keys, sessions, thresholds, alerts, webhooks,
/// deliveries, declared tags and MetricKit payloads, each a JSON record in the `control`
/// table under its kind, app and id.
///
/// ClickHouse has no transactions or unique keys, so a record is never updated in place: a
/// change inserts the whole record again with a higher version, and a deletion inserts a
/// tombstone. A read takes each id's newest version (`argMax`), which is exact whether or
/// not the `ReplacingMergeTree` has merged the old versions away yet, and on a cluster
/// whichever shards hold them. Versions are Unix nanoseconds, increasing within a process;
/// two collectors changing one record in the same instant both write, and the later version
/// wins (last writer wins; docs/decisions.md).
extension ClickHouseStore {
    /// One record as stored.
    struct ControlRow<Value> {
        /// The app it belongs to (empty for records of no app).
        var app: String
        /// Its id within its kind and app.
        var id: String
        /// Its content.
        var value: Value
    }

    /// Writes `records` of `kind` in one insert: each a new version of the record of its app
    /// and id, or its deletion where the value is `nil`.
    func putControl<Value: Encodable>(_ kind: String, _ records: [(app: String, id: String, value: Value?)]) async throws {
        guard !records.isEmpty else { return }
        var rows = RowBinaryWriter()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for record in records {
            rows.append(kind)
            rows.append(record.app)
            rows.append(record.id)
            rows.append(versions.next())
            rows.append(UInt8(record.value == nil ? 1 : 0))
            rows.append(try record.value.map { String(decoding: try encoder.encode($0), as: UTF8.self) } ?? "")
        }
        try await client.insert(into: "control", columns: ["kind", "app_id", "id", "version", "deleted", "body"], rows: rows.bytes, settings: insertSettings)
    }

    /// Writes one record of `kind` (or deletes it when `value` is `nil`).
    func putControl<Value: Encodable>(_ kind: String, app: String, id: String, _ value: Value?) async throws {
        try await putControl(kind, [(app: app, id: id, value: value)])
    }

    /// The live records of `kind`, newest version of each, optionally of one app and one id,
    /// sorted by app, then id.
    func control<Value: Decodable>(_ type: Value.Type, _ kind: String, app: String? = nil, id: String? = nil) async throws -> [ControlRow<Value>] {
        var sql = "SELECT app_id, id, argMax(body, version), argMax(deleted, version) FROM control WHERE kind = \(Self.quote(kind))"
        if let app { sql += " AND app_id = \(Self.quote(app))" }
        if let id { sql += " AND id = \(Self.quote(id))" }
        sql += " GROUP BY app_id, id HAVING argMax(deleted, version) = 0 ORDER BY app_id, id"
        let decoder = JSONDecoder()
        var result: [ControlRow<Value>] = []
        for row in try await client.rows(sql) where row.count == 4 && row[3] == "0" {
            result.append(ControlRow(app: row[0], id: row[1], value: try decoder.decode(Value.self, from: Data(row[2].utf8))))
        }
        return result
    }

    /// The live record of `kind`, `app` and `id`, or `nil`.
    func control<Value: Decodable>(_ type: Value.Type, _ kind: String, app: String, id: String) async throws -> Value? {
        try await control(type, kind, app: Optional(app), id: Optional(id)).first?.value
    }
}

/// Control record versions: Unix nanoseconds, one more than the last where the clock has not
/// moved on, so one process's writes are always ordered.
final class VersionClock: @unchecked Sendable {
    private let lock = NSLock()
    private var last: UInt64 = 0

    /// A version above every one handed out before.
    func next() -> UInt64 {
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1e9))
        return lock.withLock {
            last = max(last + 1, now)
            return last
        }
    }
}
