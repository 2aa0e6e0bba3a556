import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 43, item 4: a call-stack tree deeper than about 252 frames, even in a crash
/// diagnostic the collector never reads, made the whole `POST /v1/metrickit` a 400
/// ("nested deeper than 512"), and the SDK deleted the payload.
@Suite("Collector: deep MetricKit call-stack trees")
struct MetricKitDepthTests {
    /// A call-stack tree whose thread-attributed stack is one chain of `depth` frames of the
    /// app's image `Shop`, innermost first (offsets `base`, `base` + 0x10, …), with 5 samples.
    static func chain(depth: Int, base: Int = 0x1000) -> String {
        var text = ""
        for level in 0..<depth {
            text += #"{"binaryUUID": "11111111-2222-3333-4444-555555555555", "binaryName": "Shop", "#
                + #""offsetIntoBinaryTextSegment": \#(base + 16 * level), "sampleCount": 5, "subFrames": ["#
        }
        text += String(repeating: "]}", count: depth)
        return #"{"callStacks": [{"threadAttributed": true, "callStackRootFrames": [\#(text)]}]}"#
    }

    /// A day's payload of version 2.0 with a scroll hitch ratio, the given hang diagnostics
    /// (each a call-stack tree and a duration) and crash diagnostics (each a tree).
    static func payload(hangs: [(tree: String, duration: String)], crashes: [String] = []) -> String {
        let hangList = hangs.map { #"{"callStackTree": \#($0.tree), "diagnosticMetaData": {"hangDuration": "\#($0.duration)"}}"# }
        let crashList = crashes.map { #"{"callStackTree": \#($0), "diagnosticMetaData": {"exceptionType": 1, "signal": 11}}"# }
        return """
        {"timeStampBegin": "2026-11-19 00:00:00 +0000", "timeStampEnd": "2026-11-19 23:59:00 +0000",
         "metaData": {"appVersion": "2.0", "appBuildVersion": "1", "osVersion": "iPhone OS 18.1 (22B83)", "deviceType": "iPhone14,5"},
         "animationMetrics": {"scrollHitchTimeRatio": "3 ms per s"},
         "crashDiagnostics": [\(crashList.joined(separator: ", "))], "hangDiagnostics": [\(hangList.joined(separator: ", "))]}
        """
    }

    func hangs(_ client: any TestClientProtocol, _ key: String) async throws -> HangsResponse {
        let response = try await client.execute(uri: "/v1/apps/shop/hangs?from=2026-11-01T00:00:00Z", method: .get,
                                                headers: [.authorization: "Bearer \(key)"])
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(HangsResponse.self, from: Data(buffer: response.body))
    }

    @Test("A crash diagnostic's call-stack tree 300 (and 20,000) frames deep is skipped unread: the payload is stored with its hang, nothing skipped")
    func deepCrashTree() async throws {
        for depth in [300, 20_000] {
            try await CollectorRouteTests().withCollector(configure: { $0.maximumDecompressedBytes = 16 << 20 }) { client, shop, _ in
                let body = Self.payload(hangs: [(Self.chain(depth: 3), "2 sec")], crashes: [Self.chain(depth: depth)])
                let response = try await MetricKitRouteTests().post(client, shop.ingestKey, body, gzip: true)
                #expect(response.status == .accepted, "\(depth): \(String(buffer: response.body).prefix(300))")
                let answer = try JSONDecoder().decode(MetricKitResponse.self, from: Data(buffer: response.body))
                #expect(answer == MetricKitResponse(accepted: 1, duplicates: 0, withoutFigures: 0, rejected: [], skipped: []), "\(depth)")
                let stored = try await MetricKitRouteTests().versions(client, shop.readKey)
                #expect(stored.map(\.appVersion) == ["2.0"] && stored.first?.hangDiagnostics == 1 && stored.first?.scrollHitchTimeRatio == 3)
                let group = try #require(try await hangs(client, shop.readKey).metricKitGroups.first)
                #expect(group.stack.count == 3 && group.hangs == 1 && group.duration == 2)
            }
        }
    }

    @Test("A hang diagnostic's tree 300 frames deep is stored to 256 frames, and the answer's skipped says its callers past them were left out")
    func deepHangTree() async throws {
        try await CollectorRouteTests().withCollector { client, shop, _ in
            let body = Self.payload(hangs: [(Self.chain(depth: 300), "3 sec"), (Self.chain(depth: 4, base: 0x9000), "1 sec")])
            let response = try await MetricKitRouteTests().post(client, shop.ingestKey, body, gzip: true)
            #expect(response.status == .accepted, "\(String(buffer: response.body).prefix(300))")
            let answer = try JSONDecoder().decode(MetricKitResponse.self, from: Data(buffer: response.body))
            #expect(answer.accepted == 1 && answer.rejected.isEmpty)
            #expect(answer.skipped.map(\.field) == ["hangDiagnostics[0].callStackTree.callStacks[0]"])
            #expect(answer.skipped.first?.message == "callers deeper than 256 frames are left out; the stack is kept to that depth")
            let stored = try await MetricKitRouteTests().versions(client, shop.readKey)
            #expect(stored.first?.hangDiagnostics == 2 && stored.first?.hangTime == 4)
            let groups = try await hangs(client, shop.readKey).metricKitGroups
            #expect(groups.count == 2)
            let deep = try #require(groups.first { $0.duration == 3 })
            #expect(deep.stack.count == HangStack.maximumDepth, "the stored stack is the first 256 frames")
            #expect(deep.stack.first?.offset == 0x1000 && deep.stack.last?.offset == UInt64(0x1000 + 16 * 255))
            #expect(groups.first { $0.duration == 1 }?.stack.count == 4)
        }
    }
}
