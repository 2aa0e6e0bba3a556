import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Testing

/// The rollups against a re-computation from the raw visits: for random filters over
/// every dimension (thermal state and display maximum included), the store's per-screen
/// answer equals the merge of the visits the filter selects, computed here in Swift.
@Suite("Dimensions: rollups agree with the raw visits")
struct DimensionAgreementTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    struct Visit {
        var screen: String
        var appVersion: String
        var osVersion: String
        var deviceModel: String
        var maxRefreshRate: Int
        var event: ScreenVisitEvent
        var start: Double

        /// The visit's value of `dimension`, as the registry reads it.
        func value(_ dimension: QueryDimension) -> String {
            dimension.read(VisitFacts(appVersion: appVersion, osVersion: osVersion, deviceModel: deviceModel,
                                      maxRefreshRate: maxRefreshRate, event: event))
        }
    }

    @Test("Random filters on every dimension: visits, frames, hitch and hang time equal the raw visits' merge", arguments: [UInt64(1), 2, 3])
    func randomFilters(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        let reports = (0..<12).map { visitReport(seed: $0 + 1, seconds: 2, profile: $0 % 3 == 0 ? .heavy : .moderate) }
        var visits: [Visit] = []
        for batchIndex in 0..<40 {
            let appVersion = ["3.0.0", "3.1.0"].randomElement(using: &random) ?? "3.0.0"
            let osVersion = ["17.5", "18.1"].randomElement(using: &random) ?? "18.1"
            let (model, rate) = [("iPhone14,5", 60), ("iPhone16,1", 120), ("iPad14,1", 90)].randomElement(using: &random) ?? ("iPhone14,5", 60)
            var events: [(ScreenVisitEvent, Double)] = []
            for _ in 0..<5 {
                let start = Self.now - Double(Int.random(in: 0..<(3 * 86_400), using: &random))
                let report = reports.randomElement(using: &random) ?? reports[0]
                let context = VisitContext(network: VisitContext.Network.allCases.randomElement(using: &random) ?? .wifi,
                                           lowPowerMode: Bool.random(using: &random),
                                           thermalState: VisitContext.ThermalState.allCases.randomElement(using: &random) ?? .nominal)
                let event = ScreenVisitEvent(screen: ["Feed", "Search", "Chat"].randomElement(using: &random) ?? "Feed",
                                             startedAt: ISO8601.format(unixSeconds: start), duration: report.whole.duration + 1,
                                             context: context, report: report.whole, motion: report.motion)
                events.append((event, start))
                visits.append(Visit(screen: event.screen, appVersion: appVersion, osVersion: osVersion, deviceModel: model,
                                    maxRefreshRate: rate, event: event, start: start))
            }
            var batch = IngestBatch(app: "shop", batchId: "b\(batchIndex)", appVersion: appVersion, osVersion: osVersion, deviceModel: model,
                                    events: events, rawEvents: events.map { _ in "{}" }, receivedAt: Self.now)
            batch.maxRefreshRate = rate
            _ = try await store.ingest(batch)
        }

        let filterable = QueryDimension.rollupDimensions
        var answered = 0
        var newDimensionsFiltered = 0
        for _ in 0..<40 {
            var query = ScreenQuery(from: Self.now - 3 * 86_400 - 3600, to: Self.now + 3600)
            // Some queries by hour, so the hourly rollups answer; most by whole days.
            if Bool.random(using: &random) {
                query.from = Double(Int64((Self.now - 30 * 3600) / 3600) * 3600)
                query.to = query.from + 20 * 3600
            }
            for dimension in filterable where Int.random(in: 0..<3, using: &random) == 0 {
                guard case let .oneOf(words) = dimension.values else {
                    query[dimension] = visits.randomElement(using: &random)?.value(dimension)
                    continue
                }
                query[dimension] = dimension.values == .boolean ? nil : words.filter { $0 != QueryDimension.unknownValue }.randomElement(using: &random)
            }
            if Bool.random(using: &random) { query[.lowPower] = Bool.random(using: &random) ? "true" : "false" }
            let selected = visits.filter { visit in
                visit.start >= query.from && visit.start < query.to
                    && filterable.allSatisfy { query[$0] == nil || query[$0] == visit.value($0) }
            }
            let answer = try await store.screens(app: "shop", query: query)
            if !answer.isEmpty { answered += 1 }
            if query[.thermalState] != nil || query[.maxRefreshRate] != nil, !answer.isEmpty { newDimensionsFiltered += 1 }
            let expected = Dictionary(grouping: selected, by: \.screen)
            #expect(answer.map(\.screen) == expected.keys.sorted(), "\(query.filters)")
            for screen in answer {
                let raw = expected[screen.screen] ?? []
                let merged = FrameReport.merged(raw.map(\.event.report))
                #expect(screen.visits == raw.count, "\(screen.screen) \(query.filters)")
                #expect(screen.report.frames == merged.frames)
                #expect(screen.report.hitchTimeNanoseconds == merged.hitchTimeNanoseconds)
                #expect(screen.report.hangTimeNanoseconds == merged.hangTimeNanoseconds)
            }
        }
        // The filters select something often enough to mean something.
        #expect(answered >= 15 && newDimensionsFiltered >= 5, "\(answered) answered, \(newDimensionsFiltered) on the new dimensions")
    }

    @Test("The new dimensions are read from each visit and its batch")
    func reading() {
        let report = visitReport(seed: 1, seconds: 1)
        let event = ScreenVisitEvent(screen: "Feed", startedAt: "2026-11-20T00:00:00Z", duration: 2,
                                     context: VisitContext(network: .wifi, lowPowerMode: false, thermalState: .serious),
                                     report: report.whole, motion: nil)
        for (rate, expected) in [(60, "60"), (120, "120"), (90, "other"), (1, "other")] {
            let facts = VisitFacts(appVersion: "1", osVersion: "18", deviceModel: "x", maxRefreshRate: rate, event: event)
            #expect(QueryDimension.maxRefreshRate.read(facts) == expected)
            #expect(QueryDimension.thermalState.read(facts) == "serious")
        }
        #expect(QueryDimension.thermalState.problem(with: "hot") != nil)
        #expect(QueryDimension.maxRefreshRate.problem(with: "90") != nil)
        #expect(QueryDimension.maxRefreshRate.problem(with: "unknown") == nil)
    }
}
