import Foundation
@testable import FramescopeCollector
import FramescopeCore
import FramescopeDemo
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import GRDB
import Logging
import Testing

@Suite("Rollup levels, statistics and queries")
struct QueryTests {
    static let day0 = ISO8601.parse("2026-10-05")!

    /// Stores `batch` through the store, as the ingest route does after validation.
    func ingestBatch(_ store: any CollectorStore, _ batch: EventBatch, app: String = "shop") async throws -> IngestResult {
        try await store.ingest(ingestBatch(batch, app: app))
    }

    func ingestBatch(_ batch: EventBatch, app: String = "shop") -> IngestBatch {
        IngestBatch(app: app, batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                    deviceModel: batch.device.model, events: batch.events.map { ($0, ISO8601.parse($0.startedAt) ?? 0) },
                    rawEvents: batch.events.map { _ in "{}" }, receivedAt: Self.day0)
    }

    @Test("Any range and filter gives exactly the merge of the visits in it, whichever rollup levels answer")
    func levelsAgreeWithRawVisits() async throws {
        let temporary = try TemporaryStore()
        var random = SeededGenerator(seed: 11)
        var visits: [(event: ScreenVisitEvent, start: Double, version: String)] = []
        let reports = (1...6).map { visitReport(seed: UInt64($0), seconds: 4) }
        for index in 0..<40 {
            let version = ["1.0", "1.1"][Int(random.next() % 2)]
            let start = Self.day0 + random.unit() * 4 * 86_400
            var batch = makeBatch(id: "b\(index)", screen: ["Feed", "Chat"][Int(random.next() % 2)], count: 1, start: start, version: version)
            let report = reports[Int(random.next() % 6)]
            batch.events[0].report = report.whole
            batch.events[0].motion = report.motion
            batch.events[0].context.network = random.chance(0.5) ? .wifi : .cellular
            _ = try await ingestBatch(temporary.store, batch)
            visits.append((batch.events[0], start, version))
        }
        for trial in 0..<25 {
            let from = Self.day0 - 7200 + random.unit() * 3 * 86_400
            let to = from + 3600 + random.unit() * 3 * 86_400
            var query = ScreenQuery(from: from, to: to)
            if trial % 3 == 1 { query[.appVersion] = "1.1" }
            if trial % 4 == 2 { query[.network] = "cellular" }
            if trial % 5 == 3 { query[.screen] = "Feed" }
            var expected: [String: RollupValue] = [:]
            for visit in visits {
                let hour = (visit.start / 3600).rounded(.down) * 3600
                guard hour >= (from / 3600).rounded(.down) * 3600, hour < to else { continue }
                if let version = query[.appVersion], version != visit.version { continue }
                if let network = query[.network], network != visit.event.context.network.rawValue { continue }
                if let screen = query[.screen], screen != visit.event.screen { continue }
                expected[visit.event.screen, default: RollupValue()].merge(RollupValue(visit: visit.event))
            }
            let answer = try await temporary.store.aggregate(app: "shop", query: AggregateQuery(filter: query, byScreen: true))
            #expect(answer.count == expected.count, "trial \(trial)")
            for group in answer {
                let want = try #require(expected[group.screen ?? ""], "trial \(trial)")
                #expect(group.visits == want.visits, "trial \(trial) \(group.screen ?? "")")
                #expect(group.report == want.report, "trial \(trial) \(group.screen ?? "")")
                #expect(group.motion == want.motion, "trial \(trial)")
                #expect(group.statistics[.hitchRatio].visits == want.statistics[.hitchRatio].visits)
                #expect(abs(group.statistics[.hitchRatio].sumYY - want.statistics[.hitchRatio].sumYY) <= 1e-9 * max(1, want.statistics[.hitchRatio].sumYY))
            }
        }
        let plan = RollupRead.plan(for: AggregateQuery(filter: ScreenQuery(from: Self.day0 + 5400, to: Self.day0 + 3 * 86_400 + 7200)))
        #expect(plan.map(\.level) == [.screenDaily, .screenHourly, .screenHourly])
        let filtered = RollupRead.plan(for: AggregateQuery(filter: ScreenQuery(from: Self.day0, to: Self.day0 + 2 * 86_400, [.network: "wifi"])))
        #expect(filtered.map(\.level) == [.daily])
        #expect(RollupRead.plan(for: AggregateQuery(filter: ScreenQuery(from: Self.day0, to: Self.day0 + 2 * 86_400), interval: .hour)).map(\.level) == [.screenHourly])
        #expect(RollupRead.plan(for: AggregateQuery(filter: ScreenQuery(from: Self.day0, to: Self.day0 + 5 * 3600, [.lowPower: "true"]))).map(\.level) == [.hourly])
    }

