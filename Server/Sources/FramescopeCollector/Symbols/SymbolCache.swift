import Foundation

/// The symbol tables the hang reads name frames with, kept in memory between requests.
///
/// Only images the app uploaded symbols for are ever looked up: the list of those (one
/// short read, kept 1 minute) bounds every request, however many images devices invented.
/// A table found is kept 10 minutes, at most ``capacity`` symbols in all, the least
/// recently loaded dropped first. An upload through this collector shows at once
/// (``forget(app:)``, which also stops a read under way from storing what it read before);
/// one through another collector of a shared store within a minute.
public actor SymbolCache {
    private struct Entry {
        var table: SymbolTableBlob
        var loadedAt: Double
        var sequence: Int
    }

    private var tables: [String: Entry] = [:]
    /// Keys by load order (sequence); stale sequences are skipped when evicting.
    private var order: [(key: String, sequence: Int)] = []
    private var orderStart = 0
    private var nextSequence = 0
    private var symbols = 0
    /// Per app: the image ids with uploaded symbols and when they were read.
    private var uploaded: [String: (ids: Set<String>, loadedAt: Double)] = [:]
    /// Per app: bumped by ``forget(app:)``; a read that began before does not store.
    private var generations: [String: Int] = [:]
    /// Most symbols held at once.
    public let capacity: Int
    private let clock: @Sendable () -> Double

    /// A cache of at most `capacity` symbols (default 2 million).
    public init(capacity: Int = 2_000_000, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.capacity = capacity
        self.clock = clock
    }

    /// The tables of `app`'s images among `ids` that have uploaded symbols, read from
    /// `store` when not held or expired.
    public func tables(app: String, ids: Set<String>, store: any SymbolStore) async throws -> [String: SymbolTableBlob] {
        let generation = generations[app, default: 0]
        let now = clock()
        var known = uploaded[app]
        if known == nil || now - (known?.loadedAt ?? 0) >= 60 {
            let ids = Set(try await store.symbolImages(app: app).map(\.id))
            known = (ids, now)
            if generations[app, default: 0] == generation { uploaded[app] = (ids, now) }
        }
        let wanted = ids.intersection(known?.ids ?? [])
        var found: [String: SymbolTableBlob] = [:]
        var missing: Set<String> = []
        for id in wanted {
            if let entry = tables[key(app, id)], now - entry.loadedAt < 600 { found[id] = entry.table } else { missing.insert(id) }
        }
        guard !missing.isEmpty else { return found }
        let loaded = try await store.symbolTables(app: app, ids: missing)
        for (id, table) in loaded {
            found[id] = table
            if generations[app, default: 0] == generation { put(key(app, id), table, now: now) }
        }
        return found
    }

    /// Drops what is held for `app` (after an upload), and keeps a read under way from
    /// storing what it read before.
    public func forget(app: String) {
        generations[app, default: 0] += 1
        uploaded[app] = nil
        let prefix = app + "\u{0}"
        for key in tables.keys where key.hasPrefix(prefix) { remove(key) }
    }

    private func key(_ app: String, _ id: String) -> String { app + "\u{0}" + id }

    private func put(_ key: String, _ table: SymbolTableBlob, now: Double) {
        remove(key)
        nextSequence += 1
        tables[key] = Entry(table: table, loadedAt: now, sequence: nextSequence)
        order.append((key, nextSequence))
        symbols += table.count
        while symbols > capacity, orderStart < order.count {
            let (oldest, sequence) = order[orderStart]
            orderStart += 1
            if tables[oldest]?.sequence == sequence { remove(oldest) }
        }
        // Compact the order list once half of it is spent.
        if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }

    private func remove(_ key: String) {
        if let old = tables.removeValue(forKey: key) { symbols -= old.table.count }
    }
}
