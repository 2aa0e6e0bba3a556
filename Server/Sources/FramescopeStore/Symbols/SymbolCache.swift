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
/// all fit, those already held stay, and of each other table stored in chunks only the
/// index is held and only the chunks its frames fall in are read
/// (``tables(app:lookups:store:)``). So an app whose tables are larger than the capacity
/// keeps a stable part of them held, and a batch reads a few chunks of the rest, whatever
/// their size. A table stored whole (uploaded before the stores kept chunks) that does not
/// fit is read whole and handed back without being kept. (Before issue 43 the cache held 2
/// million symbols, dropped the least recently *loaded* first and reloaded every table
/// after 10 minutes: above its capacity each table a batch read pushed out another the same
/// batch needed, and every batch naming the app's images read and decoded all of them,
/// 127–160 ms of CPU instead of 3 ms; docs/benchmarks.md, "Symbol cache".)
///
/// An upload through this collector shows at once (``forget(app:)``, which also stops a
/// read under way from keeping what it read before); one through another collector of a
/// shared store within a minute.
public actor SymbolCache {
    /// What is held for one image: its whole table, or (when the table does not fit) the
    /// index of its chunks.
    private enum Held {
        case table(SymbolTableBlob)
        case index(SymbolTableIndex)

        var memoryBytes: Int {
            switch self {
            case let .table(table): table.memoryBytes
            case let .index(index): index.memoryBytes
            }
        }
    }

    private struct Entry {
        var held: Held
        /// The image's upload time when it was read (``SymbolImageRecord/uploadedAt``).
        var uploadedAt: String
        /// When it was last used, by ``useCounter``.
        var lastUse: Int
    }

    /// Tables and indexes held, by app and image id.
    private var tables: [String: Entry] = [:]
    /// ``SymbolTableBlob/memoryBytes`` and ``SymbolTableIndex/memoryBytes`` of what is held.
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
    /// Most bytes of tables and indexes held at once (``SymbolTableBlob/memoryBytes``).
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

    /// The tables to look up `lookups` in: for each of `app`'s images among its keys that
    /// has uploaded symbols, a table that answers ``SymbolTableBlob/name(at:)`` for each of
    /// the offsets given for it (bytes from the image's base) as the image's whole table
    /// would.
    ///
    /// A table held, or one that fits beside those this request uses, is the whole table,
    /// read from `store` when not held or uploaded again since. A table stored in chunks that
    /// does not fit is the part of it those offsets fall in: its index is held (8 bytes per
    /// 256 symbols) and only the chunks the offsets fall in are read, each time, so a lookup
    /// past the capacity costs the chunks it reads (about 18 KiB each), not the table's size
    /// (up to ``chunksReadApart`` chunks, or a quarter of them; past that, one whole read).
    /// A table stored whole before the stores kept chunks is read whole when not held.
    /// - Parameter lookups: Image id → the offsets the request will look up in it.
    public func tables(app: String, lookups: [String: Set<UInt64>], store: any SymbolStore) async throws -> [String: SymbolTableBlob] {
        let generation = generations[app, default: 0]
        let list = try await uploadList(app: app, store: store)
        var found: [String: SymbolTableBlob] = [:]
        var missing: Set<String> = []
        var chunked: [String: SymbolTableIndex] = [:]
        var inUse: Set<String> = []
        for id in lookups.keys {
            guard let uploadedAt = list[id]?.uploadedAt else { continue }
            let key = key(app, id)
            if let entry = tables[key], entry.uploadedAt == uploadedAt {
                useCounter += 1
                tables[key]?.lastUse = useCounter
                inUse.insert(key)
                switch entry.held {
                case let .table(table): found[id] = table
                case let .index(index): chunked[id] = index
                }
            } else {
                missing.insert(id)
            }
        }
        if !missing.isEmpty {
            // Indexes first (a short read): a table in chunks is read whole only when it fits.
            let indexes = try await store.symbolIndexes(app: app, ids: missing)
            var whole = missing
            var planned = 0  // bytes of the tables in chunks this request reads whole, to keep
            for id in indexes.keys.sorted() {
                guard let index = indexes[id] else { continue }
                let key = key(app, id)
                if canKeep(planned + index.tableMemoryBytes, replacing: key, protecting: inUse) {
                    planned += index.tableMemoryBytes
                    continue
                }
                whole.remove(id)
                chunked[id] = index
                if generations[app, default: 0] == generation, let uploadedAt = list[id]?.uploadedAt,
                   keep(key, Entry(held: .index(index), uploadedAt: uploadedAt, lastUse: 0), protecting: inUse) {
                    inUse.insert(key)
                }
            }
            if !whole.isEmpty {
                let loaded = try await store.symbolTables(app: app, ids: whole)
                // Tables read are kept in id order while they fit beside those this request uses.
                for id in loaded.keys.sorted() {
                    guard let table = loaded[id] else { continue }
                    found[id] = table
                    guard generations[app, default: 0] == generation, let uploadedAt = list[id]?.uploadedAt else { continue }
                    let key = key(app, id)
                    if keep(key, Entry(held: .table(table), uploadedAt: uploadedAt, lastUse: 0), protecting: inUse) { inUse.insert(key) }
                }
            }
        }
        var wholeAfterAll: Set<String> = []
        for (id, index) in chunked.sorted(by: { $0.key < $1.key }) {
            let numbers = Set((lookups[id] ?? []).compactMap(index.chunk(holding:)))
            // Frames in more than a quarter of the chunks (and more than 64): one read of the
            // table costs less than that many reads of its parts.
            guard numbers.count <= max(Self.chunksReadApart, index.chunkCount / 4) else {
                wholeAfterAll.insert(id)
                continue
            }
            let read = numbers.isEmpty ? [:] : try await store.symbolChunks(app: app, id: id, chunks: numbers)
            // A chunk that is not the index's (the image uploaded again meanwhile) is left out:
            // its offsets find no name until the list shows the new upload.
            let parts = numbers.sorted().compactMap { number in read[number].flatMap { index.isChunk(number, $0) ? $0 : nil } }
            // Chunks that pass ``SymbolTableIndex/isChunk(_:_:)`` lie in order, and join.
            found[id] = SymbolTableBlob(joining: parts) ?? SymbolTableBlob([SymbolUpload.Symbol]())
        }
        // Read for this request, not kept: they do not fit.
        if !wholeAfterAll.isEmpty { found.merge(try await store.symbolTables(app: app, ids: wholeAfterAll)) { _, whole in whole } }
        return found
    }

    /// Most chunks of one table a request reads one by one, or a quarter of the table's
    /// chunks when that is more; past it the table is read whole (not kept), so a request
    /// naming frames all over a table never costs more than about one read of it.
    public static let chunksReadApart = 64

    /// Drops what is held for `app` (after an upload), and keeps a read under way from
    /// storing what it read before.
    public func forget(app: String) {
        generations[app, default: 0] += 1
        uploaded[app] = nil
        let prefix = app + "\u{0}"
        for key in tables.keys where key.hasPrefix(prefix) { remove(key) }
    }

    /// Whether the whole table of `app`'s image `id` is held (for tests).
    public func holds(app: String, id: String) -> Bool {
        if case .table = tables[key(app, id)]?.held { return true }
        return false
    }

    /// Whether only the index of `app`'s image `id`'s chunks is held (for tests).
    public func holdsIndex(app: String, id: String) -> Bool {
        if case .index = tables[key(app, id)]?.held { return true }
        return false
    }

    private func key(_ app: String, _ id: String) -> String { app + "\u{0}" + id }

    /// Whether `size` bytes could be kept under `key` within ``capacity`` by dropping tables
    /// outside `protected` (what ``keep(_:_:protecting:)`` would do).
    private func canKeep(_ size: Int, replacing key: String, protecting protected: Set<String>) -> Bool {
        guard size <= capacity else { return false }
        let droppable = tables.reduce(0) { sum, entry in
            protected.contains(entry.key) && entry.key != key ? sum : sum + entry.value.held.memoryBytes
        }
        return bytesHeld - droppable + size <= capacity
    }

    /// Keeps `entry` under `key` when it fits within ``capacity`` after dropping the least
    /// recently used entries outside `protected`; returns whether it was kept.
    /// - Complexity: O(entries held) per entry dropped.
    private func keep(_ key: String, _ entry: Entry, protecting protected: Set<String>) -> Bool {
        remove(key)
        let size = entry.held.memoryBytes
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
        if let old = tables.removeValue(forKey: key) { bytesHeld -= old.held.memoryBytes }
    }
}
