import Foundation
import FramescopeClickHouse
import FramescopeClickHouseTesting
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Testing

/// The same visits ingested into SQLite and into ClickHouse give the same answers: counts
/// exactly, every figure to the last digit the API prints (15 significant digits here; sums
/// of doubles are added in another order by the engine), for every query the collector
/// asks of a store.
@Suite("Store conformance")
struct StoreConformanceTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!
    static let screens = ["Feed", "O'Brien\t\"q\"\\N", "画面 🎉", "Chat"]
    static let versions = ["3.0.0", "3.1.0"]
    /// A declared tag's value with a quote, a backslash and a tab.
    static let hostileArm = "con'trol\\\t\\'"

    /// Three days of visits from eight devices: four screens (hostile names included), two
    /// versions, two models, power and thermal states, 60 and 120 Hz, a declared tag, four
    /// sample rates.
    static func batches() -> [IngestBatch] {
        var batches: [IngestBatch] = []
        var seed: UInt64 = 1
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for device in 0..<8 {
            for batchIndex in 0..<6 {
                let version = versions[(device + batchIndex) % 2]
                var events: [(event: ScreenVisitEvent, startedAt: Double)] = []
                for index in 0..<4 {
                    seed += 1
                    let start = now - 3 * 86_400 + Double(batchIndex) * 43_000 + Double(device * 600 + index * 97)
                    let hz: Double = device % 3 == 0 ? 120 : 60
                    var workload = SyntheticWorkload(profile: (device + index) % 3 == 0 ? .heavy : .moderate, duration: 2 + Double(index), seed: seed)
                    let report = PipelineSimulator(display: .fixed(hz: hz), seed: seed).run(&workload).analyze()
                    var tags: [String: String] = ["build": "b\(batchIndex)'; DROP TABLE events; --"]
                    if index != 3 { tags["experiment"] = device % 2 == 0 ? "compact" : Self.hostileArm }
                    let context = VisitContext(network: index % 2 == 0 ? .wifi : .cellular, lowPowerMode: device == 5,
                                               thermalState: index == 2 ? .serious : .nominal, tags: tags)
                    events.append((ScreenVisitEvent(screen: screens[(device + index) % screens.count], startedAt: ISO8601.format(unixSeconds: start),
                                                    duration: report.whole.duration + 1, context: context,
                                                    report: report.whole, motion: index == 1 ? nil : report.motion), start))
                }
                var batch = IngestBatch(app: "shop", batchId: "d\(device)-b\(batchIndex)", appVersion: version, osVersion: "18.\(device % 2)",
                                        deviceModel: device % 3 == 0 ? "iPhone16,1" : "iPhone14,5", events: events,
                                        rawEvents: events.map { String(decoding: (try? encoder.encode($0.event)) ?? Data(), as: UTF8.self) }, receivedAt: now)
                batch.installationId = "install-\(device)"
                batch.maxRefreshRate = device % 3 == 0 ? 120 : 60
                batch.sampleRatePPM = [SampleRate.full, 100_000, 333_333, 1][device % 4]
                batches.append(batch)
            }
        }
        return batches
    }

    /// Everything the collector reads from a store for these visits, as text: counts as
    /// they are, figures with 15 significant digits.
    static func answers(_ store: any CollectorStore) async throws -> [String] {
        let queries = CollectorQueries(store: store)
        let range = ScreenQuery(from: now - 4 * 86_400, to: now)
        let edges = ScreenQuery(from: now - 3 * 86_400 + 5_000, to: now - 20_000)
        var lines: [String] = []
        func figures(_ value: RollupValue) -> String {
            let names = QueryFigure.allNames.compactMap(QueryFigure.init(name:)).map { figure in
                figure.value(of: value).map { String(format: "%.15g", $0) } ?? "-"
            }
            let spread = VisitMetric.allCases.map { metric -> String in
                let part = value.statistics[metric]
                let error = part.standardError.map { String(format: "%.12g", $0) } ?? "-"
                let median = part.visitValue(atQuantile: 0.5).map { String(format: "%.15g", $0) } ?? "-"
                return "\(part.visits)/\(part.zeroValues)/\(error)/\(median)"
            }
            return "visits \(value.visits) devices \(value.devices.estimate) frames \(value.report.frames) motion \(value.motion?.frames ?? -1) "
                + names.joined(separator: " ") + " | " + spread.joined(separator: " ")
        }
        for (name, query) in [("all", range), ("edges", edges)] {
            for aggregate in [AggregateQuery(filter: query), AggregateQuery(filter: query, byScreen: true),
                              AggregateQuery(filter: query, interval: .hour), AggregateQuery(filter: query, byScreen: true, interval: .day),
                              AggregateQuery(filter: query, tagKey: "experiment")]
                + QueryDimension.rollupDimensions.map({ AggregateQuery(filter: query, dimension: $0) }) {
                for group in try await store.aggregate(app: "shop", query: aggregate) {
                    lines.append("\(name) \(aggregate) → \(group.screen ?? "") \(group.bucketStart.map { String($0) } ?? "") \(group.dimensionValue ?? ""): \(figures(group.rollup))")
                }
            }
            var tagged = query
            tagged.tag = TagFilter(key: "experiment", value: Self.hostileArm)
            var filtered = tagged
            filtered[.appVersion] = "3.1.0"
            filtered[.lowPower] = "false"
            for aggregate in [AggregateQuery(filter: tagged, byScreen: true), AggregateQuery(filter: filtered, interval: .hour)] {
                for group in try await store.aggregate(app: "shop", query: aggregate) {
                    lines.append("\(name) tagged \(group.screen ?? "") \(group.bucketStart.map { String($0) } ?? ""): \(figures(group.rollup))")
                }
            }
            let comparison = try await queries.compare(app: "shop", query: query, baseline: "3.0.0", candidate: "3.1.0")
            for screen in comparison.screens {
                lines.append("\(name) compare \(screen.screen) \(screen.verdict): " + screen.metrics.map { change in
                    "\(change.metric) \(change.verdict) " + [change.change, change.changeLow, change.changeHigh].map { $0.map { String(format: "%.11g", $0) } ?? "-" }.joined(separator: " ")
                }.joined(separator: "; "))
            }
        }
        for dimension in QueryDimension.rollupDimensions {
            lines.append("values \(dimension): \(try await store.dimensionValues(app: "shop", dimension: dimension, from: range.from, to: range.to))")
        }
        lines.append("tag values: \(try await store.tagValues(app: "shop", key: "experiment", from: range.from, to: range.to))")
        for (name, query) in [("all", range), ("edges", edges)] {
            lines.append("\(name) sample rates: \(try await queries.sampleRates(app: "shop", from: query.from, to: query.to))")
        }
        lines.append("raw events: \(try await store.rawEventCount(app: "shop"))")
        let export = EventQuery(screens: range, tags: ["build": "b2'; DROP TABLE events; --"])
        var exported = 0
        var hour = try await store.firstRawEventHour(app: "shop", from: RawEventKey.hour(of: range.from), through: RawEventKey.hour(of: range.to))
        while let current = hour {
            let keys = try await store.rawEventKeys(app: "shop", query: export, hour: current, after: nil)
            let events = try await store.rawEvents(app: "shop", keys: keys)
            exported += events.count
            lines.append("export hour \(current): " + events.map { "\($0.key.startedAt) \($0.batchId) \($0.values) \($0.receivedAt) \($0.payload)" }.joined(separator: ", "))
            hour = try await store.firstRawEventHour(app: "shop", from: current + 1, through: RawEventKey.hour(of: range.to))
        }
        lines.append("exported \(exported)")
        return lines
    }

    @Test("SQLite and ClickHouse answer every query alike for the same visits", arguments: [StoreContractTests.Kind.clickhouse, .clickhouseCluster])
    func sameAnswers(_ kind: StoreContractTests.Kind) async throws {
        let reference = try SQLiteStore(inMemoryWith: CardinalityLimits())
        let (store, keepAlive) = try await kind.make()
        for target in [reference as any CollectorStore, store] {
            _ = try await target.createApp(name: "Shop", id: "shop")
            #expect(try await target.declareTagKey(app: "shop", key: "experiment", now: Self.now - 5 * 86_400) == true)
            let batches = Self.batches()
            for start in stride(from: 0, to: batches.count, by: 7) {
                let results = try await target.ingest(Array(batches[start..<min(start + 7, batches.count)]))
                #expect(results.allSatisfy { !$0.duplicate && $0.stored == 4 })
            }
            // Every batch again, as a device retrying after a lost answer: nothing counts twice.
            #expect(try await target.ingest(batches).allSatisfy(\.duplicate))
        }
        let expected = try await Self.answers(reference)
        let got = try await Self.answers(store)
        #expect(got.count == expected.count)
        for (line, want) in zip(got, expected) where line != want {
            Issue.record("\(kind):\n  got      \(line)\n  expected \(want)")
        }
        #expect(expected.count > 100, "the comparison covers many groups")
        #expect(expected.contains { $0.hasPrefix("exported ") && $0 != "exported 0" }, "the export's hostile tag filter matches events")
        #expect(expected.contains { $0.contains("tagged") }, "the hostile tag value filters")
        _ = keepAlive
    }
}
