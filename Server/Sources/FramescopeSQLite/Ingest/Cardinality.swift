import FramescopeCore
import FramescopeStore
import GRDB


/// The distinct values each app has used per day and dimension, and across the window, as
/// one SQLite write transaction sees them: the reads and writes around a
/// ``CardinalityLedger``, which decides, for a MetricKit upload (ingest loads its ledger for
/// the whole flush before ``IngestPlanner`` plans it: `SQLiteStore.loadLedger`).
///
/// The days: read once per (app, day, dimension) from `dimension_values`, extended as new
/// values are admitted, and written back in the same transaction. The window
/// (`dimension_window`, schema v14: one row per app, dimension and value with the last day
/// it was used): consulted only for a value new for its day, by primary key, and its count
/// read once per (app, dimension) in a transaction that meets a value new for the window.
/// A value seen before on the same day costs nothing more than before (docs/decisions.md,
/// "Window limits").
struct CardinalityGate {
    /// The decisions, and what this transaction has read.
    private(set) var ledger: CardinalityLedger
    /// Values looked up and found outside a full window, per app and dimension (not looked up again).
    private var refused: [String: [String: Set<StoredText>]] = [:]

    /// Values folded into `(other)` in this transaction, per app and dimension.
    var folded: [String: [String: Int]] { ledger.folded }

    var limits: CardinalityLimits { ledger.limits }

    init(limits: CardinalityLimits) {
        ledger = CardinalityLedger(limits: limits)
    }

    /// `value` when it is known or fits under the limits (recording it), else `(other)`.
    mutating func admit(_ value: String, app: String, day: Int64, dimension queryDimension: QueryDimension, _ db: Database) throws -> String {
        guard let limit = limits.limit(queryDimension) else { return value }
        return try admit(value, app: app, day: day, name: queryDimension.queryName, limit: limit, db)
    }

    /// Loads what the ledger needs to decide on `value` (the day's values; for a value new
    /// for its day with room left that day, its window membership and, when it is not in the
    /// window, the window's count), asks it, and writes an admitted new value back.
    private mutating func admit(_ value: String, app: String, day: Int64, name: String, limit: Int, _ db: Database) throws -> String {
        let key = CardinalityLedger.Key(app: app, day: day, name: name)
        if !ledger.hasLoaded(key) {
            ledger.load(try String.fetchAll(db, sql: "SELECT value FROM dimension_values WHERE app_id = ? AND day = ? AND dimension = ?",
                                            arguments: [app, day, name]).map(StoredText.init), for: key)
        }
        if ledger.isKnown(value, for: key) { return value }
        let windowLimit = limits.windowLimit(ledgerName: name)
        if windowLimit != nil, ledger.knownCount(for: key) < limit {
            try loadWindow(of: value, app: app, name: name, db)
        }
        let before = ledger.admitted.count
        let admitted = ledger.admit(value, app: app, day: day, name: name, limit: limit)
        guard ledger.admitted.count > before else { return admitted }
        try db.cachedStatement(sql: "INSERT INTO dimension_values (app_id, day, dimension, value) VALUES (?, ?, ?, ?)")
            .execute(arguments: [app, day, name, value])
        if windowLimit != nil {
            // In the window now (it was, or it entered): its row records `day` as its last
            // use, unless a later day is recorded.
            try db.cachedStatement(sql: """
                INSERT INTO dimension_window (app_id, dimension, value, last_day) VALUES (?, ?, ?, ?)
                ON CONFLICT (app_id, dimension, value) DO UPDATE SET last_day = MAX(last_day, excluded.last_day)
                """).execute(arguments: [app, name, value, day])
        }
        return admitted
    }

    /// Makes the ledger's window of `app`'s `name` say whether `value` is in it, and its
    /// count when it is not: by primary key, the count once per transaction.
    private mutating func loadWindow(of value: String, app: String, name: String, _ db: Database) throws {
        let text = StoredText(value)
        var window = ledger.window(app: app, name: name) ?? CardinalityLedger.Window(count: nil, members: [])
        guard !window.members.contains(text), refused[app]?[name]?.contains(text) != true else { return }
        let present = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM dimension_window WHERE app_id = ? AND dimension = ? AND value = ?)"),
                                        arguments: [app, name, value]) ?? false
        if present {
            window.members.insert(text)
        } else if window.count == nil {
            window.count = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM dimension_window WHERE app_id = ? AND dimension = ?"),
                                            arguments: [app, name]) ?? 0
        }
        if !present, let count = window.count, let windowLimit = limits.windowLimit(ledgerName: name), count >= windowLimit {
            refused[app, default: [:]][name, default: []].insert(text)
        }
        ledger.setWindow(window, app: app, name: name)
    }
}
