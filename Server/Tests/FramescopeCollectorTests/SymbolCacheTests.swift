import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Synchronization
import Testing

/// What the symbol cache reads and keeps (issue 43, item 7): tables held by bytes, the ones a
/// batch uses never pushed out by the ones it reads, and no table read again while its upload
/// stands. Load figures are in docs/benchmarks.md ("Symbol cache"), not here.
@Suite("Symbol cache")
struct SymbolCacheTests {
    /// A symbol store that counts what it is asked for: tables kept whole (as stored before
    /// the stores kept chunks) or, with `chunkSymbols`, in chunks of that many symbols.
    final class CountingStore: SymbolStore, Sendable {
        let images: Mutex<[String: (symbols: [SymbolUpload.Symbol], uploadedAt: String)]>
        let chunkSymbols: Int?
        /// Image ids in the order their whole tables were read.
        let reads = Mutex<[String]>([])
        /// (image id, chunk) in the order chunks were read.
        let chunkReads = Mutex<[(String, Int)]>([])

        init(_ images: [String: [SymbolUpload.Symbol]], chunkSymbols: Int? = nil) {
            self.images = Mutex(images.mapValues { ($0, "2026-11-28T00:00:00.000Z") })
            self.chunkSymbols = chunkSymbols
        }

        func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {
            for image in images { self.images.withLock { $0[image.id] = (image.symbols, ISO8601.format(unixSeconds: now)) } }
        }

        func symbolImages(app: String) async throws -> [SymbolImageRecord] {
            images.withLock { images in
                images.map { SymbolImageRecord(id: $0.key, name: "Shop", arch: "arm64", symbols: $0.value.symbols.count, uploadedAt: $0.value.uploadedAt) }
            }
        }

        func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] {
            reads.withLock { $0 += ids.sorted() }
            return images.withLock { images in images.filter { ids.contains($0.key) }.mapValues { SymbolTableBlob($0.symbols) } }
        }

        func symbolIndexes(app: String, ids: Set<String>) async throws -> [String: SymbolTableIndex] {
            guard let chunkSymbols else { return [:] }
            return images.withLock { images in
                images.filter { ids.contains($0.key) }.mapValues { SymbolTableIndex.chunks(of: $0.symbols, chunkSymbols: chunkSymbols).index }
            }
        }

        func symbolChunks(app: String, id: String, chunks: Set<Int>) async throws -> [Int: SymbolTableBlob] {
            guard let chunkSymbols, let symbols = images.withLock({ $0[id]?.symbols }) else { return [:] }
            chunkReads.withLock { $0 += chunks.sorted().map { (id, $0) } }
            let ranges = SymbolTableIndex.chunks(of: symbols, chunkSymbols: chunkSymbols).chunks
            return Dictionary(uniqueKeysWithValues: chunks.filter(ranges.indices.contains).map { ($0, SymbolTableBlob(symbols[ranges[$0]])) })
        }