    @Test("Display classes: a model with frames above 60 Hz outside low-power mode is ProMotion; in low-power mode it is capped")
    func displayClasses() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: nil)
        func visit(hz: Double, seed: UInt64) -> RecordingReport {
            var workload = SyntheticWorkload(profile: .moderate, duration: 4, seed: seed)
            return PipelineSimulator(display: .fixed(hz: hz), seed: seed).run(&workload).analyze()
        }
        let start = Self.day0 + 3600
        // (device model, display Hz, low-power mode): the Pro runs at 120 Hz, and at 60 Hz when capped.
        let visits: [(String, Double, Bool)] = [("iPhone16,1", 120, false), ("iPhone16,1", 120, false), ("iPhone16,1", 60, true),
                                                ("iPhone14,7", 60, false), ("iPhone14,7", 60, true)]
        var expected: [DisplayClass: FrameReport] = [:]
        for (index, (model, hz, lowPower)) in visits.enumerated() {
            let report = visit(hz: hz, seed: UInt64(index + 1))
            let event = ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start + Double(index) * 60),
                                         duration: report.whole.duration + report.whole.firstDuration + 0.5,
                                         context: VisitContext(network: .wifi, lowPowerMode: lowPower), report: report.whole, motion: report.motion)
            _ = try await store.ingest(IngestBatch(app: "shop", batchId: "b\(index)", appVersion: "1.0", osVersion: "18.1", deviceModel: model,
                                                   events: [(event, start + Double(index) * 60)], rawEvents: ["{}"], receivedAt: start + 3600))
            let displayClass: DisplayClass = model == "iPhone14,7" ? .sixtyHertz : lowPower ? .proMotionCapped : .proMotion
            expected[displayClass] = FrameReport.merged([expected[displayClass], report.whole].compactMap { $0 })
        }
        let classes = try await CollectorQueries(store: store).displayClasses(app: "shop", query: ScreenQuery(from: Self.day0, to: Self.day0 + 86_400))
        #expect(classes.map(\.displayClass) == [.sixtyHertz, .proMotion, .proMotionCapped])
        #expect(classes.map(\.rollup.visits) == [2, 2, 1])
        for (displayClass, rollup) in classes { #expect(rollup.report == expected[displayClass], "\(displayClass)") }
        #expect(DisplayClass.isProMotion(refreshRates: visit(hz: 120, seed: 9).whole.refreshRates))
        #expect(!DisplayClass.isProMotion(refreshRates: visit(hz: 60, seed: 9).whole.refreshRates))
    }

    @Test("Ratio statistics: Σy/Σx, the delta-method standard error, and per-visit quantiles")
    func ratioStatistics() throws {
        let visits: [(y: Double, x: Double)] = [(0, 10), (50, 10), (20, 5), (300, 30), (0, 2), (90, 12)]
        var statistics = RatioStatistics()
        for visit in visits { statistics.add(numerator: visit.y, denominator: visit.x) }
        let ratio = visits.map(\.y).reduce(0, +) / visits.map(\.x).reduce(0, +)
        #expect(abs(try #require(statistics.value) - ratio) < 1e-12)
        let n = Double(visits.count)
        let meanX = visits.map(\.x).reduce(0, +) / n
        let residuals = visits.map { ($0.y - ratio * $0.x) * ($0.y - ratio * $0.x) }.reduce(0, +)
        let expectedError = (residuals / (n * (n - 1) * meanX * meanX)).squareRoot()
        #expect(abs(try #require(statistics.standardError) - expectedError) < 1e-9)
        // Per-visit values: 0, 0, 4, 5, 7.5, 10 → median (3rd) 4, p90 (6th) 10.
        #expect(statistics.visitValue(atQuantile: 0.2) == 0)
        #expect(abs(try #require(statistics.visitValue(atQuantile: 0.5)) - 4) <= 4 * DurationHistogram.maximumRelativeError)
        #expect(abs(try #require(statistics.visitValue(atQuantile: 0.9)) - 10) <= 10 * DurationHistogram.maximumRelativeError)
        // Merging halves equals adding all.
        var left = RatioStatistics()
        var right = RatioStatistics()
        for (index, visit) in visits.enumerated() {
            if index < 3 { left.add(numerator: visit.y, denominator: visit.x) } else { right.add(numerator: visit.y, denominator: visit.x) }
        }
        left.merge(right)
        #expect(left.visits == statistics.visits && left.positiveValues == statistics.positiveValues && left.zeroValues == statistics.zeroValues)
        #expect(abs(left.sumXY - statistics.sumXY) < 1e-9)
        let single = RatioStatistics()
        #expect(single.value == nil && single.standardError == nil && single.visitValue(atQuantile: 0.5) == nil)
        let decoded = try JSONDecoder().decode(RatioStatistics.self, from: JSONEncoder().encode(statistics))
        #expect(decoded == statistics)
        var all = VisitStatistics()
        all.metrics[.hitchRatio] = statistics
        all.metrics[.hangRate] = left
        #expect(try VisitStatistics(binary: all.binaryEncoded()) == all)
        #expect(throws: BinaryReportError.self) { try VisitStatistics(binary: Array(all.binaryEncoded().dropLast())) }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(RatioStatistics.self, from: Data(#"{"visits":1,"sumX":1,"sumY":1,"sumXX":1,"sumYY":1,"sumXY":1,"zeroValues":0,"positiveValues":[[5,1],[3,1]]}"#.utf8))
        }
    }

    @Test("Device sketches count distinct installations within a few percent, and merge as a union")
    func deviceSketch() throws {
        for count in [1, 10, 100, 1000, 20_000] {
            var sketch = DeviceSketch()
            for index in 0..<count { sketch.add("install-\(index)"); sketch.add("install-\(index)") }
            let error = abs(Double(sketch.estimate - count)) / Double(count)
            #expect(error <= (count <= 100 ? 0.03 : 0.1), "\(count) devices estimated as \(sketch.estimate)")
        }
        var left = DeviceSketch()
        var right = DeviceSketch()
        var both = DeviceSketch()
        for index in 0..<3000 {
            if index < 2000 { left.add("d\(index)") }
            if index >= 1000 { right.add("d\(index)") }
            both.add("d\(index)")
        }
        left.merge(right)
        #expect(left == both, "the merge is the sketch of the union")
        #expect(DeviceSketch().estimate == 0)
        #expect(try DeviceSketch(registers: both.registers) == both)
        #expect(throws: BinaryReportError.self) { try DeviceSketch(registers: [1, 2, 3]) }
        #expect(DeviceSketch.hash("a") != DeviceSketch.hash("b"))
    }

    @Test("A device sketch is stored sparse while few registers are set, dense beyond; both and old dense rows read back")
    func deviceSketchStorage() throws {
        #expect(DeviceSketch().storedBytes() == nil)
        var few = DeviceSketch()
        for index in 0..<20 { few.add("install-\(index)") }
        let sparse = try #require(few.storedBytes())
        let setRegisters = few.registers.filter { $0 != 0 }.count
        #expect(sparse.count == 3 + 3 * setRegisters && sparse.count < 100, "\(sparse.count) bytes for \(setRegisters) registers")
        #expect(try DeviceSketch(storedBytes: sparse) == few)
        // Rows written before the sparse form hold the 512 registers.
        #expect(try DeviceSketch(storedBytes: few.registers) == few)
        var many = DeviceSketch()
        for index in 0..<5000 { many.add("install-\(index)") }
        #expect(many.storedBytes() == many.registers, "dense when sparse would not be shorter")
        #expect(try DeviceSketch(storedBytes: try #require(many.storedBytes())) == many)
        // Broken stored forms are refused, not misread.
        #expect(throws: BinaryReportError.self) { try DeviceSketch(storedBytes: [2, 1, 0, 5, 0]) }        // short
        #expect(throws: BinaryReportError.self) { try DeviceSketch(storedBytes: [2, 1, 0, 0, 2, 3]) }     // index 512
        #expect(throws: BinaryReportError.self) { try DeviceSketch(storedBytes: [2, 2, 0, 5, 0, 1, 5, 0, 1]) }  // not increasing
        #expect(throws: BinaryReportError.self) { try DeviceSketch(storedBytes: [2, 1, 0, 5, 0, 0]) }     // a zero register
        #expect(throws: BinaryReportError.self) { try DeviceSketch(storedBytes: [7, 0, 0]) }              // unknown marker
    }

    @Test("The verdict: a clear change is called, noise and thin data are not")
    func verdicts() throws {
        let queries = CollectorQueries(store: EmptyStore())
        func visits(_ seeds: ClosedRange<UInt64>, _ profile: SyntheticWorkload.Profile) -> RollupValue {
            var value = RollupValue()
            for seed in seeds {
                let report = visitReport(seed: seed, seconds: 4, profile: profile)
                value.merge(RollupValue(visit: ScreenVisitEvent(screen: "Feed", startedAt: "2026-10-05T10:00:00Z", duration: 5,
                                                                context: VisitContext(network: .wifi, lowPowerMode: false),
                                                                report: report.whole, motion: report.motion)))
            }
            return value
        }
        let baseline = visits(1...40, .moderate)
        let heavier = queries.change(.hitchRatio, baseline: baseline, candidate: visits(41...80, .heavy))
        #expect(heavier.verdict == .regressed, "\(heavier)")
        #expect(try #require(heavier.changeLow) > 0 && heavier.baselineVisits == 40 && heavier.candidateVisits == 40)
        #expect(queries.change(.averageFPS, baseline: baseline, candidate: visits(41...80, .heavy)).verdict == .regressed, "lower FPS is worse")
        let lighter = queries.change(.hitchRatio, baseline: baseline, candidate: visits(41...80, .light))
        #expect(lighter.verdict == .improved, "\(lighter)")
        let same = queries.change(.hitchRatio, baseline: baseline, candidate: visits(41...80, .moderate))
        #expect(same.verdict == .noSignificantChange, "\(same)")
        #expect(try #require(same.changeLow) < 0 && #require(same.changeHigh) > 0 || abs(try #require(same.relativeChange)) < queries.minimumRelativeChange)
        // Bonferroni: more comparisons sharing 95 % widen each interval.
        #expect(abs(queries.zScore(comparisons: 1) - 1.959964) < 1e-5)
        #expect(abs(queries.zScore(comparisons: 30) - 3.143980) < 1e-4)
        #expect(abs(normalQuantile(0.001) + 3.090232) < 1e-5)
        let wide = queries.change(.hitchRatio, baseline: baseline, candidate: visits(41...80, .heavy), z: queries.zScore(comparisons: 30))
        let wideWidth = try #require(wide.changeHigh) - #require(wide.changeLow)
        let narrowWidth = try #require(heavier.changeHigh) - #require(heavier.changeLow)
        #expect(abs(wideWidth / narrowWidth - 3.143980 / 1.959964) < 1e-4)
        let thin = queries.change(.hitchRatio, baseline: visits(1...1, .moderate), candidate: visits(2...2, .heavy))
        #expect(thin.verdict == .noSignificantChange && thin.changeLow == nil && thin.change != nil)
    }

    @Test("On the demo fleet: 3.1 regresses Feed, 3.2 fixes it; worst screens, series and percentiles agree with the reports")
    func demoStory() async throws {
        let temporary = try TemporaryStore()
        let now = Self.day0 + 12 * 86_400
        _ = try await DemoData.prepare(store: temporary.store, now: now, days: 12, deviceCount: 40)
        let queries = CollectorQueries(store: temporary.store)
        let range = ScreenQuery(from: now - 12 * 86_400, to: now)

        let regression = try await queries.compare(app: "demo", query: range, baseline: "3.0.0", candidate: "3.1.0")
        let feed = try #require(regression.screens.first { $0.screen == "Feed" })
        #expect(regression.screens.first?.screen == "Feed", "regressions come first")
        #expect(feed.verdict == .regressed)
        let feedHitch = try #require(feed.metrics.first { $0.metric == "hitchRatio" })
        #expect(feedHitch.verdict == .regressed)
        #expect(try #require(feedHitch.changeLow) > 0)
        #expect(try #require(feedHitch.relativeChange) > 0.5)
        for other in regression.screens where other.screen != "Feed" {
            #expect(other.metrics.first { $0.metric == "hitchRatio" }?.verdict != .regressed, "\(other.screen)")
        }
        let fix = try await queries.compare(app: "demo", query: range, baseline: "3.1.0", candidate: "3.2.0")
        #expect(fix.screens.first { $0.screen == "Feed" }?.metrics.first { $0.metric == "hitchRatio" }?.verdict == .improved)

        let screens = try await temporary.store.screens(app: "demo", query: range)
        #expect(try await temporary.store.dimensionValues(app: "demo", dimension: .appVersion, from: range.from, to: range.to) == ["3.0.0", "3.1.0", "3.2.0"])
        #expect(try await temporary.store.dimensionValues(app: "demo", dimension: .lowPower, from: range.from, to: range.to) == ["false", "true"])
        let worst = try await queries.worstScreens(app: "demo", query: range, figure: QueryFigure(.hitchRatio), limit: 3, minimumVisits: 1)
        let byHitch = screens.sorted { ($0.report.hitchRatio ?? 0) > ($1.report.hitchRatio ?? 0) }
        #expect(worst.screens.map(\.screen) == Array(byHitch.prefix(3).map(\.screen)))
        #expect(worst.screens.first?.value == byHitch.first?.report.hitchRatio)
        let fps = try await queries.worstScreens(app: "demo", query: range, figure: QueryFigure(.averageFPS), limit: 10, minimumVisits: 1)
        #expect(fps.screens.map(\.value) == fps.screens.map(\.value).sorted(), "lowest FPS first")

        let series = try await queries.timeSeries(app: "demo", query: range, figure: QueryFigure(.hitchRatio), interval: .day)
        #expect(series.points.count == 12)
        #expect(series.points.map(\.visits).reduce(0, +) == screens.map(\.visits).reduce(0, +))
        let hourly = try await queries.timeSeries(app: "demo", query: ScreenQuery(from: now - 86_400, to: now, [.screen: "Feed"]),
                                                  figure: QueryFigure(name: "frameDuration.p95")!, interval: .hour)
        #expect(hourly.points.count == 24 && hourly.unit == "s")
        #expect(hourly.points.contains { $0.value == nil && $0.visits == 0 }, "night hours have no data")

        let percentiles = try await queries.percentiles(app: "demo", query: range)
        #expect(percentiles.visits == screens.map(\.visits).reduce(0, +))
        let hitch = try #require(percentiles.metrics.first { $0.metric == "hitchRatio" })
        #expect(try #require(hitch.median) <= #require(hitch.p90))
        #expect(hitch.visits == percentiles.visits)
        let motion = try #require(percentiles.metrics.first { $0.metric == "motion.hitchRatio" })
        #expect(motion.visits <= percentiles.visits && motion.visits > 0)
    }

    @Test("Group commit: concurrent batches share flushes, each is answered after its commit, duplicates count once")
    func groupCommit() async throws {
        let temporary = try TemporaryStore()
        let commit = GroupCommit(store: temporary.store)
        let batches = (0..<40).map { makeBatch(id: "g\($0)", count: 2, start: Self.day0 + Double($0) * 100) } + [makeBatch(id: "g0", count: 2, start: Self.day0)]
        let results = try await withThrowingTaskGroup(of: IngestResult.self) { group in
            for batch in batches { group.addTask { try await commit.ingest(ingestBatch(batch)) } }
            var results: [IngestResult] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.filter(\.duplicate).count == 1)
        #expect(results.map(\.stored).reduce(0, +) == 80)
        #expect(try await temporary.store.rawEventCount(app: "shop") == 80)
        #expect(await commit.flushedBatches == 41)
        #expect(await commit.flushes < 41, "some flushes carried several batches")
        let screens = try await temporary.store.screens(app: "shop", query: ScreenQuery(from: Self.day0 - 3600, to: Self.day0 + 86_400))
        #expect(screens.first?.visits == 80)
    }

    @Test("Retention deletes old raw events in chunks and keeps the rollups")
    func retention() async throws {
        let temporary = try TemporaryStore()
        _ = try await ingestBatch(temporary.store, makeBatch(id: "old", count: 3, start: Self.day0))
        _ = try await ingestBatch(temporary.store, makeBatch(id: "new", count: 2, start: Self.day0 + 10 * 86_400))
        let range = ScreenQuery(from: Self.day0 - 86_400, to: Self.day0 + 11 * 86_400)
        let before = try await temporary.store.screens(app: "shop", query: range)
        #expect(try await temporary.store.deleteRawEvents(startedBefore: Self.day0 + 86_400, limit: 2) == 2)
        #expect(try await temporary.store.deleteRawEvents(startedBefore: Self.day0 + 86_400, limit: 2) == 1)
        #expect(try await temporary.store.deleteRawEvents(startedBefore: Self.day0 + 86_400, limit: 2) == 0)
        #expect(try await temporary.store.rawEventCount(app: "shop") == 2)
        #expect(try await temporary.store.screens(app: "shop", query: range) == before)
        // A cutoff inside an hour deletes exactly the events that started before it:
        // "mid" has events at day0 + 7200, + 7260 and + 7320.
        _ = try await ingestBatch(temporary.store, makeBatch(id: "mid", count: 3, start: Self.day0 + 7200))
        #expect(try await temporary.store.deleteRawEvents(startedBefore: Self.day0 + 7261, limit: 10) == 2)
        #expect(try await temporary.store.rawEventCount(app: "shop") == 3)
        #expect(try await temporary.store.deleteRawEvents(startedBefore: Self.day0 + 7320, limit: 10) == 0)
        #expect(try await temporary.store.deleteRawEvents(startedBefore: Self.day0 + 7320.5, limit: 10) == 1)
        // The background service sweeps in chunks until nothing old is left.
        _ = try await ingestBatch(temporary.store, makeBatch(id: "older", count: 5, start: Self.day0 + 3600))
        let service = RetentionService(store: temporary.store, retention: 86_400, chunk: 2, clock: { Self.day0 + 2 * 86_400 })
        #expect(try await service.sweep() == 5)
        #expect(try await temporary.store.rawEventCount(app: "shop") == 2)
        // A batch id stays known after its raw events are gone.
        #expect(try await ingestBatch(temporary.store, makeBatch(id: "old", count: 3, start: Self.day0)).duplicate)
    }

    @Test("The jobs beside the server: retention and alerts, or neither with jobs off (the other collectors of a shared store)")
    func jobs() throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        let collector = Collector(store: store)
        let all = collector.services(retention: 86_400, logger: Logger(label: "test")).map { String(describing: type(of: $0)) }
        #expect(all == ["RetentionService", "AlertService"])
        #expect(collector.services(retention: 86_400, jobs: false, logger: Logger(label: "test")).isEmpty)
    }

    @Test("A database built by the oldest schema (v1) upgrades: its hourly rollups reach every level with the same reports")
    func migrationFromV1() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-v1-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("v1.sqlite").path
        let visit = visitReport(seed: 3)
        let other = visitReport(seed: 4)
        let rows: [(hour: Double, model: String, report: FrameReport, motion: FrameReport?)] = [
            (0, "iPhone14,5", visit.whole, visit.motion), (3600, "iPhone14,5", other.whole, nil),
            (3600, "iPhone15,2", visit.whole, visit.motion), (86_400, "iPhone14,5", other.whole, other.motion),
        ]
        @Sendable func json(_ report: FrameReport) throws -> String { String(decoding: try JSONEncoder().encode(report), as: UTF8.self) }
        do {
            let queue = try DatabaseQueue(path: path)
            try SQLiteStore.migrator.migrate(queue, upTo: "v1: apps, keys, batches, events, rollups")
            try await queue.write { db in
                for row in rows {
                    try db.execute(sql: "INSERT INTO rollups VALUES ('shop', ?, 'Feed', '1.0', '18.1', ?, 'wifi', 0, 2, ?, ?)",
                                   arguments: [Self.day0 + row.hour, row.model, try json(row.report), try row.motion.map(json)])
                }
            }
        }
        // The reports as v1 stored them (JSON keeps whole nanoseconds only to a double's precision).
        let decoder = JSONDecoder()
        let stored = try rows.map { (try decoder.decode(FrameReport.self, from: Data(try json($0.report).utf8)),
                                     try $0.motion.map { try decoder.decode(FrameReport.self, from: Data(try json($0).utf8)) }) }
        let store = try SQLiteStore(path: path)
        // Whole days: the screen-daily level; a device filter: the daily level.
        let screens = try await store.screens(app: "shop", query: ScreenQuery(from: Self.day0, to: Self.day0 + 2 * 86_400))
        #expect(screens.first?.visits == 8)
        #expect(screens.first?.report == FrameReport.merged(stored.map(\.0)))
        #expect(screens.first?.motion == FrameReport.merged(stored.compactMap(\.1)))
        var filtered = ScreenQuery(from: Self.day0, to: Self.day0 + 2 * 86_400)
        filtered[.deviceModel] = "iPhone14,5"
        let byModel = try await store.screens(app: "shop", query: filtered)
        #expect(byModel.first?.visits == 6)
        #expect(byModel.first?.report == FrameReport.merged([stored[0].0, stored[1].0, stored[3].0]))
        // Hours: the hourly levels.
        let hourly = try await store.aggregate(app: "shop", query: AggregateQuery(filter: ScreenQuery(from: Self.day0, to: Self.day0 + 7200), interval: .hour))
        #expect(hourly.map(\.visits) == [2, 4])
        // The upgraded database takes new events as any other.
        #expect(try await ingestBatch(store, makeBatch(id: "after", count: 1, start: Self.day0 + 600)).stored == 1)
    }
}

