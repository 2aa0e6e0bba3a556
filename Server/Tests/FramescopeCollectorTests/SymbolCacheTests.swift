import Foundation
@testable import FramescopeCollector
import FramescopeCore
import Synchronization
import Testing

/// What the symbol cache reads and keeps (issue 43, item 7): tables held by bytes, the ones a
/// batch uses never pushed out by the ones it reads, and no table read again while its upload
/// stands. Load figures are in docs/benchmarks.md ("Symbol cache"), not here.
@Suite("Symbol cache")
struct SymbolCacheTests {
    /// A symbol store that counts the tables it is asked for.
    final class CountingStore: SymbolStore, Sendable {
        let images: Mutex<[String: (table: SymbolTableBlob, uploadedAt: String)]>
        /// Image ids in the order their tables were read.
        let reads = Mutex<[String]>([])

        init(_ images: [String: SymbolTableBlob]) {
            self.images = Mutex(images.mapValues { ($0, "2026-11-28T00:00:00.000Z") })
        }

        func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {
            for image in images { self.images.withLock { $0[image.id] = (SymbolTableBlob(image.symbols), ISO8601.format(unixSeconds: now)) } }
        }

        func symbolImages(app: String) async throws -> [SymbolImageRecord] {
            images.withLock { images in
                images.map { SymbolImageRecord(id: $0.key, name: "Shop", arch: "arm64", symbols: $0.value.table.count, uploadedAt: $0.value.uploadedAt) }
            }
        }

        func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] {
            reads.withLock { $0 += ids.sorted() }
            return images.withLock { images in images.filter { ids.contains($0.key) }.mapValues(\.table) }
        }

        func readCount(_ id: String) -> Int { reads.withLock { $0.filter { $0 == id }.count } }
    }

    /// An image id for `index`.
    static func id(_ index: Int) -> String { String(format: "%032x", 0xabc0 + index) }

    /// A table of 1,000 symbols with 40-byte names.
    static func table(_ seed: Int) -> SymbolTableBlob {
        SymbolTableBlob((0..<1000).map { SymbolUpload.Symbol(offset: UInt64($0) * 32, size: 16, name: "function\(seed)_" + String(repeating: "x", count: 30) + String(format: "%04d", $0)) })
    }

    /// A clock the test moves, Unix seconds.
    final class TestClock: Sendable {
        let now = Mutex(1_764_300_000.0)
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
    }

    @Test("A table every batch uses stays held while other tables come and go, within the capacity in bytes")
    func hotTableStays() async throws {
        let tables = Dictionary(uniqueKeysWithValues: (0..<6).map { (Self.id($0), Self.table($0)) })
        let store = CountingStore(tables)
        let size = tables[Self.id(0)]!.memoryBytes
        // Room for two tables and a half: the hot one and one other.
        let cache = SymbolCache(capacity: size * 5 / 2)
        for round in 1...20 {
            let other = Self.id(1 + round % 5)
            let found = try await cache.tables(app: "shop", ids: [Self.id(0), other], store: store)
            #expect(found.count == 2)
            #expect(found[Self.id(0)]?.name(at: 32 * 7 + 3) == tables[Self.id(0)]?.name(at: 32 * 7))
            #expect(await cache.bytesHeld <= cache.capacity)
        }
        #expect(store.readCount(Self.id(0)) == 1, "the hot table was read \(store.readCount(Self.id(0))) times")
    }

    @Test("When a batch's tables exceed the capacity, those held stay and the rest are read, not kept")
    func workingSetOverCapacity() async throws {
        let tables = Dictionary(uniqueKeysWithValues: (0..<3).map { (Self.id($0), Self.table($0)) })
        let store = CountingStore(tables)
        let cache = SymbolCache(capacity: tables[Self.id(0)]!.memoryBytes * 5 / 2)
        let all = Set(tables.keys)
        for _ in 1...10 { #expect(try await cache.tables(app: "shop", ids: all, store: store).count == 3) }
        // Two fit and stay (the first two read, in id order); the third is read by each batch.
        #expect(store.readCount(Self.id(0)) == 1 && store.readCount(Self.id(1)) == 1)
        #expect(store.readCount(Self.id(2)) == 10)
        let held = (await cache.holds(app: "shop", id: Self.id(0)), await cache.holds(app: "shop", id: Self.id(1)))
        #expect(held.0 && held.1)
    }

    @Test("A table held is not read again after 10 minutes, but is once its image is uploaded again")
    func validWhileUploaded() async throws {
        let store = CountingStore([Self.id(0): Self.table(0)])
        let clock = TestClock()
        let cache = SymbolCache(clock: { clock.now.withLock { $0 } })
        _ = try await cache.tables(app: "shop", ids: [Self.id(0)], store: store)
        clock.advance(3600)
        _ = try await cache.tables(app: "shop", ids: [Self.id(0)], store: store)
        #expect(store.readCount(Self.id(0)) == 1)
        // Uploaded again through another collector: seen when the list is read again.
        let newer = SymbolUpload.Image(id: Self.id(0), name: "Shop", arch: "arm64", symbols: [SymbolUpload.Symbol(offset: 0, size: 8, name: "renamed()")])
        try await store.storeSymbols(app: "shop", images: [newer], now: clock.now.withLock { $0 })
        clock.advance(61)
        let found = try await cache.tables(app: "shop", ids: [Self.id(0)], store: store)
        #expect(found[Self.id(0)]?.name(at: 4) == "renamed()")
        #expect(store.readCount(Self.id(0)) == 2)
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
