import Foundation
@testable import FramescopeClickHouse
@testable import FramescopeCollector
import FramescopeCore
import FramescopeDemo
@testable import FramescopeSQLite
@testable import FramescopeStore
import GRDB
import Testing

@Suite("Per-app thresholds")
struct ThresholdsTests {
    @Test("The defaults are the fixed judgements of before: Apple's hitch-ratio bands, no other bands, 5 % and two visits per side")
    func defaultsAreTodays() {
        let none = AppThresholds()
        #expect(ThresholdFigure.hitchRatio.defaultBands == BandLimits(goodBelow: 5, criticalAbove: 10))
        #expect(ThresholdFigure.motionHitchRatio.defaultBands == BandLimits(goodBelow: 5, criticalAbove: 10))
        for figure in [ThresholdFigure.hangRate, .frozenFramesPerThousand, .frameDurationP95] {
            #expect(figure.defaultBands == nil, "\(figure)")
            #expect(none.source(of: figure) == .none)
        }
        #expect(none.source(of: .hitchRatio) == .default)
        // Every figure a page judges gets the band Core's fixed rule gave it, at and around every limit.
        for metric in VisitMetric.allCases {
            for value in [nil, 0, 4.999, 5, 7, 10, 10.001, 250, 1e9] as [Double?] {
                let before = QueryFigure(metric).metric.band(of: value)
                let now = ThresholdFigure(metric).flatMap { none.band(of: value, figure: $0) }
                #expect(now == before, "\(metric) at \(value.map { String($0) } ?? "nil")")
            }
        }
        #expect(VerdictRules.standard.minimumChange == CollectorQueries(store: EmptyStore()).minimumRelativeChange)
        #expect(none.verdictRules == VerdictRules.standard)
        #expect(none.alertRules == AlertRules.standard && AlertRules.standard.minimumInstallations == 20)
        #expect(ThresholdFigure.allCases.allSatisfy { QueryFigure(name: $0.rawValue)?.name == $0.rawValue })
    }

