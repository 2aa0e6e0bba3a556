import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Hummingbird
import HummingbirdTesting
import Testing

/// `GET /v1/apps/{app}/hangs` through the collector: hangs posted with their stacks in
/// `POST /v1/events` come back grouped, with `symbol` and `dominant` spelled as `null`.
@Suite("Collector: hangs")
struct HangRouteTests {
    static let now = CollectorRouteTests.now

    func get(_ client: any TestClientProtocol, _ key: String, _ query: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/apps/shop/hangs?from=2026-11-19T00:00:00Z\(query)", method: .get, headers: [.authorization: "Bearer \(key)"])
    }

    @Test("Hangs posted with stacks come back grouped by site; every member is spelled, null where unknown; filters apply")
    func groupsThroughTheRoutes() async throws {
        try await CollectorRouteTests().withCollector { client, shop, other in
            let batch = HangStoreContractTests.batch(id: "hangs-1", screen: "Feed", version: "3.1.0", start: Self.now - 3600)
            let posted = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                                  body: ByteBuffer(data: try jsonData(batch)))
            #expect(posted.status == .accepted, "\(String(buffer: posted.body))")

            let response = try await get(client, shop.readKey, "")
            #expect(response.status == .ok)
            let json = try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            let groups = try #require(json["groups"] as? [[String: Any]])
            #expect(groups.map { $0["signature"] as? String } == ["73d406b3246a378bbefc16429a4d8133+0x215b",
                                                                  "73d406b3246a378bbefc16429a4d8133+0x25b7"])
            #expect(groups[0]["hangs"] as? Int == 2)
            #expect(groups[0]["screens"] as? [String] == ["Feed"])
            #expect(groups[0]["appVersions"] as? [String] == ["3.1.0"])
            #expect(groups[0]["firstSeen"] as? String == ISO8601.format(unixSeconds: Self.now - 3600 + 0.25))
            let stack = try #require(groups[0]["stack"] as? [[String: Any]])
            #expect(stack.count == 4)
            #expect(stack[1]["image"] as? String == "Shop" && stack[1]["offset"] as? Int == 0x215c)
            #expect(stack.allSatisfy { $0["symbol"] is NSNull }, "no symbols uploaded: symbol is null, not missing")
            #expect((groups[0]["dominant"] as? [String: Any])?["offset"] as? Int == 0x215c)
            #expect((json["metricKitGroups"] as? [Any])?.isEmpty == true)
            #expect(json["imagesWithoutSymbols"] as? [[String: String]] == [["name": "Shop", "id": "73d406b3246a378bbefc16429a4d8133"]])

            let decoded = try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: response.body))
            #expect(decoded.groups.map(\.hangs) == [2, 1])
            #expect(try await JSONDecoder().decode(HangsResponse.self, from: Data(buffer: get(client, shop.readKey, "&screen=Search").body)).groups.isEmpty)
            #expect(try await JSONDecoder().decode(HangsResponse.self, from: Data(buffer: get(client, shop.readKey, "&tag.plan=pro&limit=1").body)).groups.count == 1)

            #expect(try await get(client, shop.ingestKey, "").status == .forbidden)
            #expect(try await get(client, other.readKey, "").status == .forbidden)
            #expect(try await get(client, "fsr_nope", "").status == .unauthorized)
            let badLimit = try await get(client, shop.readKey, "&limit=0")
            #expect(badLimit.status == .badRequest)
            #expect(try CollectorRouteTests().error(badLimit).field == "limit")
            #expect(try await get(client, shop.readKey, "&from=yesterday").status == .badRequest)
        }
    }

    @Test("Symbols uploaded with the admin key name the frames; groups in one function merge; only the admin key may upload")
    func symbolsNameAndMerge() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            let batch = HangStoreContractTests.batch(id: "hangs-2", screen: "Feed", version: "3.1.0", start: Self.now - 3600)
            _ = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                         body: ByteBuffer(data: try jsonData(batch)))
            // One function holds both sites (0x2000..<0x3000); another the caller.
            let upload = SymbolUpload(images: [SymbolUpload.Image(id: "73D406B3-246A-378B-BEFC-16429A4D8133", name: "Shop", arch: "arm64", symbols: [
                SymbolUpload.Symbol(offset: 0x2000, size: 0x1000, name: "FeedViewController.decodeThumbnails(_:)"),
                SymbolUpload.Symbol(offset: 0x3F00, size: 0x200, name: "FeedViewController.viewDidLoad()"),
            ])])
            func post(_ key: String, _ body: Data) async throws -> TestResponse {
                try await client.execute(uri: "/v1/apps/shop/symbols", method: .post, headers: [.authorization: "Bearer \(key)"], body: ByteBuffer(data: body))
            }
            #expect(try await post(shop.readKey, try jsonData(upload)).status == .forbidden)
            #expect(try await post(shop.ingestKey, try jsonData(upload)).status == .forbidden)
            let bad = try await post(shop.adminKey, Data(#"{"images":[{"id":"73d406b3246a378bbefc16429a4d8133","name":"Shop","arch":"arm64","symbols":[[16,8,"b"],[0,8,"a"]]}]}"#.utf8))
            #expect(bad.status == .badRequest)
            #expect(try CollectorRouteTests().error(bad).field == "images[0].symbols[1]")
            let created = try await post(shop.adminKey, try jsonData(upload))
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let stored = try JSONDecoder().decode(SymbolImagesResponse.self, from: Data(buffer: created.body)).images
            #expect(stored.map(\.id) == ["73d406b3246a378bbefc16429a4d8133"] && stored.first?.symbols == 2)
            let listed = try await client.execute(uri: "/v1/apps/shop/symbols", method: .get, headers: [.authorization: "Bearer \(shop.readKey)"])
            #expect(try JSONDecoder().decode(SymbolImagesResponse.self, from: Data(buffer: listed.body)).images.first?.name == "Shop")

            let answer = try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: try await get(client, shop.readKey, "").body))
            #expect(answer.groups.map(\.signature) == ["Shop`FeedViewController.decodeThumbnails(_:)"])
            let merged = try #require(answer.groups.first)
            #expect(merged.hangs == 3, "two site-A hangs and one site-B hang: one function")
            #expect(merged.stack.map(\.symbol) == [nil, "FeedViewController.decodeThumbnails(_:)", "FeedViewController.viewDidLoad()", nil])
            #expect(merged.dominant?.symbol == "FeedViewController.decodeThumbnails(_:)")
            #expect(answer.imagesWithoutSymbols.isEmpty)
        }
    }

    @Test("Hangs in a function and in its clone (decode [clone .cold]) are one group named by the function; frames keep the note")
    func clonesGroupByFunction() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            let batch = HangStoreContractTests.batch(id: "hangs-3", screen: "Feed", version: "3.1.0", start: Self.now - 3600)
            _ = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"],
                                         body: ByteBuffer(data: try jsonData(batch)))
            // Site A (0x215b) in decode's cold part, which GCC places before the function, site B
            // (0x25b7) in decode, as an upload of a GCC build names them.
            let upload = SymbolUpload(images: [SymbolUpload.Image(id: "73d406b3246a378bbefc16429a4d8133", name: "Shop", arch: "arm64", symbols: [
                SymbolUpload.Symbol(offset: 0x2000, size: 0x200, name: "shop::decode(char const*, int) [clone .cold]"),
                SymbolUpload.Symbol(offset: 0x2500, size: 0x100, name: "shop::decode(char const*, int)"),
            ])])
            let created = try await client.execute(uri: "/v1/apps/shop/symbols", method: .post, headers: [.authorization: "Bearer \(shop.adminKey)"],
                                                   body: ByteBuffer(data: try jsonData(upload)))
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let answer = try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: try await get(client, shop.readKey, "").body))
            #expect(answer.groups.map(\.signature) == ["Shop`shop::decode(char const*, int)"])
            let group = try #require(answer.groups.first)
            #expect(group.hangs == 3, "two hangs in decode's cold part and one in decode: one function")
            // The stack of the group with the most time (site A's, 0.5 + 0.6 s) shows which piece it was in.
            #expect(group.dominant?.symbol == "shop::decode(char const*, int) [clone .cold]")
            #expect(group.stack.compactMap(\.symbol) == ["shop::decode(char const*, int) [clone .cold]"])
        }
    }
}
