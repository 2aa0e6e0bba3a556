import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import GRDB
import Testing

/// What the cardinality window costs a flush on SQLite and ClickHouse, printed, never asserted (timing
/// belongs in benchmarks): run with `FRAMESCOPE_WINDOW_BENCH=1 swift test --filter
/// CardinalityWindowBenchmark`. docs/decisions.md ("Window limits") has the figures.
@Suite("Cardinality window cost", .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_WINDOW_BENCH"] == "1"))
struct CardinalityWindowBenchmark {
    static let now = StoreContractTests.now

    /// Median and 90th percentile of `samples`, in milliseconds.
    static func summary(_ samples: [Duration]) -> String {
        let sorted = samples.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 }.sorted()
        return String(format: "median %.2f ms, p90 %.2f ms (%d flushes)", sorted[sorted.count / 2], sorted[sorted.count * 9 / 10], sorted.count)
    }

    @Test("Flushes of 100 visits: known values (the steady state), and a backdating flood of new values before and after the window fills",
          arguments: CardinalityWindowTests.kinds)
    func flushes(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await CardinalityWindowTests.store(kind, limits: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        let clock = ContinuousClock()
        // The steady state: 20 screens, one version and model, every value known for its day.
        var steady: [Duration] = []
        for index in 0..<300 {
            let screens = (0..<100).map { "Screen \($0 % 20)" }
            let batch = CardinalityWindowTests.batch("steady-\(index)", screens: screens, start: Self.now - 7200)
            let elapsed = try await clock.measure { _ = try await store.ingest(batch) }
            if index >= 20 { steady.append(elapsed) }
        }
        // The flood: every visit a new screen, every batch a new version, OS and model, on
        // each of the 30 days in turn; the window fills after 30 batches (3,000 screens).
        var filling: [Duration] = []
        var full: [Duration] = []
        for index in 0..<300 {
            let day = index % 30
            let screens = (0..<100).map { "Flood \(index)-\($0)" }
            let batch = CardinalityWindowTests.batch("flood-\(index)", screens: screens, version: "9.\(index)", model: "Flood\(index)",
                                                     os: "9.\(index)", start: CardinalityWindowTests.day(day + 1))
            let elapsed = try await clock.measure { _ = try await store.ingest(batch) }
            if index < 30 { filling.append(elapsed) } else { full.append(elapsed) }
        }
        print("cardinality window cost, \(kind.rawValue), debug build:")
        print("  known values:              \(Self.summary(steady))")
        print("  new values, window filling: \(Self.summary(filling))")
        print("  new values, window full:    \(Self.summary(full))")
        _ = keepAlive
        guard let sqlite = store as? SQLiteStore else { return }
        // The window's own statements, with the window full (3,000 screens), 1,000 times each.
        let statements = try await sqlite.database.read { db -> [(String, Duration)] in
            let count = try db.cachedStatement(sql: "SELECT COUNT(*) FROM dimension_window WHERE app_id = ? AND dimension = ?")
            let exists = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM dimension_window WHERE app_id = ? AND dimension = ? AND value = ?)")
            let rows = try Int.fetchOne(count, arguments: ["shop", "screen"]) ?? 0
            let counting = try clock.measure { for _ in 0..<1000 { _ = try Int.fetchOne(count, arguments: ["shop", "screen"]) } }
            let looking = try clock.measure { for index in 0..<1000 { _ = try Bool.fetchOne(exists, arguments: ["shop", "screen", "Flood \(index)-7"]) } }
            return [("COUNT(*) of the window's \(rows) screens", counting / 1000), ("EXISTS of one value", looking / 1000)]
        }
        for (name, duration) in statements { print("  \(name): \(duration)") }
    }
}