    @Test("Settings lay over each other field by field; sources say whose each value is")
    func overlayAndSources() {
        let stored = AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: 3, criticalAbove: 6)], minimumChange: 0.2)
        let given = AppThresholds(bands: [.hangRate: BandLimits(goodBelow: 10, criticalAbove: 30)], minimumVisits: 40)
        let merged = stored.overlaid(with: given)
        #expect(merged == AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: 3, criticalAbove: 6), .hangRate: BandLimits(goodBelow: 10, criticalAbove: 30)],
                                        minimumChange: 0.2, minimumVisits: 40))
        let answer = ThresholdsResponse(app: "shop", settings: merged)
        #expect(answer.bands.map(\.metric) == ThresholdFigure.allCases.map(\.rawValue))
        #expect(answer.bands.map(\.source) == [.app, .default, .app, .none, .none])
        #expect(answer.verdict == EffectiveVerdict(settings: merged))
        #expect(answer.verdict.minimumChangeSource == .app && answer.verdict.minimumVisits == 40)
        #expect(merged.band(of: 3, figure: .hitchRatio) == .warning && merged.band(of: 2.9, figure: .hitchRatio) == .good)
        #expect(merged.band(of: 31, figure: .hangRate) == .critical && merged.band(of: .nan, figure: .hangRate) == nil)
    }

    @Test("The JSON form round-trips; the answer spells out every figure, null limits where none apply")
    func json() throws {
        let settings = AppThresholds(bands: [.motionHitchRatio: BandLimits(goodBelow: 4, criticalAbove: 8)], minimumVisits: 12, minimumInstallations: 7)
        let encoded = try JSONEncoder().encode(settings)
        #expect(try JSONDecoder().decode(AppThresholds.self, from: encoded) == settings)
        let object = try #require(JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect((object["bands"] as? [String: Any])?.keys.sorted() == ["motion.hitchRatio"])
        #expect((object["verdict"] as? [String: Any])?.keys.sorted() == ["minimumVisits"])
        #expect((object["alerts"] as? [String: Any])?["minimumInstallations"] as? Int == 7)
        // A form written before the setting existed reads with it unset.
        #expect(try JSONDecoder().decode(AppThresholds.self, from: Data(#"{"bands": {}, "verdict": {"minimumVisits": 12}}"#.utf8)) == AppThresholds(minimumVisits: 12))
        let answer = try JSONEncoder().encode(ThresholdsResponse(app: "shop", settings: settings))
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.contains(#""goodBelow":null"#) && text.contains(#""source":"none""#))
        #expect(try JSONDecoder().decode(ThresholdsResponse.self, from: answer) == ThresholdsResponse(app: "shop", settings: settings))
        // The body parser reads what the encoder writes.
        #expect(try decode(String(decoding: encoded, as: UTF8.self)) == settings)
    }

    @Test("Thresholds stored before the minimum installations existed read with its default: a SQLite file of schema v12")
    func olderSQLiteFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-v12-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("collector.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v12: declared tag keys and their rollups")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO apps (id, name, created_at) VALUES ('shop', 'Shop', 0)")
            try db.execute(sql: "INSERT INTO app_verdict_rules (app_id, minimum_change, minimum_visits) VALUES ('shop', NULL, 30)")
        }
        try queue.close()
        let store = try SQLiteStore(path: path)
        let settings = try #require(try await store.thresholds(app: "shop"))
        #expect(settings == AppThresholds(minimumVisits: 30))
        #expect(settings.alertRules == AlertRules.standard)
        #expect(try await store.setThresholds(settings.overlaid(with: AppThresholds(minimumInstallations: 3)), app: "shop"))
        #expect(try await store.thresholds(app: "shop") == AppThresholds(minimumVisits: 30, minimumInstallations: 3))
    }

    /// A ClickHouse thresholds record as written before `minimumInstallations` existed.
    struct StoredThresholdsBeforeAlertRules: Encodable {
        var bands: [String: ClickHouseStore.StoredBand]
        var minimumChange: Double?
        var minimumVisits: Int?
    }

    @Test("Thresholds stored before the minimum installations existed read with its default: a ClickHouse record without the field")
    func olderClickHouseRecord() async throws {
        let (store, keepAlive) = try await StoreContractTests.Kind.clickhouse.make()
        defer { withExtendedLifetime(keepAlive) {} }
        let clickhouse = try #require(store as? ClickHouseStore)
        _ = try await store.createApp(name: "Shop", id: nil)
        let old = StoredThresholdsBeforeAlertRules(bands: ["hangRate": ClickHouseStore.StoredBand(goodBelow: 1, criticalAbove: 5)], minimumChange: nil, minimumVisits: 30)
        try await clickhouse.putControl("thresholds", app: "shop", id: "", old)
        let settings = try #require(try await store.thresholds(app: "shop"))
        #expect(settings == AppThresholds(bands: [.hangRate: BandLimits(goodBelow: 1, criticalAbove: 5)], minimumVisits: 30))
        #expect(settings.alertRules == AlertRules.standard)
    }

    func decode(_ text: String) throws(ThresholdsBody.Failure) -> AppThresholds {
        let bytes = Array(text.utf8)
        let result = bytes.withUnsafeBytes { buffer -> Result<AppThresholds, ThresholdsBody.Failure> in
            do throws(ThresholdsBody.Failure) { return .success(try ThresholdsBody.decode(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    @Test("A body: every key optional, null for the default, whole numbers where they belong")
    func body() throws {
        #expect(try decode("{}") == AppThresholds())
        #expect(try decode(#" {"bands": null, "verdict": null} "#) == AppThresholds())
        #expect(try decode(#"{"bands": {"hitchRatio": {"goodBelow": 4, "criticalAbove": 8.5}, "hangRate": null, "frameDuration.p95": {"criticalAbove": 0.05, "goodBelow": 0.0167}},"#
                           + #" "verdict": {"minimumChange": 0.1, "minimumVisits": 50}}"#)
                == AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: 4, criticalAbove: 8.5), .frameDurationP95: BandLimits(goodBelow: 0.0167, criticalAbove: 0.05)],
                                 minimumChange: 0.1, minimumVisits: 50))
        #expect(try decode(#"{"verdict": {"minimumChange": null, "minimumVisits": 3}}"#) == AppThresholds(minimumVisits: 3))
        #expect(try decode(#"{"alerts": {"minimumInstallations": 0}}"#) == AppThresholds(minimumInstallations: 0))
        #expect(try decode(#"{"alerts": {"minimumInstallations": 1000000000}, "verdict": null}"#) == AppThresholds(minimumInstallations: 1_000_000_000))
        #expect(try decode(#"{"alerts": {"minimumInstallations": null}}"#) == AppThresholds())
        #expect(try decode(#"{"alerts": null}"#) == AppThresholds())
    }

    @Test("Hostile bodies are refused naming the field, never a crash", arguments: [
        (#"{"bands": {"hitchRatio": {"goodBelow": NaN, "criticalAbove": 10}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1e400, "criticalAbove": 10}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1, "criticalAbove": -1e400}}}"#, "invalid_field", "bands.hitchRatio.criticalAbove"),
        (#"{"bands": {"hitchRatio": {"goodBelow": -1, "criticalAbove": 10}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": "5", "criticalAbove": 10}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": [5], "criticalAbove": 10}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": true, "criticalAbove": 10}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 10, "criticalAbove": 5}}}"#, "invalid_field", "bands.hitchRatio.criticalAbove"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 5}}}"#, "invalid_field", "bands.hitchRatio.criticalAbove"),
        (#"{"bands": {"hitchRatio": {"criticalAbove": 5}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1, "criticalAbove": 5, "warnAt": 3}}}"#, "invalid_field", "bands.hitchRatio.warnAt"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1, "goodBelow": 2, "criticalAbove": 5}}}"#, "invalid_field", "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": 5}}"#, "invalid_field", "bands.hitchRatio"),
        (#"{"bands": {"averageFPS": {"goodBelow": 1, "criticalAbove": 5}}}"#, "invalid_field", "bands.averageFPS"),
        (#"{"bands": {"hangRate": {"goodBelow": 1, "criticalAbove": 3601}}}"#, "invalid_field", "bands.hangRate.criticalAbove"),
        (#"{"bands": [1, 2]}"#, "invalid_field", "bands"),
        (#"{"verdict": {"minimumChange": -0.5}}"#, "invalid_field", "verdict.minimumChange"),
        (#"{"verdict": {"minimumChange": 11}}"#, "invalid_field", "verdict.minimumChange"),
        (#"{"verdict": {"minimumVisits": 2.5}}"#, "invalid_field", "verdict.minimumVisits"),
        (#"{"verdict": {"minimumVisits": 1}}"#, "invalid_field", "verdict.minimumVisits"),
        (#"{"verdict": {"minimumVisits": 99999999999999999999999}}"#, "invalid_field", "verdict.minimumVisits"),
        (#"{"verdict": {"minimumVisits": "50"}}"#, "invalid_field", "verdict.minimumVisits"),
        (#"{"verdicts": {}}"#, "invalid_field", "verdicts"),
        (#"{"alerts": {"minimumInstallations": -1}}"#, "invalid_field", "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": 1000000001}}"#, "invalid_field", "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": 2.5}}"#, "invalid_field", "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": 1e400}}"#, "invalid_field", "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": true}}"#, "invalid_field", "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": 3, "minimumInstallations": 4}}"#, "invalid_field", "alerts.minimumInstallations"),
        (#"{"alerts": {"maximumAlertsPerPass": 100}}"#, "invalid_field", "alerts.maximumAlertsPerPass"),
        (#"{"alerts": 20}"#, "invalid_field", "alerts"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1, "criticalAbove": 5}}, "bands": {}}"#, "invalid_field", "bands"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1, "criticalAbove": 5}"#, "invalid_json", "bands"),
        (#"{"bands": {}} trailing"#, "invalid_json", nil),
        ("[]", "invalid_json", nil),
        ("", "invalid_json", nil),
        ("\u{0}", "invalid_json", nil),
    ] as [(String, String, String?)])
    func hostile(_ text: String, code: String, field: String?) {
        do {
            let settings = try decode(text)
            Issue.record("accepted \(text) as \(settings)")
        } catch {
            #expect(error.code == code, "\(text): \(error)")
            #expect(error.field == field, "\(text): \(error)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test("Comparing under rules: the standard rules change nothing; a larger minimum sample or change takes verdicts away, figures stay")
    func compareUnderRules() async throws {
        let temporary = try TemporaryStore()
        _ = try await DemoData.prepare(store: temporary.store, now: DashboardTests.now, days: 6, deviceCount: 12)
        let queries = CollectorQueries(store: temporary.store)
        let query = ScreenQuery(from: DashboardTests.now - 6 * 86_400, to: DashboardTests.now)
        let plain = try await queries.compare(app: "demo", query: query, baseline: "3.0.0", candidate: "3.1.0")
        #expect(try await queries.compare(app: "demo", query: query, baseline: "3.0.0", candidate: "3.1.0", rules: .standard) == plain)
        let feed = try #require(plain.screens.first)
        #expect(feed.screen == "Feed" && feed.verdict == .regressed)
        let regressed = try #require(feed.metrics.first { $0.verdict == .regressed })
        let smallestSide = min(regressed.baselineVisits, regressed.candidateVisits)

        func verdict(_ rules: VerdictRules) async throws -> (figure: Verdict?, answer: ComparisonResponse) {
            let answer = try await queries.compare(app: "demo", query: query, baseline: "3.0.0", candidate: "3.1.0", rules: rules)
            let figure = answer.screens.first { $0.screen == "Feed" }?.metrics.first { $0.metric == regressed.metric }
            // Values and intervals never depend on the rules.
            #expect(figure?.change == regressed.change && figure?.changeLow == regressed.changeLow)
            return (figure?.verdict, answer)
        }
        #expect(try await verdict(VerdictRules(minimumChange: 0.05, minimumVisits: smallestSide)).figure == .regressed)
        let thin = try await verdict(VerdictRules(minimumChange: 0.05, minimumVisits: smallestSide + 1))
        #expect(thin.figure == .noSignificantChange)
        let none = try await verdict(VerdictRules(minimumChange: 0.05, minimumVisits: 1_000_000))
        #expect(none.answer.screens.allSatisfy { $0.verdict == .noSignificantChange && $0.metrics.allSatisfy { $0.verdict == .noSignificantChange } })
        #expect(none.answer.screens.map(\.screen) == none.answer.screens.map(\.screen).sorted(), "without verdicts, screens by name")
        let relative = try #require(regressed.relativeChange)
        #expect(try await verdict(VerdictRules(minimumChange: relative * 0.99, minimumVisits: 2)).figure == .regressed)
        #expect(try await verdict(VerdictRules(minimumChange: relative * 1.01, minimumVisits: 2)).figure == .noSignificantChange)
    }

    @Test("Seeded mutations of a full body: every one is either accepted as physical settings or refused with a code, never a crash")
    func mutations() {
        let seed = Array(#"{"bands": {"hitchRatio": {"goodBelow": 4, "criticalAbove": 8}, "motion.hitchRatio": null, "hangRate": {"goodBelow": 2, "criticalAbove": 10}, "frameDuration.p95": {"goodBelow": 0.0175, "criticalAbove": 0.034}}, "verdict": {"minimumChange": 0.1, "minimumVisits": 50}}"#.utf8)
        let alphabet = Array(#"{}[]",:0123456789.-+eE naNtruefl\"#.utf8) + [0, 0xFF, 0xC3]
        var state = UInt64(20_261_125)
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(max(1, bound)))
        }
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = seed
            for _ in 0...next(4) {
                switch next(3) {
                case 0 where !bytes.isEmpty: bytes[next(bytes.count)] = alphabet[next(alphabet.count)]
                case 1: bytes.insert(alphabet[next(alphabet.count)], at: next(bytes.count + 1))
                default: if !bytes.isEmpty { bytes.remove(at: next(bytes.count)) }
                }
            }
            let result = bytes.withUnsafeBytes { buffer -> Result<AppThresholds, ThresholdsBody.Failure> in
                do throws(ThresholdsBody.Failure) { return .success(try ThresholdsBody.decode(buffer)) } catch { return .failure(error) }
            }
            switch result {
            case .success(let settings):
                accepted += 1
                #expect(settings.problem() == nil)
            case .failure(let failure):
                #expect(["invalid_json", "invalid_field"].contains(failure.code) && !failure.message.isEmpty)
            }
        }
        #expect(accepted > 0 && accepted < 20_000, "\(accepted) accepted")
    }

    @Test("Deep nesting and long keys are refused quickly by name")
    func deepAndLong() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: ThresholdsBody.Failure.self) { try decode(#"{"bands": "# + deep) }
        let longKey = String(repeating: "k", count: 10_000)
        do {
            _ = try decode(#"{"\#(longKey)": 1}"#)
            Issue.record("a long unknown key was accepted")
        } catch {
            #expect(error.field == String(longKey.prefix(64)))
            #expect(error.message.count < 300)
        }
    }
}
