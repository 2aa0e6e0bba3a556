import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("GET …/compare judges with the app's verdict rules")
struct CompareRulesRouteTests {
    static let now = ISO8601.parse("2026-11-20T12:00:00Z")!

    @Test("A regression under the default rules is no significant change once the app asks for more visits than there are")
    func appRules() async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        // 3.0: light visits; 3.1: heavy ones on the same screen.
        func batch(_ id: String, _ version: String, _ profile: SyntheticWorkload.Profile, _ offset: Double) -> IngestBatch {
            let events = (0..<8).map { index -> (ScreenVisitEvent, Double) in
                let report = visitReport(seed: UInt64(index + 1), seconds: 4, profile: profile)
                let start = Self.now - offset - Double(index) * 120
                return (ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start), duration: report.whole.duration + 1,
                                         context: VisitContext(network: .wifi, lowPowerMode: false), report: report.whole, motion: report.motion), start)
            }
            return IngestBatch(app: "shop", batchId: id, appVersion: version, osVersion: "18.1", deviceModel: "iPhone15,2",
                               events: events, rawEvents: events.map { _ in "{}" }, receivedAt: Self.now)
        }
        _ = try await temporary.store.ingest([batch("a", "3.0", .light, 7200), batch("b", "3.1", .heavy, 3600)])
        let store = temporary.store
        try await Application(router: Collector(store: store, clock: { Self.now }).router).test(.router) { client in
            func verdict() async throws -> String? {
                let response = try await client.execute(uri: "/v1/apps/shop/compare?baseline=3.0&candidate=3.1", method: .get,
                                                        headers: [.authorization: "Bearer \(shop.readKey)"])
                #expect(response.status == .ok)
                return try JSONDecoder().decode(ComparisonResponse.self, from: Data(buffer: response.body)).screens.first?.verdict.rawValue
            }
            let before = try await verdict()
            #expect(before == "regressed")
            let stored = try await store.setThresholds(AppThresholds(minimumVisits: 1000), app: "shop")
            #expect(stored)
            let after = try await verdict()
            #expect(after == "noSignificantChange")
        }
        _ = temporary
    }
}