/// A store with no data, for pure query arithmetic: the roles ``CollectorQueries`` reads.
struct EmptyStore: CollectorQueries.Store {
    func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate] { [] }
    func dimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double) async throws -> [String] { [] }
    func tagValues(app: String, key: String, from: Double, to: Double) async throws -> [String] { [] }
    func tagKeys(app: String) async throws -> [DeclaredTagKey]? { nil }
    func declareTagKey(app: String, key: String, now: Double) async throws -> Bool? { nil }
    func removeTagKey(app: String, key: String) async throws -> Bool { false }
    func thresholds(app: String) async throws -> AppThresholds? { nil }
    func setThresholds(_ thresholds: AppThresholds, app: String) async throws -> Bool { false }
    func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int { 0 }
    func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary] { [] }
    func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int { 0 }
    func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int, mergeable: Set<String>) async throws -> [HangGroup] { [] }
    func hangCount(app: String) async throws -> Int { 0 }
    func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int { 0 }
    func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {}
    func symbolImages(app: String) async throws -> [SymbolImageRecord] { [] }
    func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] { [:] }
    func sampleRates(app: String, from: Double, to: Double) async throws -> [SampleRateVisits] { [] }
    func deleteSampleRates(before cutoff: Double) async throws -> Int { 0 }
}
