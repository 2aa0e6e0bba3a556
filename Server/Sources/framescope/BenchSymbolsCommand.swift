import ArgumentParser
import Foundation
import FramescopeCollector
import FramescopeCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `framescope bench symbols`: what naming a hang's frames costs a batch when an app's
/// uploaded symbols are large (issue 43, item 7).
struct BenchSymbolsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "symbols",
        abstract: "Time the symbol tables a one-hang batch reads, for an app with millions of uploaded symbols.",
        discussion: """
            Stores --images images of --symbols symbols in all (names of about 60 bytes) for \
            one app in an in-memory SQLite store, then asks a fresh symbol cache, as the ingest \
            does for each batch whose hang names the app's images, for the tables of every \
            image and looks up --frames frames in each (spread over the table, other ones each \
            batch), --batches times after one warm-up. The floor, measured in the same run, \
            asks for the first image alone. Past the cache's capacity a table stored in chunks \
            costs the chunks its frames fall in (symbol_chunks). Prints wall and CPU \
            milliseconds per batch (CPU: the whole process, SQLite's threads included) and the \
            resident memory. Build with -c release for meaningful figures.
            """
    )

    @Option(help: "Symbols over all images.")
    var symbols: Int = 2_400_000

    @Option(help: "Images the symbols are split over (each a table of its own).")
    var images: Int = 3

    @Option(help: "Batches timed after the warm-up.")
    var batches: Int = 40

    @Option(help: "Frames looked up in each image per batch.")
    var frames: Int = 1

    @Option(help: ArgumentHelp("The cache's capacity in MiB; default: the collector's (SymbolCache.defaultCapacity).", valueName: "MiB"))
    var capacityMib: Int?

    mutating func validate() throws {
        if images < 1 || images > 256 { throw ValidationError("--images must be 1–256") }
        if symbols < images { throw ValidationError("--symbols must be at least --images") }
        if symbols / images > 1_000_000 { throw ValidationError("--symbols may hold at most 1,000,000 per image") }
        if batches < 1 { throw ValidationError("--batches must be at least 1") }
        if frames < 1 || frames > 10_000 { throw ValidationError("--frames must be 1–10,000") }
        if let capacityMib, capacityMib < 0 { throw ValidationError("--capacity-mib must be 0 or more") }
    }

    func run() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        let app = "bench"
        var ids: [String] = []
        let perImage = symbols / images
        for image in 0..<images {
            let id = String(format: "%032x", 0x5eed_0000 + image)
            ids.append(id)
            var list: [SymbolUpload.Symbol] = []
            list.reserveCapacity(perImage)
            for index in 0..<perImage {
                let name = "specialized FeedViewController.decodeThumbnail\(image)_\(index)(_:size:) in Shop"
                list.append(SymbolUpload.Symbol(offset: UInt64(index) * 64, size: 48, name: name))
            }
            try await store.storeSymbols(app: app, images: [SymbolUpload.Image(id: id, name: "Shop\(image)", arch: "arm64", symbols: list)],
                                         now: Date().timeIntervalSince1970)
        }
        print("symbols: \(perImage * images) in \(images) images (\(perImage) each); \(frames) frame(s) an image; \(batches) batches after one warm-up; cache capacity \((capacityMib.map { $0 << 20 } ?? SymbolCache.defaultCapacity) >> 20) MiB")
        print("case                                  wall p50    wall p90    CPU/batch   found  resident")
        for (label, wanted) in [("floor: first image only", Set(ids.prefix(1))), ("all \(images) images", Set(ids))] {
            let cache = SymbolCache(capacity: capacityMib.map { $0 << 20 } ?? SymbolCache.defaultCapacity)
            var walls: [Double] = []
            var found = 0
            let clock = ContinuousClock()
            // Batch `batch` looks up symbols batch·frames ..< (batch + 1)·frames, spread over the
            // table by a stride coprime with its size, 8 bytes into each.
            func offsets(_ batch: Int) -> Set<UInt64> {
                Set((0..<frames).map { UInt64(((batch * frames + $0) * 7_919) % perImage) * 64 + 8 })
            }
            func lookups(_ batch: Int) -> [String: Set<UInt64>] { Dictionary(uniqueKeysWithValues: wanted.map { ($0, offsets(batch)) }) }
            _ = try await cache.tables(app: app, lookups: lookups(batches), store: store)
            let cpuBefore = processCPUSeconds()
            for batch in 0..<batches {
                var tables: [String: SymbolTableBlob] = [:]
                let asked = lookups(batch)
                let elapsed = try await clock.measure {
                    tables = try await cache.tables(app: app, lookups: asked, store: store)
                    for (id, table) in tables {
                        for offset in asked[id] ?? [] where table.name(at: offset) != nil { found += 1 }
                    }
                }
                walls.append(seconds(elapsed) * 1000)
            }
            let cpu = (processCPUSeconds() - cpuBefore) * 1000 / Double(batches)
            walls.sort()
            func ms(_ value: Double) -> String { (Metric.decimal(value, digits: 3) + " ms").leftPadded(10) }
            print("\(label.padding(toLength: 36, withPad: " ", startingAt: 0))  \(ms(walls[walls.count / 2]))  \(ms(walls[min(walls.count - 1, walls.count * 9 / 10)]))  \(ms(cpu))  \(String(found / batches).leftPadded(5))  \(Metric.decimal(Double(residentMemory().current) / 1_048_576, digits: 0)) MiB")
        }
    }
}

/// CPU time this process has used (user and system, all threads), in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func value(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return value(usage.ru_utime) + value(usage.ru_stime)
}
