import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FramescopeCore
import FramescopeProcessTesting
import FramescopeSimulation
import Testing

/// `serve`'s cardinality options, through a real server: the window limits are options too.
@Suite("framescope serve: cardinality limits as options", .serialized)
struct ServeLimitOptionsTests {
    @Test("--max-screens-in-window 3 with --max-screens-per-day 2: screens on two days keep three names, the rest fold into (other)")
    func windowLimitOption() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        let ingestKey = try #require(keys["ingestKey"])
        let readKey = try #require(keys["readKey"])

        var workload = SyntheticWorkload(profile: .moderate, duration: 5, seed: 3)
        let report = PipelineSimulator(display: .fixed(hz: 60), seed: 3).run(&workload).analyze()
        let now = Date().timeIntervalSince1970
        func visit(_ screen: String, daysAgo: Double) -> ScreenVisitEvent {
            ScreenVisitEvent(screen: screen, startedAt: ISO8601.format(unixSeconds: now - daysAgo * 86_400), duration: 6,
                             context: VisitContext(network: .wifi, lowPowerMode: false), report: report.whole, motion: report.motion)
        }
        // Two screens three days ago (the daily limit), three more two days ago: the window
        // admits one of them (A, B, C), D and E fold.
        let batch = EventBatch(batchId: "window-1", app: AppInfo(id: "shop", version: "1.0", build: "1"),
                               device: DeviceInfo(model: "iPhone14,5", osName: "iOS", osVersion: "18.1", maxRefreshRate: 60),
                               events: [visit("A", daysAgo: 3), visit("B", daysAgo: 3),
                                        visit("C", daysAgo: 2), visit("D", daysAgo: 2), visit("E", daysAgo: 2)])

        let server = try ServerProcess(arguments: ["--db", db, "--max-screens-per-day", "2", "--max-screens-in-window", "3"])
        defer { server.stop() }
        let (status, body) = try await server.request("/v1/events", method: "POST", key: ingestKey, body: try JSONEncoder().encode(batch))
        #expect(status == 202, "\(String(decoding: body, as: UTF8.self))")
        let from = ISO8601.format(unixSeconds: now - 7 * 86_400)
        let (queryStatus, data) = try await server.request("/v1/apps/shop/screens?from=\(from)", key: readKey)
        #expect(queryStatus == 200, "\(String(decoding: data, as: UTF8.self))")
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let screens = try #require(json["screens"] as? [[String: Any]])
        var visits: [String: Int] = [:]
        for screen in screens {
            if let name = screen["screen"] as? String { visits[name] = screen["visits"] as? Int }
        }
        #expect(visits == ["A": 1, "B": 1, "C": 1, "(other)": 2], "\(visits)")
    }

    @Test("A window limit below the daily one is refused with the option named (exit 64)")
    func windowBelowDaily() throws {
        let refused = try CLI.run(["serve", "--port", "0", "--max-screens-per-day", "100", "--max-screens-in-window", "50"])
        #expect(refused.exitCode == 64)
        #expect(refused.stderr.contains("--max-screens-in-window must be 100–1000000"), "\(refused.stderr)")
        let zero = try CLI.run(["serve", "--port", "0", "--max-tag-values-in-window", "0"])
        #expect(zero.exitCode == 64 && zero.stderr.contains("--max-tag-values-in-window"), "\(zero.stderr)")
    }
}
