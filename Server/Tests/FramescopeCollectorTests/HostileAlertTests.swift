import Foundation
@testable import FramescopeCollector
import FramescopeCore
import FramescopeDemo
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Logging
import Synchronization
import Testing

/// Alerts against whoever holds the ingest key (issue 30, item 9), on every store: a
/// version only a few installations sent takes no part in the chain of versions, and a
/// pass raises at most ``AlertEvaluator/maximumAlertsPerPass`` alerts per app, holding the
/// rest back (logged, counted) for the next passes.
@Suite("Hostile versions and the alert limits, on every store")
struct HostileAlertTests {
    static let now = AlertTests.now

    /// `count` visits of `version` to `screen` in one batch from `installation` (none when
    /// `nil`), one a minute from `start`, each a simulated `profile` visit.
    static func batch(app: String = DemoData.appId, id: String, version: String, screen: String = "Feed", installation: String?,
                      count: Int, profile: SyntheticWorkload.Profile, seed: UInt64, start: Double) -> IngestBatch {
        batch(app: app, id: id, version: version, screens: [screen], installation: installation, visitsPerScreen: count,
              profile: profile, seed: seed, start: start)
    }

    /// `visitsPerScreen` visits of `version` to each of `screens` in one batch from `installation`.
    static func batch(app: String, id: String, version: String, screens: [String], installation: String?, visitsPerScreen: Int,
                      profile: SyntheticWorkload.Profile, seed: UInt64, start: Double) -> IngestBatch {
        var events: [(ScreenVisitEvent, Double)] = []
        for (screenIndex, screen) in screens.enumerated() {
            for visit in 0..<visitsPerScreen {
                let index = screenIndex * visitsPerScreen + visit
                let report = visitReport(seed: seed &* 1_000 &+ UInt64(index), seconds: 4, profile: profile)
                let startedAt = start + Double(index) * 60
                events.append((ScreenVisitEvent(screen: screen, startedAt: ISO8601.format(unixSeconds: startedAt),
                                                duration: report.whole.duration + report.whole.firstDuration + 0.5,
                                                context: VisitContext(network: .wifi, lowPowerMode: false),
                                                report: report.whole, motion: report.motion), startedAt))
            }
        }
        var batch = IngestBatch(app: app, batchId: id, appVersion: version, osVersion: "18.1", deviceModel: "iPhone14,5",
                                events: events, rawEvents: events.map { _ in "{}" }, receivedAt: now)
        batch.installationId = installation
        return batch
    }

    /// A store of `kind` holding twelve days of the demo fleet (40 installations; 3.0.0,
    /// 3.1.0 with Feed heavier, 3.2.0 fixing it).
    static func demoStore(_ kind: StoreContractTests.Kind) async throws -> (store: any CollectorStore, keepAlive: AnyObject?) {
        let (store, keepAlive) = try await kind.make()
        _ = try await DemoData.prepare(store: store, now: now, days: 12, deviceCount: 40)
        return (store, keepAlive)
    }

    static func describe(_ alerts: [RegressionAlert]) -> String {
        "\(alerts.map { "\($0.screen) \($0.metric) \($0.baseline)→\($0.candidate)" })"
    }

    @Test("Every demo version has at least the default minimum of installations, so the demo's alerts stand; raised above the fleet, the minimum leaves every version out, and 0 lets every version take part")
    func demoVersionsAreInstalledWidely() async throws {
        let (store, keepAlive) = try await Self.demoStore(.sqliteMemory)
        let (from, to) = AlertEvaluator(store: store).range(now: Self.now)
        let versions = try await store.aggregate(app: "demo", query: AggregateQuery(filter: ScreenQuery(from: from, to: to), dimension: .appVersion))
        let installations = Dictionary(uniqueKeysWithValues: versions.map { ($0.dimensionValue ?? "", $0.rollup.devices.estimate) })
        #expect(installations.keys.sorted() == ["3.0.0", "3.1.0", "3.2.0"])
        #expect(installations.values.allSatisfy { $0 >= AlertRules.standard.minimumInstallations }, "\(installations)")

        #expect(try await store.setThresholds(AppThresholds(minimumInstallations: 41), app: "demo"))
        let none = try await AlertEvaluator(store: store).evaluation(app: "demo", now: Self.now)
        #expect(none.raised.isEmpty && none.versionsLeftOut == ["3.0.0", "3.1.0", "3.2.0"])
        #expect(try await store.setThresholds(AppThresholds(minimumInstallations: 0), app: "demo"))
        #expect(try await !AlertEvaluator(store: store).evaluate(now: Self.now).isEmpty)
        withExtendedLifetime(keepAlive) {}
    }

