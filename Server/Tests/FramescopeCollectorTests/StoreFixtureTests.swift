import Foundation
@testable import FramescopeCollector
import FramescopeCore
import FramescopeDemo
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A database written by an earlier release opens with today's code and gives the same
/// answers on every read route.
///
/// `Fixtures/collector-v6.sqlite` was written by the collector at schema version 6
/// (commit cf99253, per-visit statistics stored by their enum's ordinal) from six days
/// of the simulated demo fleet; `collector-v6-answers.json` holds the read key and that
/// release's answer to each request in ``requests``. Opening a copy runs today's
/// migrations over it; every answer must come back equal.
///
/// To write the fixture anew (only ever for a new schema version, as a new file):
/// `FRAMESCOPE_WRITE_STORE_FIXTURE=1 swift test --filter StoreFixtureTests`.
@Suite("A database from an earlier release")
struct StoreFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let database = fixtures.appendingPathComponent("collector-v6.sqlite")
    static let answers = fixtures.appendingPathComponent("collector-v6-answers.json")
    /// When the fixture's data ends (Unix seconds): 2026-11-20T00:00:00Z.
    static let now = 1_795_132_800.0

    static let range = "from=2026-11-14&to=2026-11-20"
    /// The requests whose answers must not change.
    static let requests = [
        "/v1/apps/demo/screens?\(range)",
        "/v1/apps/demo/screens?\(range)&network=wifi&lowPowerMode=false",
        "/v1/apps/demo/timeseries?\(range)&metric=hitchRatio&interval=hour",
        "/v1/apps/demo/timeseries?\(range)&metric=averageFPS&interval=day&screen=Feed",
        "/v1/apps/demo/worst?\(range)&by=hangRate&minVisits=1",
        "/v1/apps/demo/worst?\(range)&by=frozenFramesPerThousand&minVisits=1",
        "/v1/apps/demo/percentiles?\(range)",
        "/v1/apps/demo/compare?\(range)&baseline=BASELINE&candidate=CANDIDATE",
    ]

    struct Answers: Codable {
        var readKey: String
        var baseline: String
        var candidate: String
        /// Each request's status and body, by request.
        var responses: [String: Recorded]
        struct Recorded: Codable, Equatable {
            var status: Int
            var body: String
        }
    }

    /// Sends every request to a collector over `store` and records the answers.
    static func answer(store: SQLiteStore, readKey: String, baseline: String, candidate: String) async throws -> [String: Answers.Recorded] {
        let router = Collector(store: store, clock: { now }).router
        let app = Application(router: router)
        let recorded = RecordedAnswers()
        try await app.test(.router) { client in
            for request in requests {
                let uri = request.replacingOccurrences(of: "BASELINE", with: baseline).replacingOccurrences(of: "CANDIDATE", with: candidate)
                let response = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(readKey)"])
                await recorded.set(request, Answers.Recorded(status: Int(response.status.code), body: String(buffer: response.body)))
            }
        }
        return await recorded.values
    }

    actor RecordedAnswers {
        var values: [String: Answers.Recorded] = [:]
        func set(_ key: String, _ value: Answers.Recorded) { values[key] = value }
    }

    @Test("Writes the fixture when asked", .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_WRITE_STORE_FIXTURE"] == "1"))
    func writeFixture() async throws {
        try FileManager.default.createDirectory(at: Self.fixtures, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: Self.database.path + suffix) }
        let store = try SQLiteStore(path: Self.database.path)
        let (credentials, ingested) = try await DemoData.prepare(store: store, now: Self.now, days: 6, deviceCount: 12)
        #expect(ingested > 0)
        let versions = try await store.dimensionValues(app: "demo", dimension: .appVersion, from: Self.now - 6 * 86_400, to: Self.now).sorted()
        let baseline = try #require(versions.first)
        #expect(versions.count >= 2, "\(versions)")
        let candidate = versions[min(1, versions.count - 1)]
        let responses = try await Self.answer(store: store, readKey: credentials.readKey, baseline: baseline, candidate: candidate)
        try await store.checkpoint()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Answers(readKey: credentials.readKey, baseline: baseline, candidate: candidate, responses: responses)).write(to: Self.answers)
    }

    @Test("Opens, migrates, and answers every read route as the release that wrote it did",
          .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_WRITE_STORE_FIXTURE"] != "1"))
    func sameAnswers() async throws {
        let expected = try JSONDecoder().decode(Answers.self, from: Data(contentsOf: Self.answers))
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-fixture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let copy = temporary.appendingPathComponent("collector.sqlite")
        try FileManager.default.copyItem(at: Self.database, to: copy)
        let store = try SQLiteStore(path: copy.path)
        let responses = try await Self.answer(store: store, readKey: expected.readKey, baseline: expected.baseline, candidate: expected.candidate)
        #expect(expected.responses.count == Self.requests.count)
        for request in Self.requests {
            let answer = try #require(responses[request])
            #expect(answer.status == 200, "\(request): \(answer.body)")
            let recorded = try #require(expected.responses[request])
            #expect(answer.status == recorded.status)
            // Compared as JSON values: the same numbers, strings and structure, whatever the key order.
            let now = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? NSObject
            let then = try JSONSerialization.jsonObject(with: Data(recorded.body.utf8)) as? NSObject
            #expect(now != nil && now == then, "\(request): now \(answer.body)\nthen \(recorded.body)")
        }
        // Migration v17 counted every visit stored before it at rate 1, on the day it started.
        let visits = try await store.rawEventCount(app: "demo")
        #expect(visits > 0)
        #expect(try await store.sampleRates(app: "demo", from: Self.now - 7 * 86_400, to: Self.now) == [SampleRateVisits(sampleRate: 1, visits: visits)])
        let lastDay = try await store.sampleRates(app: "demo", from: Self.now - 86_400, to: Self.now)
        let lastDayVisits = try await store.screens(app: "demo", query: ScreenQuery(from: Self.now - 86_400, to: Self.now)).reduce(0) { $0 + $1.visits }
        #expect(lastDay == [SampleRateVisits(sampleRate: 1, visits: lastDayVisits)])
    }
}
