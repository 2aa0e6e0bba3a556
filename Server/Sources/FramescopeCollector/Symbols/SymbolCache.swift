import Foundation

/// The symbol tables the hangs route reads, kept in memory between requests: a table
/// found is kept 10 minutes, an image without one 1 minute (so an upload made through
/// another collector of a shared store shows within a minute; one made here shows at
/// once, ``forget(app:)``), at most ``capacity`` symbols in all, the oldest dropped first.
public actor SymbolCache {
    private struct Entry {
        var table: SymbolTableBlob?
        var loadedAt: Double
    }

    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var symbols = 0
    /// Most symbols held at once.
    public let capacity: Int
    private let clock: @Sendable () -> Double

    /// A cache of at most `capacity` symbols (default 4 million, some 200 MB).
    public init(capacity: Int = 4_000_000, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.capacity = capacity
        self.clock = clock
    }

    /// The tables of `app`'s images among `ids` (absent where none was uploaded), read from
    /// `store` for those not held or expired.
    public func tables(app: String, ids: Set<String>, store: any SymbolStore) async throws -> [String: SymbolTableBlob] {
        let now = clock()
        var found: [String: SymbolTableBlob] = [:]
        var missing: Set<String> = []
        for id in ids {
            if let entry = entries[key(app, id)], now - entry.loadedAt < (entry.table == nil ? 60 : 600) {
                if let table = entry.table { found[id] = table }
            } else {
                missing.insert(id)
            }
        }
        guard !missing.isEmpty else { return found }
        let loaded = try await store.symbolTables(app: app, ids: missing)
        for id in missing {
            put(key(app, id), Entry(table: loaded[id], loadedAt: now))
            if let table = loaded[id] { found[id] = table }
        }
        return found
    }

    /// Drops what is held for `app` (after an upload).
    public func forget(app: String) {
        let prefix = app + "\u{0}"
        for key in entries.keys where key.hasPrefix(prefix) { remove(key) }
        order.removeAll { entries[$0] == nil }
    }

    private func key(_ app: String, _ id: String) -> String { app + "\u{0}" + id }

    private func put(_ key: String, _ entry: Entry) {
        remove(key)
        order.removeAll { $0 == key }
        entries[key] = entry
        order.append(key)
        symbols += entry.table?.count ?? 0
        while symbols > capacity, let oldest = order.first {
            order.removeFirst()
            remove(oldest)
        }
    }

    private func remove(_ key: String) {
        if let old = entries.removeValue(forKey: key) { symbols -= old.table?.count ?? 0 }
    }
}
