import Foundation

/// The symbol tables the ingest and the hang reads name frames with, kept in memory
/// between requests.
///
/// Only images the app uploaded symbols for are ever looked up: the list of those and their
/// upload times (one short read per app, kept 1 minute) bounds every request, however many
/// images devices invented. Tables are held up to ``capacity`` bytes in all, as
/// ``SymbolTableBlob/memoryBytes`` counts them, the least recently *used* dropped first; a
/// table held stays valid while the list gives its image the upload time it was read at.
///
/// A request never drops a table it uses itself: when the tables one request names do not
/// all fit, those already held stay and the ones it had to read are handed back without
/// being kept. So an app whose tables are larger than the capacity keeps a stable part of
/// them held, and each batch reads only the rest. (Before issue 43 the cache held 2 million
/// symbols, dropped the least recently *loaded* first and reloaded every table after 10
/// minutes: above its capacity each table a batch read pushed out another the same batch
/// needed, and every batch naming the app's images read and decoded all of them, 127–160 ms
/// of CPU instead of 3 ms; docs/benchmarks.md, "Symbol cache".)
///
/// An upload through this collector shows at once (``forget(app:)``, which also stops a
/// read under way from keeping what it read before); one through another collector of a
/// shared store within a minute.
public actor SymbolCache {
    private struct Entry {
        var table: SymbolTableBlob
        /// The image's upload time when the table was read (``SymbolImageRecord/uploadedAt``).
        var uploadedAt: String
        /// When it was last used, by ``useCounter``.
        var lastUse: Int
    }

    /// Tables held, by app and image id.
    private var tables: [String: Entry] = [:]
    /// ``SymbolTableBlob/memoryBytes`` of the tables held.
    public private(set) var bytesHeld = 0
    private var useCounter = 0
    /// An image's upload, as the list of an app's images gives it.
    private struct Upload {
        var uploadedAt: String
        var name: String
    }

    /// Per app: each image with symbols, by id, and when the list was read (Unix seconds).
    private var uploaded: [String: (images: [String: Upload], loadedAt: Double)] = [:]
    /// Per app: bumped by ``forget(app:)``; a read that began before does not keep its tables.
    private var generations: [String: Int] = [:]
    /// Most bytes of tables held at once (``SymbolTableBlob/memoryBytes``).
    public let capacity: Int
    private let clock: @Sendable () -> Double

    /// The default ``capacity``: 256 MiB, about 2.7 million symbols with 70-byte names.
    public static let defaultCapacity = 256 << 20

    /// A cache of at most `capacity` bytes of tables (``SymbolTableBlob/memoryBytes``).
    /// - Parameter clock: The current time, Unix seconds (when the image list is read again).
    public init(capacity: Int = SymbolCache.defaultCapacity, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.capacity = capacity
        self.clock = clock
    }

    /// `app`'s images with uploaded symbols: image id → file name (the list kept 1 minute).
    public func uploadedImages(app: String, store: any SymbolStore) async throws -> [String: String] {
        try await uploadList(app: app, store: store).mapValues(\.name)
    }

    /// `app`'s images with uploaded symbols, read from `store` when not read in the last minute.
    private func uploadList(app: String, store: any SymbolStore) async throws -> [String: Upload] {
        let now = clock()
        if let known = uploaded[app], now - known.loadedAt < 60 { return known.images }
        let generation = generations[app, default: 0]
        let records = try await store.symbolImages(app: app)
        let images = Dictionary(records.map { ($0.id, Upload(uploadedAt: $0.uploadedAt, name: $0.name)) }, uniquingKeysWith: { first, _ in first })
        if generations[app, default: 0] == generation { uploaded[app] = (images, now) }
        return images
    }

    /// The tables of `app`'s images among `ids` that have uploaded symbols, read from
    /// `store` when not held or uploaded again since.
    public func tables(app: String, ids: Set<String>, store: any SymbolStore) async throws -> [String: SymbolTableBlob] {
        let generation = generations[app, default: 0]
        let list = try await uploadList(app: app, store: store)
        var found: [String: SymbolTableBlob] = [:]
        var missing: Set<String> = []
        var inUse: Set<String> = []
        for id in ids {
            guard let uploadedAt = list[id]?.uploadedAt else { continue }
            let key = key(app, id)
            if let entry = tables[key], entry.uploadedAt == uploadedAt {
                useCounter += 1
                tables[key]?.lastUse = useCounter
                found[id] = entry.table
                inUse.insert(key)
            } else {
                missing.insert(id)
            }
        }
        guard !missing.isEmpty else { return found }
        let loaded = try await store.symbolTables(app: app, ids: missing)
        // Tables read are kept in id order while they fit beside those this request uses.
        for id in loaded.keys.sorted() {
            guard let table = loaded[id] else { continue }
            found[id] = table
            guard generations[app, default: 0] == generation, let uploadedAt = list[id]?.uploadedAt else { continue }
            let key = key(app, id)
            if keep(key, Entry(table: table, uploadedAt: uploadedAt, lastUse: 0), protecting: inUse) { inUse.insert(key) }
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

    /// Whether the table of `app`'s image `id` is held (for tests).
    public func holds(app: String, id: String) -> Bool { tables[key(app, id)] != nil }

    private func key(_ app: String, _ id: String) -> String { app + "\u{0}" + id }

    /// Keeps `entry` under `key` when it fits within ``capacity`` after dropping the least
    /// recently used tables outside `protected`; returns whether it was kept.
    /// - Complexity: O(tables held) per table dropped.
    private func keep(_ key: String, _ entry: Entry, protecting protected: Set<String>) -> Bool {
        remove(key)
        let size = entry.table.memoryBytes
        guard size <= capacity else { return false }
        while bytesHeld + size > capacity {
            let victim = tables.lazy.filter { !protected.contains($0.key) }.min { $0.value.lastUse < $1.value.lastUse }
            guard let victim else { return false }
            remove(victim.key)
        }
        useCounter += 1
        var entry = entry
        entry.lastUse = useCounter
        tables[key] = entry
        bytesHeld += size
        return true
    }

    private func remove(_ key: String) {
        if let old = tables.removeValue(forKey: key) { bytesHeld -= old.table.memoryBytes }
    }
}
