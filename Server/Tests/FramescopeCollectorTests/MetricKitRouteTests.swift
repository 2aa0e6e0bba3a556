import CompressNIO
import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// `POST /v1/metrickit` and `GET /v1/apps/{app}/metrickit`: MetricKit payloads from the
/// corpus (ChimeHQ/Meter, BSD-3-Clause) with their times moved near the test's now, and
/// metric payloads in Apple's documented shape.
@Suite("Collector: MetricKit payloads")
struct MetricKitRouteTests {
    static let now = CollectorRouteTests.now
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/metrickit")
    }

    /// A corpus payload with its 2020 times moved to the day before the test's now.
    static func corpusPayload(_ name: String) throws -> String {
        try String(contentsOf: corpus.appendingPathComponent(name), encoding: .utf8)
            .replacingOccurrences(of: "2020-10-10", with: "2026-11-19").replacingOccurrences(of: "2020-10-11", with: "2026-11-19")
    }

    static func metricPayload(version: String, ratio: String, os: String = "iPhone OS 18.1 (22B83)", hangs: [String] = []) -> String {
        let diagnostics = hangs.map { #"{"diagnosticMetaData": {"hangDuration": "\#($0)"}}"# }.joined(separator: ", ")
        return """
        {"timeStampBegin": "2026-11-19 00:00:00 +0000", "timeStampEnd": "2026-11-19 23:59:00 +0000",
         "metaData": {"appVersion": "\(version)", "appBuildVersion": "1", "osVersion": "\(os)", "deviceType": "iPhone14,5"},
         "animationMetrics": {"scrollHitchTimeRatio": "\(ratio)"}, "hangDiagnostics": [\(diagnostics)]}
        """
    }

    func post(_ client: any TestClientProtocol, _ key: String, _ body: String, gzip: Bool = false) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(key)"]
        var buffer = ByteBuffer(string: body)
        if gzip {
            headers[.contentEncoding] = "gzip"
            buffer = try buffer.compress(with: .gzip())
        }
        return try await client.execute(uri: "/v1/metrickit", method: .post, headers: headers, body: buffer)
    }

    func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
        try JSONDecoder().decode(type, from: Data(buffer: response.body))
    }

    func versions(_ client: any TestClientProtocol, _ key: String, _ query: String = "") async throws -> [MetricKitVersionSummary] {
        let response = try await client.execute(uri: "/v1/apps/shop/metrickit?from=2026-11-01T00:00:00Z\(query)", method: .get,
                                                headers: [.authorization: "Bearer \(key)"])
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try decode(MetricKitVersionsResponse.self, response).versions
    }

    @Test("The corpus payloads: a hang diagnostic is stored with its version, a day of crashes alone is read and not stored, a body sent again is not counted twice")
    func corpusPayloads() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            let hang = try Self.corpusPayload("meter_xcode-simulated_ios14_diagnostic-payload.json")
            let first = try await post(client, shop.ingestKey, hang)
            #expect(first.status == .accepted)
            #expect(try decode(MetricKitResponse.self, first) == MetricKitResponse(accepted: 1, duplicates: 0, withoutFigures: 0, rejected: [], skipped: []))
            let again = try await post(client, shop.ingestKey, hang)
            #expect(try decode(MetricKitResponse.self, again).duplicates == 1)
            let crashes = try await post(client, shop.ingestKey, try Self.corpusPayload("meter_real_ios14_crash-diagnostic-payload.json"))
            #expect(try decode(MetricKitResponse.self, crashes) == MetricKitResponse(accepted: 0, duplicates: 0, withoutFigures: 1, rejected: [], skipped: []))
            let stored = try await versions(client, shop.readKey)
            #expect(stored == [MetricKitVersionSummary(appVersion: "1.0", payloads: 1, scrollHitchTimeRatioPayloads: 0, scrollHitchTimeRatio: nil,
                                                       hangDiagnostics: 1, hangTime: 20, longestHang: 20, histogramHangs: 0)])
            // Apple's OS text is stored as its version number, so the SDK's OS filter applies.
            #expect(try await versions(client, shop.readKey, "&osVersion=14.0.1").count == 1)
            #expect(try await versions(client, shop.readKey, "&osVersion=18.1").isEmpty)
        }
    }

    @Test("A hang diagnostic's call stack is a MetricKit hang group beside the SDK's: by its frame, once however often it is sent")
    func hangGroups() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            let hang = try Self.corpusPayload("meter_xcode-simulated_ios14_diagnostic-payload.json")
            #expect(try await post(client, shop.ingestKey, hang).status == .accepted)
            #expect(try await post(client, shop.ingestKey, hang).status == .accepted)  // again: a duplicate
            func groups(_ query: String = "") async throws -> HangsResponse {
                let response = try await client.execute(uri: "/v1/apps/shop/hangs?from=2026-11-01T00:00:00Z\(query)", method: .get,
                                                        headers: [.authorization: "Bearer \(shop.readKey)"])
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                return try decode(HangsResponse.self, response)
            }
            let answer = try await groups()
            #expect(answer.groups.isEmpty)
            let group = try #require(answer.metricKitGroups.first)
            #expect(answer.metricKitGroups.count == 1)
            #expect(group.signature == "cdb53ddb23374933b62f4356e6174af0+0x7b")
            #expect(group.hangs == 1 && group.fatal == 0 && group.duration == 20)
            #expect(group.screens.isEmpty && group.appVersions == ["1.0"])
            #expect(group.stack.map(\.image) == ["testBinaryName"] && group.stack.first?.share == 1)
            #expect(answer.imagesWithoutSymbols.map(\.name) == ["testBinaryName"])
            // The dimension filters MetricKit has apply; a screen filter finds none of its hangs.
            #expect(try await groups("&osVersion=14.0.1").metricKitGroups.count == 1)
            #expect(try await groups("&appVersion=2.0").metricKitGroups.isEmpty)
            #expect(try await groups("&screen=Feed").metricKitGroups.isEmpty)
        }
    }

    @Test("Metric payloads in a list, gzip: Apple's ratio is the mean per version; filters and the range apply")
    func metricPayloads() async throws {
        try await CollectorRouteTests().withCollector { client, shop, other in
            let list = "[" + [Self.metricPayload(version: "1.0", ratio: "4 ms per s"), Self.metricPayload(version: "1.0", ratio: "8 ms per s", hangs: ["300 ms", "2 sec"]),
                              Self.metricPayload(version: "1.1", ratio: "20 ms per s")].joined(separator: ",") + "]"
            let response = try await post(client, shop.ingestKey, list, gzip: true)
            #expect(response.status == .accepted)
            #expect(try decode(MetricKitResponse.self, response).accepted == 3)
            let stored = try await versions(client, shop.readKey)
            #expect(stored.map(\.appVersion) == ["1.0", "1.1"])
            #expect(stored.first?.scrollHitchTimeRatio == 6)
            #expect(stored.first?.hangDiagnostics == 2)
            #expect(stored.first?.longestHang == 2)
            #expect(try await versions(client, shop.readKey, "&appVersion=1.1").map(\.scrollHitchTimeRatio) == [20])
            #expect(try await versions(client, shop.readKey, "&to=2026-11-18T00:00:00Z").isEmpty)
            // Another app's read key sees nothing of this app's; the other app has none.
            let crossed = try await client.execute(uri: "/v1/apps/shop/metrickit", method: .get, headers: [.authorization: "Bearer \(other.readKey)"])
            #expect(crossed.status == .forbidden)
        }
    }

    @Test("Hostile payloads: bad device text refuses its payload by field, unreadable values are skipped by field, the rest is stored; bodies that are not payloads are 400 naming the body")
    func hostilePayloads() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            let list = "[" + [Self.metricPayload(version: "1.\u{202E}0", ratio: "4 ms per s"),
                              Self.metricPayload(version: "1.0", ratio: "1e308 ms per s", hangs: ["20 parsecs", "1 sec"]),
                              #"{"timeStampEnd": "2019-01-01 00:00:00", "animationMetrics": {"scrollHitchTimeRatio": "1 ms per s"}}"#,
                              #"{"metaData": {"appVersion": 3}, "animationMetrics": {"scrollHitchTimeRatio": "2 ms per s"}}"#].joined(separator: ",") + "]"
            let response = try await post(client, shop.ingestKey, list)
            #expect(response.status == .accepted)
            let answer = try decode(MetricKitResponse.self, response)
            #expect(answer.accepted == 2)
            #expect(answer.rejected.map(\.index) == [0, 2])
            #expect(answer.rejected.map(\.field) == ["metaData.appVersion", "timeStampEnd"])
            #expect(answer.skipped.map(\.field) == ["animationMetrics.scrollHitchTimeRatio", "hangDiagnostics[0].diagnosticMetaData.hangDuration", "metaData.appVersion"])
            #expect(answer.skipped.map(\.index) == [1, 1, 3])
            // The payload without times counts at its receipt, the test's now.
            let stored = try await versions(client, shop.readKey, "&to=2026-11-21T00:00:00Z")
            #expect(stored.map(\.appVersion) == ["", "1.0"])
            #expect(stored.last?.hangDiagnostics == 1)
            #expect(stored.last?.scrollHitchTimeRatio == nil)

            for (body, code) in [("{\"hangDiagnostics\": [", "invalid_json"), ("42", "invalid_json"), ("[1]", "invalid_json"),
                                 ("[" + Array(repeating: "{}", count: 1001).joined(separator: ",") + "]", "too_many_payloads")] {
                let refused = try await post(client, shop.ingestKey, body)
                #expect(refused.status == .badRequest)
                let detail = try CollectorRouteTests().error(refused)
                #expect(detail.code == code && detail.field == "body", "\(detail)")
            }
            let readKey = try await post(client, shop.readKey, Self.metricPayload(version: "1.0", ratio: "1 ms per s"))
            #expect(readKey.status == .forbidden)
        }
    }

    @Test("The overview shows Apple's ratio beside the SDK's hitch ratio in motion for the same version, escaped")
    func overviewSection() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        _ = try await store.createApp(name: "Shop", id: "shop")
        _ = try await QueryTests().ingestBatch(store, makeBatch(id: "sdk", start: Self.now - 7200, version: "<b>1.0</b>"))
        let service = IngestService(store: store, clock: { Self.now })
        let response = try await service.ingestMetricKit(body: Array(Self.metricPayload(version: "<b>1.0</b>", ratio: "7.5 ms per s").utf8), app: "shop",
                                                         logger: .init(label: "test"))
        #expect(response.accepted == 1)
        let html = try await DashboardPages(store: store).overview(app: "shop", filters: DashboardFilters(parameters: [:]), now: Self.now)
        let section = try #require(html.components(separatedBy: "id=\"metrickit-table\"").last)
        #expect(section.contains("data-metrickit-version=\"&lt;b&gt;1.0&lt;/b&gt;\""))
        #expect(section.contains("data-metric=\"scrollHitchTimeRatio\" data-value=\"7.5\""))
        #expect(section.range(of: #"data-metric="motion.hitchRatio" data-value="[0-9.]+""#, options: .regularExpression) != nil)
        #expect(!html.contains("<b>1.0</b>"))
    }
}