    @Test("60 visits of an invented 3.0.9 on Feed from three installations do not enter the chain: 3.0.0 → 3.1.0 is still raised",
          arguments: StoreContractTests.Kind.allCases)
    func inventedVersionBetweenReleases(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await Self.demoStore(kind)
        // Smooth visits of a version between 3.0.0 and 3.1.0, 20 from each of three installations.
        let invented = (0..<3).map { device in
            Self.batch(id: "invented-\(device)", version: "3.0.9", installation: "attacker-\(device)", count: 20, profile: .light,
                       seed: UInt64(100 + device), start: Self.now - 2 * 86_400 + Double(device) * 3600)
        }
        _ = try await store.ingest(invented)
        let evaluator = AlertEvaluator(store: store)
        // Under the old rule (every version with visits takes part), 3.0.9 would stand
        // between the releases and its pair with 3.1.0 would replace the real one.
        #expect(try await store.setThresholds(AppThresholds(minimumInstallations: 0), app: "demo"))
        let oldRule = try await evaluator.findings(app: "demo", now: Self.now)
        #expect(oldRule.contains { $0.baseline == "3.0.9" && $0.candidate == "3.1.0" })
        #expect(!oldRule.contains { $0.screen == "Feed" && $0.baseline == "3.0.0" && $0.candidate == "3.1.0" })

        // The default rule: 3.0.9 has 3 installations of the 20 it needs.
        #expect(try await store.setThresholds(AppThresholds(), app: "demo"))
        let evaluation = try await evaluator.evaluation(app: "demo", now: Self.now)
        #expect(evaluation.versionsLeftOut == ["3.0.9"])
        #expect(evaluation.raised.contains { $0.screen == "Feed" && $0.metric == "hitchRatio" && $0.baseline == "3.0.0" && $0.candidate == "3.1.0" },
                "\(Self.describe(evaluation.raised))")
        #expect(evaluation.raised.allSatisfy { $0.baseline != "3.0.9" && $0.candidate != "3.0.9" }, "\(Self.describe(evaluation.raised))")
        withExtendedLifetime(keepAlive) {}
    }

    @Test("40 invented versions × 3 visits raise no alerts; the demo's real regression is still raised",
          arguments: StoreContractTests.Kind.allCases)
    func manyInventedVersions(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await Self.demoStore(kind)
        // 3.2.1 … 3.2.40 after the demo's last release, heavy and light in turn, half from
        // one installation and half from none.
        let invented = (1...40).map { index in
            Self.batch(id: "invented-\(index)", version: "3.2.\(index)", installation: index.isMultiple(of: 2) ? nil : "attacker",
                       count: 3, profile: index.isMultiple(of: 2) ? .light : .heavy, seed: UInt64(index), start: Self.now - 86_400 + Double(index) * 600)
        }
        _ = try await store.ingest(invented)
        let real: Set<String> = ["3.0.0", "3.1.0", "3.2.0"]
        let raised = try await AlertEvaluator(store: store).evaluate(now: Self.now)
        #expect(raised.allSatisfy { real.contains($0.baseline) && real.contains($0.candidate) }, "\(Self.describe(raised))")
        #expect(raised.contains { $0.screen == "Feed" && $0.metric == "hitchRatio" && $0.baseline == "3.0.0" && $0.candidate == "3.1.0" })
        #expect(try await store.alerts(app: "demo", limit: 1000).count == raised.count)

        // Under the old rule the same visits raise alerts of invented pairs.
        #expect(try await store.setThresholds(AppThresholds(minimumInstallations: 0), app: "demo"))
        let oldRule = try await AlertEvaluator(store: store).findings(app: "demo", now: Self.now)
        #expect(oldRule.filter { !real.contains($0.candidate) }.count > AlertEvaluator.maximumAlertsPerPass, "\(oldRule.count) findings")
        withExtendedLifetime(keepAlive) {}
    }

    /// An app with two widely installed versions, 1.1 heavier than 1.0 on each of ten
    /// screens: more regressions than one pass raises.
    static func manyRegressions(_ store: any CollectorStore) async throws {
        _ = try await store.createApp(name: "Shop", id: nil)
        let screens = (1...10).map { "Screen \($0)" }
        var batches: [IngestBatch] = []
        for (versionIndex, version) in ["1.0", "1.1"].enumerated() {
            for device in 0..<24 {
                batches.append(batch(app: "shop", id: "\(version)-\(device)", version: version, screens: screens, installation: "shop-\(device)",
                                     visitsPerScreen: 2, profile: versionIndex == 0 ? .light : .heavy, seed: UInt64(versionIndex * 100 + device),
                                     start: now - Double(3 - versionIndex) * 86_400 + Double(device) * 1800))
            }
        }
        _ = try await store.ingest(batches)
    }

    @Test("A pass raises at most 10 alerts per app; the rest are logged, counted in /metrics and raised by the next passes, none twice",
          arguments: StoreContractTests.Kind.allCases)
    func alertsPerPass(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        try await Self.manyRegressions(store)
        let evaluator = AlertEvaluator(store: store)
        let findings = try await evaluator.findings(app: "shop", now: Self.now)
        let cap = AlertEvaluator.maximumAlertsPerPass
        #expect(findings.count > 2 * cap, "\(findings.count) regressions")
        _ = try #require(try await store.addWebhook(app: "shop", url: "https://hooks.example.com/a", now: Self.now))
        _ = try #require(try await store.addWebhook(app: "shop", url: "https://hooks.example.com/b", now: Self.now))

        let transport = CountingTransport()
        let delivery = WebhookDelivery(store: store, transport: transport, publicURL: "http://127.0.0.1:8080", clock: { Self.now })
        let metrics = CollectorMetrics()
        let log = LogRecorder()
        let logger = Logger(label: "test") { _ in RecordingLogHandler(recorder: log) }
        var raised: [RegressionAlert] = []
        var pass = 0
        while raised.count < findings.count {
            pass += 1
            let before = transport.posts
            let result = try await AlertService.pass(evaluator: evaluator, delivery: delivery, now: Self.now + Double(pass - 1) * 3600,
                                                     logger: logger, metrics: metrics)
            let expected = min(cap, findings.count - raised.count)
            #expect(result.raised.count == expected, "pass \(pass)")
            #expect(result.heldBack == findings.count - raised.count - expected, "pass \(pass)")
            // Each alert is one POST to each of the two receivers.
            #expect(transport.posts - before == 2 * expected, "pass \(pass)")
            #expect(metrics.exposition().contains("framescope_alerts_held_back{app=\"shop\"} \(Double(result.heldBack))"), "pass \(pass)")
            if result.heldBack > 0 {
                #expect(log.lines.contains { $0.level == .warning && $0.message == "regression alerts held back for later passes"
                    && $0.metadata["heldBack"] == "\(result.heldBack)" && $0.metadata["app"] == "shop" }, "pass \(pass)")
            }
            raised += result.raised
            try #require(pass <= findings.count / cap + 1)
        }
        // Every regression raised, each once.
        #expect(Set(raised.map { "\($0.screen) \($0.metric)" }).count == findings.count)
        #expect(Set(raised.map { "\($0.screen) \($0.metric)" }) == Set(findings.map { "\($0.screen) \($0.figures.metric)" }))
        #expect(metrics.exposition().contains("framescope_alerts_raised_total{app=\"shop\"} \(findings.count)"))
        let last = try await AlertService.pass(evaluator: evaluator, delivery: delivery, now: Self.now + Double(pass) * 3600, logger: logger, metrics: metrics)
        #expect(last.raised.isEmpty && last.heldBack == 0)
        #expect(try await store.alerts(app: "shop", limit: 1000).count == findings.count)
        withExtendedLifetime(keepAlive) {}
    }

    @Test("The minimum installations is stored per app on every store, read back, replaced whole and refused outside 0…10⁹",
          arguments: StoreContractTests.Kind.allCases)
    func minimumInstallationsStored(_ kind: StoreContractTests.Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        _ = try await store.createApp(name: "Other", id: nil)
        #expect(try await store.thresholds(app: "shop")?.alertRules == AlertRules.standard)
        let set = AppThresholds(minimumVisits: 30, minimumInstallations: 50)
        #expect(try await store.setThresholds(set, app: "shop"))
        #expect(try await store.thresholds(app: "shop") == set)
        #expect(try await store.thresholds(app: "shop")?.alertRules == AlertRules(minimumInstallations: 50))
        #expect(try await store.thresholds(app: "other") == AppThresholds())
        #expect(try await store.setThresholds(AppThresholds(minimumInstallations: 0), app: "other"))
        #expect(try await store.thresholds(app: "other")?.minimumInstallations == 0)
        for bad in [-1, AlertRules.maximumInstallations + 1, Int.min] {
            let error = await #expect(throws: ThresholdError.self) { try await store.setThresholds(AppThresholds(minimumInstallations: bad), app: "shop") }
            #expect(error?.field == "alerts.minimumInstallations")
        }
        #expect(try await store.thresholds(app: "shop") == set)
        // A write replaces the whole setting: leaving it out goes back to the default.
        #expect(try await store.setThresholds(AppThresholds(minimumVisits: 30), app: "shop"))
        #expect(try await store.thresholds(app: "shop")?.minimumInstallations == nil)
        #expect(try await store.thresholds(app: "shop")?.alertRules == AlertRules.standard)
        withExtendedLifetime(keepAlive) {}
    }
}

/// A webhook receiver that answers 204 to every POST and counts them.
final class CountingTransport: WebhookTransport {
    private let count = Mutex(0)
    var posts: Int { count.withLock { $0 } }

    func post(url: String, body: [UInt8], headers: [(String, String)], timeout: Duration) async throws -> Int {
        count.withLock { $0 += 1 }
        return 204
    }
}

/// Log lines kept for a test to read.
final class LogRecorder: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let stored = Mutex<[Line]>([])
    var lines: [Line] { stored.withLock { $0 } }

    func append(_ line: Line) { stored.withLock { $0.append(line) } }
}

/// A log handler that writes into a ``LogRecorder``.
struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        recorder.append(LogRecorder.Line(level: event.level, message: event.message.description, metadata: merged.mapValues { $0.description }))
    }
}
