import Benchmark
import Foundation
import FramescopeCollector
import FramescopeCore
import FramescopeSimulation
import Logging
import NIOCore

/// The collector's hot paths, each with the figure it must keep.
///
/// Names have no spaces: `thresholds update` writes `Thresholds/<target>.<name>.p90.json`
/// with spaces turned into underscores, and `thresholds check` (1.38.1) looks the file up
/// by the name as written.
///
/// The figures in `docs/benchmarks.md` come from whole-server runs (`framescope loadtest`,
/// `framescope bench queries`); these benchmarks time the same work in process, so a
/// regression shows without a load test. `scripts/bench` fails when a benchmark's p90 (wall
/// time or allocations) is more than 20 % worse than the figure
/// stored in `Benchmarks/Thresholds/` (refresh them with `scripts/bench --update` after a
/// deliberate change, on the machine that checks them).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        // CPU time is left out: the process clock's 10 ms resolution cannot time these.
        // Throughput is left out: it is the wall time's inverse, and its p90 is the slow tail.
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 3,
        maxDuration: .seconds(5),
        maxIterations: 200,
        thresholds: [
            .wallClock: .init(relative: [.p90: 20]),
            .mallocCountTotal: .init(relative: [.p90: 20]),
        ]
    )

    // Ingest as the server does it after reading and gunzipping a body: the specialised
    // decoder (`WireBatchDecoder`), validation, the cardinality gate and the group commit
    // into SQLite (in memory, so the disk's fsync does not drown the CPU's share). A batch
    // of 100 visits with compact binary reports, as the SDK sends them; each iteration a
    // new batch id. docs/benchmarks.md: 30-35 thousand events/s through the whole server,
    // i.e. at most about 3 ms of server time per batch, 30 ms per sample of ten.
    // Ten batches a sample, so one slow scheduling of the writer does not decide a p90.
    Benchmark("Ingest_10_batches_of_100_visits") { (benchmark: Benchmark, setup: (IngestService, BatchTemplates)) in
        let (service, templates) = setup
        let logger = Logger(label: "bench")
        let bodies = (0..<10).map { templates.body(index: $0) }
        benchmark.startMeasurement()
        for body in bodies {
            let response = try await service.ingest(body: body, app: "bench", logger: logger)
            blackHole(response.accepted)
        }
        benchmark.stopMeasurement()
    } setup: {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Bench", id: "bench")
        return (IngestService(store: store), try BatchTemplates(now: Date().timeIntervalSince1970)) as (IngestService, BatchTemplates)
    }

    // The dashboard's first query: per-screen reports of the demo app's 28 days (120
    // simulated devices), read from the daily rollups. docs/benchmarks.md: 8.4 ms for all
    // screens over 100 million visits (`bench queries`).
    Benchmark("Query_per-screen_reports_28_days_10_times") { (benchmark: Benchmark, store: SQLiteStore) in
        let now = Date().timeIntervalSince1970
        benchmark.startMeasurement()
        for _ in 0..<10 {
            blackHole(try await store.screens(app: DemoData.appId, query: ScreenQuery(from: now - 28 * 86_400, to: now)).count)
        }
    } setup: {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await DemoData.prepare(store: store, days: 28, deviceCount: 120)
        return store
    }

    // The slowest of the dashboard's queries: the version comparison, two filtered reads of
    // the full-dimension rollups and a verdict per screen and figure. docs/benchmarks.md:
    // 133 ms over 100 million visits.
    Benchmark("Query_version_comparison_28_days") { (benchmark: Benchmark, setup: (CollectorQueries, (baseline: String, candidate: String))) in
        let (queries, versions) = setup
        let now = Date().timeIntervalSince1970
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let answer = try await queries.compare(app: DemoData.appId, query: ScreenQuery(from: now - 28 * 86_400, to: now),
                                                   baseline: versions.baseline, candidate: versions.candidate)
            blackHole(answer)
        }
    } setup: {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await DemoData.prepare(store: store, days: 28, deviceCount: 120)
        let now = Date().timeIntervalSince1970
        let versions = try await store.dimensionValues(app: DemoData.appId, dimension: .appVersion, from: now - 28 * 86_400, to: now).sorted()
        guard versions.count >= 2 else { throw BenchmarkSetupError(message: "the demo fleet has fewer than two app versions") }
        return (CollectorQueries(store: store), (baseline: versions[versions.count - 2], candidate: versions[versions.count - 1]))
            as (CollectorQueries, (baseline: String, candidate: String))
    }
}

struct BenchmarkSetupError: Error {
    var message: String
}

/// Eight encoded batches of 100 simulated visits from the demo fleet, with a fixed-width
/// batch id patched for each request (as `framescope loadtest` sends them).
struct BatchTemplates: Sendable {
    private let bodies: [[UInt8]]
    private let idOffsets: [Int]
    /// As long as a UUID's text, which replaces it.
    private static let placeholder = "BENCH-ID-" + String(repeating: "x", count: 27)

    init(now: Double) throws {
        let fleet = FleetSimulation.demo(appId: "bench", start: now - 86_400, days: 1, deviceCount: 30, seed: 99)
        let visits = fleet.batches().flatMap { batch in batch.events.map { (batch, $0) } }
        guard let (first, _) = visits.first else { throw BenchmarkSetupError(message: "the fleet simulation produced no visits") }
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        let marker = Array(Self.placeholder.utf8)
        var bodies: [[UInt8]] = []
        var offsets: [Int] = []
        for template in 0..<8 {
            var events: [ScreenVisitEvent] = []
            for index in 0..<100 {
                var event = visits[(template * 100 + index) % visits.count].1
                event.startedAt = ISO8601.format(unixSeconds: now - 3600 + Double(index * 36))
                events.append(event)
            }
            let bytes = Array(try encoder.encode(EventBatch(batchId: Self.placeholder, app: first.app, device: first.device, events: events)))
            guard let offset = bytes.firstRange(of: marker)?.lowerBound else {
                throw BenchmarkSetupError(message: "cannot find the batch id in the encoded batch")
            }
            bodies.append(bytes)
            offsets.append(offset)
        }
        self.bodies = bodies
        idOffsets = offsets
    }

    /// A body from template `index` (modulo 8) with a new random batch id.
    func body(index: Int) -> ByteBuffer {
        let slot = index % bodies.count
        var bytes = bodies[slot]
        let id = Array(UUID().uuidString.lowercased().utf8)
        bytes.replaceSubrange(idOffsets[slot]..<(idOffsets[slot] + id.count), with: id)
        return ByteBuffer(bytes: bytes)
    }
}
