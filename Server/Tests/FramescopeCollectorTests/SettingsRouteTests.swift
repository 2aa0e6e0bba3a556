import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Settings routes: thresholds")
struct SettingsRouteTests {
    /// A collector on a fresh store with the apps `shop` and `other`; runs `body` with its test client.
    func withCollector(_ body: @escaping @Sendable (any TestClientProtocol, AppCredentials, AppCredentials, SQLiteStore) async throws -> Void) async throws {
        let temporary = try TemporaryStore()
        let shop = try await temporary.store.createApp(name: "Shop", id: nil)
        let other = try await temporary.store.createApp(name: "Other", id: nil)
        let store = temporary.store
        let router = Collector(store: store, clock: { CollectorRouteTests.now }).router
        try await Application(router: router).test(.router) { client in try await body(client, shop, other, store) }
        _ = temporary
    }

    func error(_ response: TestResponse) throws -> ErrorBody.Detail {
        try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body)).error
    }

    func answer(_ response: TestResponse) throws -> ThresholdsResponse {
        try JSONDecoder().decode(ThresholdsResponse.self, from: Data(buffer: response.body))
    }

    @Test("GET gives the defaults until a PUT; PUT replaces the whole setting, answers like GET, and stays with its app")
    func roundTrip() async throws {
        try await withCollector { client, shop, other, store in
            let admin: HTTPFields = [.authorization: "Bearer \(shop.adminKey)"]
            let initial = try answer(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"]))
            #expect(initial == ThresholdsResponse(app: "shop", settings: AppThresholds()))
            #expect(initial.bands.first { $0.metric == "hitchRatio" }.map { ($0.goodBelow, $0.criticalAbove, $0.source) } ?? (nil, nil, .none) == (5, 10, .default))
            #expect(initial.verdict.minimumChange == 0.05 && initial.verdict.minimumVisits == 2)
            #expect(initial.alerts == EffectiveAlertRules(settings: AppThresholds()))
            #expect(initial.alerts.minimumInstallations == 20 && initial.alerts.minimumInstallationsSource == .default && initial.alerts.maximumAlertsPerPass == 10)

            let body = #"{"bands": {"hitchRatio": {"goodBelow": 3, "criticalAbove": 7}, "frameDuration.p95": {"goodBelow": 0.02, "criticalAbove": 0.04}}, "verdict": {"minimumVisits": 25}, "alerts": {"minimumInstallations": 5}}"#
            let put = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: admin, body: ByteBuffer(string: body))
            #expect(put.status == .ok)
            let expected = AppThresholds(bands: [.hitchRatio: BandLimits(goodBelow: 3, criticalAbove: 7), .frameDurationP95: BandLimits(goodBelow: 0.02, criticalAbove: 0.04)],
                                         minimumVisits: 25, minimumInstallations: 5)
            #expect(try answer(put) == ThresholdsResponse(app: "shop", settings: expected))
            #expect(try await store.thresholds(app: "shop") == expected)
            let read = try answer(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .get, headers: admin))
            #expect(read.settings == expected)
            #expect(read.bands.map(\.source) == [.app, .default, .none, .none, .app])
            #expect(read.verdict.minimumVisitsSource == .app && read.verdict.minimumChangeSource == .default)
            #expect(read.alerts.minimumInstallations == 5 && read.alerts.minimumInstallationsSource == .app)
            // What GET gives as settings is a body PUT takes: sending it back changes nothing.
            let settingsJSON = try JSONEncoder().encode(read.settings)
            #expect(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: admin, body: ByteBuffer(data: settingsJSON)).status == .ok)
            #expect(try await store.thresholds(app: "shop") == expected)
            // The other app is untouched.
            let others = try answer(try await client.execute(uri: "/v1/apps/other/thresholds", method: .get, headers: [.authorization: "Bearer \(other.readKey)"]))
            #expect(others.settings == AppThresholds())
            // A PUT of {} goes back to every default.
            #expect(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: admin, body: ByteBuffer(string: "{}")).status == .ok)
            #expect(try await store.thresholds(app: "shop") == AppThresholds())
        }
    }

    @Test("Hostile PUT bodies get a 4xx JSON error naming the field, and change nothing", arguments: [
        (#"{"bands": {"hitchRatio": {"goodBelow": NaN, "criticalAbove": 10}}}"#, 400, "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hitchRatio": {"goodBelow": 1e400, "criticalAbove": 10}}}"#, 400, "bands.hitchRatio.goodBelow"),
        (#"{"bands": {"hangRate": {"goodBelow": -5, "criticalAbove": 10}}}"#, 400, "bands.hangRate.goodBelow"),
        (#"{"bands": {"hangRate": {"goodBelow": "low", "criticalAbove": 10}}}"#, 400, "bands.hangRate.goodBelow"),
        (#"{"bands": {"frozenFramesPerThousand": {"goodBelow": 8, "criticalAbove": 2}}}"#, 400, "bands.frozenFramesPerThousand.criticalAbove"),
        (#"{"bands": {"frameDuration.p95": {"goodBelow": 0.02, "criticalAbove": 1e300}}}"#, 400, "bands.frameDuration.p95.criticalAbove"),
        (#"{"bands": {"<script>": {"goodBelow": 1, "criticalAbove": 2}}}"#, 400, "bands.<script>"),
        (#"{"verdict": {"minimumChange": "5%"}}"#, 400, "verdict.minimumChange"),
        (#"{"verdict": {"minimumVisits": 0}}"#, 400, "verdict.minimumVisits"),
        (#"{"verdict": {"minimumVisits": 1e3}}"#, 400, "verdict.minimumVisits"),
        (#"{"verdict": {"minimumVisits": -9223372036854775809}}"#, 400, "verdict.minimumVisits"),
        (#"{"thresholds": {}}"#, 400, "thresholds"),
        (#"{"alerts": {"minimumInstallations": -1}}"#, 400, "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": 1000000001}}"#, 400, "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": 20.5}}"#, 400, "alerts.minimumInstallations"),
        (#"{"alerts": {"minimumInstallations": "20"}}"#, 400, "alerts.minimumInstallations"),
        (#"{"alerts": {"maximumAlertsPerPass": 1000}}"#, 400, "alerts.maximumAlertsPerPass"),
    ] as [(String, Int, String)])
    func hostile(_ body: String, status: Int, field: String) async throws {
        try await withCollector { client, shop, _, store in
            let kept = AppThresholds(minimumChange: 0.2)
            #expect(try await store.setThresholds(kept, app: "shop"))
            let response = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: [.authorization: "Bearer \(shop.adminKey)"],
                                                    body: ByteBuffer(string: body))
            #expect(Int(response.status.code) == status)
            #expect(try error(response).field == field, "\(body)")
            #expect(try await store.thresholds(app: "shop") == kept)
        }
    }

    @Test("Bodies that are not thresholds at all: too large, deeply nested, not JSON, empty; another method is 405")
    func unreadable() async throws {
        try await withCollector { client, shop, _, store in
            let admin: HTTPFields = [.authorization: "Bearer \(shop.adminKey)"]
            let huge = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: admin,
                                                body: ByteBuffer(string: #"{"bands": {"hitchRatio": {"goodBelow": 1"# + String(repeating: "0", count: 1 << 20) + "}}}"))
            #expect(huge.status == .contentTooLarge)
            #expect(try error(huge).code == "body_too_large")
            let deep = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: admin,
                                                body: ByteBuffer(string: #"{"verdict": "# + String(repeating: "[", count: 15_000)))
            #expect(deep.status == .badRequest)
            #expect(try error(deep).field == "verdict")
            for (text, field) in [("", nil), ("not json", nil), ("[1]", nil), (#"{"bands": {"#, "bands"), ("{} {}", nil)] as [(String, String?)] {
                let response = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: admin, body: ByteBuffer(string: text))
                #expect(response.status == .badRequest, "\(text)")
                let detail = try error(response)
                #expect(detail.code == "invalid_json" && detail.field == field, "\(text)")
            }
            #expect(try await store.thresholds(app: "shop") == AppThresholds())
            for method in [HTTPRequest.Method.post, .delete, .patch] {
                let response = try await client.execute(uri: "/v1/apps/shop/thresholds", method: method, headers: admin, body: ByteBuffer(string: "{}"))
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, PUT")
            }
        }
    }

    @Test("A revoked app's admin key is refused; a rotated admin key ends the old one")
    func revokedAndRotated() async throws {
        try await withCollector { client, shop, _, store in
            let newKey = try #require(try await store.rotateKey(app: "shop", kind: .admin, gracePeriod: 0, now: CollectorRouteTests.now))
            let body = ByteBuffer(string: #"{"verdict": {"minimumChange": 0.1}}"#)
            let old = try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: [.authorization: "Bearer \(shop.adminKey)"], body: body)
            #expect(old.status == .unauthorized)
            #expect(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: [.authorization: "Bearer \(newKey)"], body: body).status == .ok)
            #expect(try await store.revokeApp("shop"))
            #expect(try await client.execute(uri: "/v1/apps/shop/thresholds", method: .put, headers: [.authorization: "Bearer \(newKey)"], body: body).status == .unauthorized)
        }
    }
}