        func readCount(_ id: String) -> Int { reads.withLock { $0.filter { $0 == id }.count } }
        func chunkReadCount(_ id: String) -> Int { chunkReads.withLock { $0.filter { $0.0 == id }.count } }
    }

    /// An image id for `index`.
    static func id(_ index: Int) -> String { String(format: "%032x", 0xabc0 + index) }

    /// 1,000 symbols with 40-byte names, each 16 bytes long every 32 bytes.
    static func symbols(_ seed: Int) -> [SymbolUpload.Symbol] {
        (0..<1000).map { SymbolUpload.Symbol(offset: UInt64($0) * 32, size: 16, name: "function\(seed)_" + String(repeating: "x", count: 30) + String(format: "%04d", $0)) }
    }

    /// The table of ``symbols(_:)``.
    static func table(_ seed: Int) -> SymbolTableBlob { SymbolTableBlob(symbols(seed)) }

    /// A lookup of `offsets` in each of `ids`.
    static func lookups(_ ids: [String], _ offsets: Set<UInt64> = [7 * 32 + 3]) -> [String: Set<UInt64>] {
        Dictionary(uniqueKeysWithValues: ids.map { ($0, offsets) })
    }

    /// A clock the test moves, Unix seconds.
    final class TestClock: Sendable {
        let now = Mutex(1_764_300_000.0)
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
    }

    @Test("A table every batch uses stays held while other tables come and go, within the capacity in bytes")
    func hotTableStays() async throws {
        let tables = Dictionary(uniqueKeysWithValues: (0..<6).map { (Self.id($0), Self.table($0)) })
        let store = CountingStore(Dictionary(uniqueKeysWithValues: (0..<6).map { (Self.id($0), Self.symbols($0)) }))
        let size = tables[Self.id(0)]!.memoryBytes
        // Room for two tables and a half: the hot one and one other.
        let cache = SymbolCache(capacity: size * 5 / 2)
        for round in 1...20 {
            let other = Self.id(1 + round % 5)
            let found = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0), other]), store: store)
            #expect(found.count == 2)
            #expect(found[Self.id(0)]?.name(at: 32 * 7 + 3) == tables[Self.id(0)]?.name(at: 32 * 7))
            #expect(await cache.bytesHeld <= cache.capacity)
        }
        #expect(store.readCount(Self.id(0)) == 1, "the hot table was read \(store.readCount(Self.id(0))) times")
    }

    @Test("When a batch's tables stored whole exceed the capacity, those held stay and the rest are read, not kept")
    func workingSetOverCapacity() async throws {
        let store = CountingStore(Dictionary(uniqueKeysWithValues: (0..<3).map { (Self.id($0), Self.symbols($0)) }))
        let cache = SymbolCache(capacity: Self.table(0).memoryBytes * 5 / 2)
        let all = (0..<3).map(Self.id)
        for _ in 1...10 { #expect(try await cache.tables(app: "shop", lookups: Self.lookups(all), store: store).count == 3) }
        // Two fit and stay (the first two read, in id order); the third is read by each batch.
        #expect(store.readCount(Self.id(0)) == 1 && store.readCount(Self.id(1)) == 1)
        #expect(store.readCount(Self.id(2)) == 10)
        let held = (await cache.holds(app: "shop", id: Self.id(0)), await cache.holds(app: "shop", id: Self.id(1)))
        #expect(held.0 && held.1)
    }

    @Test("A table held is not read again after 10 minutes, but is once its image is uploaded again")
    func validWhileUploaded() async throws {
        let store = CountingStore([Self.id(0): Self.symbols(0)])
        let clock = TestClock()
        let cache = SymbolCache(clock: { clock.now.withLock { $0 } })
        _ = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)]), store: store)
        clock.advance(3600)
        _ = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)]), store: store)
        #expect(store.readCount(Self.id(0)) == 1)
        // Uploaded again through another collector: seen when the list is read again.
        let newer = SymbolUpload.Image(id: Self.id(0), name: "Shop", arch: "arm64", symbols: [SymbolUpload.Symbol(offset: 0, size: 8, name: "renamed()")])
        try await store.storeSymbols(app: "shop", images: [newer], now: clock.now.withLock { $0 })
        clock.advance(61)
        let found = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)], [4]), store: store)
        #expect(found[Self.id(0)]?.name(at: 4) == "renamed()")
        #expect(store.readCount(Self.id(0)) == 2)
    }

    @Test("Past the capacity, a table in chunks costs the chunks its frames fall in, and names them as the whole table does")
    func chunksPastCapacity() async throws {
        let store = CountingStore(Dictionary(uniqueKeysWithValues: (0..<3).map { (Self.id($0), Self.symbols($0)) }), chunkSymbols: 100)
        let whole = Self.table(2)
        // Room for two whole tables and the third's index.
        let cache = SymbolCache(capacity: whole.memoryBytes * 5 / 2)
        let all = (0..<3).map(Self.id)
        var random = SeededGenerator(seed: 43)
        var chunksAsked = 0
        for round in 1...10 {
            // Offsets anywhere: in symbols, between them, below the first and past the last.
            let offsets = Set((0..<8).map { _ in UInt64.random(in: 0..<(1000 * 32 + 64), using: &random) })
            let found = try await cache.tables(app: "shop", lookups: Self.lookups(all, offsets), store: store)
            #expect(found.count == 3)
            for offset in offsets {
                #expect(found[Self.id(2)]?.name(at: offset) == whole.name(at: offset), "round \(round), offset \(offset)")
            }
            chunksAsked += Set(offsets.map { min(Int($0 / 3200), 9) }).count
            #expect(found[Self.id(2)].map { $0.count <= 8 * 100 } == true, "only the chunks the offsets fall in")
            #expect(await cache.bytesHeld <= cache.capacity)
        }
        #expect(store.readCount(Self.id(0)) == 1 && store.readCount(Self.id(1)) == 1, "the two that fit are read whole once")
        #expect(store.readCount(Self.id(2)) == 0, "the one past the capacity is never read whole")
        #expect(store.chunkReadCount(Self.id(2)) == chunksAsked, "each batch reads the chunks its offsets fall in, once each")
        #expect(await cache.holdsIndex(app: "shop", id: Self.id(2)))
    }

    @Test("A request naming frames in most of a table's chunks reads it whole once, not chunk by chunk")
    func manyChunksReadWhole() async throws {
        // 200 chunks of 5 symbols; frames in every one of them.
        let store = CountingStore([Self.id(0): Self.symbols(0)], chunkSymbols: 5)
        let cache = SymbolCache(capacity: 4096)
        let offsets = Set((0..<1000).map { UInt64($0) * 32 + 1 })
        let found = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)], offsets), store: store)
        #expect(store.readCount(Self.id(0)) == 1 && store.chunkReadCount(Self.id(0)) == 0)
        #expect(found[Self.id(0)] == Self.table(0))
        #expect(await cache.holdsIndex(app: "shop", id: Self.id(0)), "not kept whole: it does not fit")
        // Frames in 64 chunks are still read apart.
        _ = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)], Set((0..<64).map { UInt64($0) * 160 })), store: store)
        #expect(store.readCount(Self.id(0)) == 1 && store.chunkReadCount(Self.id(0)) == 64)
    }

    @Test("A table in chunks that fits is read whole once and held; a new upload reads its index again")
    func chunkedTableThatFits() async throws {
        let store = CountingStore([Self.id(0): Self.symbols(0)], chunkSymbols: 100)
        let cache = SymbolCache()
        for _ in 1...5 { _ = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)]), store: store) }
        #expect(store.readCount(Self.id(0)) == 1 && store.chunkReadCount(Self.id(0)) == 0)
        #expect(await cache.holds(app: "shop", id: Self.id(0)))
        let newer = SymbolUpload.Image(id: Self.id(0), name: "Shop", arch: "arm64", symbols: [SymbolUpload.Symbol(offset: 0, size: 8, name: "renamed()")])
        try await store.storeSymbols(app: "shop", images: [newer], now: 1_764_400_000)
        await cache.forget(app: "shop")
        let found = try await cache.tables(app: "shop", lookups: Self.lookups([Self.id(0)], [4]), store: store)
        #expect(found[Self.id(0)]?.name(at: 4) == "renamed()")
    }

    @Test("An image looked up at no offset in its chunks still answers, with nothing to name")
    func chunkedWithoutOffsets() async throws {
        let store = CountingStore([Self.id(0): Self.symbols(0)], chunkSymbols: 100)
        let cache = SymbolCache(capacity: 1024)
        let found = try await cache.tables(app: "shop", lookups: [Self.id(0): [], Self.id(9): [4]], store: store)
        #expect(found.keys.sorted() == [Self.id(0)], "an uploaded image is there; one without an upload is not")
        #expect(found[Self.id(0)]?.count == 0 && store.chunkReadCount(Self.id(0)) == 0)
    }

    @Test("A table reads back from its binary form without a string per symbol, and names what it held")
    func compactTable() throws {
        let table = Self.table(7)
        let back = try #require(SymbolTableBlob(bytes: table.bytes))
        #expect(back == table && back.count == 1000)
        #expect(back.name(of: 999) == "function7_" + String(repeating: "x", count: 30) + "0999")
        #expect(back.name(at: 999 * 32 + 15) == back.name(of: 999) && back.name(at: 999 * 32 + 16) == nil)
        #expect(back.memoryBytes == table.bytes.count + 24 * 1000 + 256)
    }
}
