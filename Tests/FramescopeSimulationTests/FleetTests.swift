import Foundation
import FramescopeCore
import FramescopeSimulation
import Testing

@Suite("Fleet simulation and the wire format")
struct FleetTests {
    static let start = ISO8601.parse("2026-10-01")!
    static let batches = FleetSimulation.demo(start: start, days: 12, deviceCount: 40, seed: 7).batches()

    func merged(screen: String, version: String) -> FrameReport {
        var report = FrameReport()
        for batch in Self.batches where batch.app.version == version {
            for event in batch.events where event.screen == screen {
                if let motion = event.motion { report.merge(motion) }
            }
        }
        return report
    }

    @Test("The same seed gives the same fleet")
    func determinism() {
        let again = FleetSimulation.demo(start: Self.start, days: 12, deviceCount: 40, seed: 7).batches()
        #expect(again == Self.batches)
        #expect(FleetSimulation.demo(start: Self.start, days: 3, deviceCount: 10, seed: 8).batches() != FleetSimulation.demo(start: Self.start, days: 3, deviceCount: 10, seed: 7).batches())
    }

    @Test("Version 3.1 regresses the Feed screen and 3.2 fixes it; other screens stay put")
    func regressionStory() throws {
        let before = try #require(merged(screen: "Feed", version: "3.0.0").hitchRatio)
        let regressed = try #require(merged(screen: "Feed", version: "3.1.0").hitchRatio)
        let fixed = try #require(merged(screen: "Feed", version: "3.2.0").hitchRatio)
        #expect(regressed > 1.5 * before, "\(before) → \(regressed)")
        #expect(fixed < before, "\(before) → \(fixed)")
        let chatBefore = try #require(merged(screen: "Chat", version: "3.0.0").hitchRatio)
        let chatAfter = try #require(merged(screen: "Chat", version: "3.1.0").hitchRatio)
        #expect(abs(chatAfter - chatBefore) < 0.5 * max(chatBefore, 1))
    }

    @Test("Every visit carries a consistent engine report and context; ProMotion shows at 120 Hz, low power caps it")
    func visits() {
        var sawProMotion = false
        var sawCapped = false
        var events = 0
        for batch in Self.batches {
            #expect(!batch.events.isEmpty)
            for event in batch.events {
                events += 1
                #expect(event.report.inconsistency == nil)
                #expect(event.report.frames > 0)
                #expect(ISO8601.parse(event.startedAt) != nil)
                if batch.device.maxRefreshRate == 120 && !event.context.lowPowerMode && event.report.refreshRates.count(of: 120) > 0 { sawProMotion = true }
                if batch.device.maxRefreshRate == 120 && event.context.lowPowerMode {
                    #expect(event.report.refreshRates.entries.allSatisfy { $0.key <= 60 })
                    sawCapped = true
                }
            }
        }
        #expect(sawProMotion && sawCapped)
        #expect(events > 1000)
        #expect(Set(Self.batches.map(\.batchId)).count == Self.batches.count)
    }

    @Test("A batch survives a JSON round trip")
    func wireRoundTrip() throws {
        let batch = try #require(Self.batches.first)
        let data = try JSONEncoder().encode(batch)
        #expect(try JSONDecoder().decode(EventBatch.self, from: data) == batch)
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(json.keys) == ["batchId", "app", "device", "events"])
    }

    @Test("ISO 8601 round trip and rejection", arguments: [0.0, 1_795_000_000.25, 951_782_400, -86_400])
    func iso8601(seconds: Double) throws {
        let text = ISO8601.format(unixSeconds: seconds)
        let back = try #require(ISO8601.parse(text))
        #expect(abs(back - seconds) < 0.001, "\(text)")
    }

    @Test("ISO 8601 parsing")
    func iso8601Parsing() {
        #expect(ISO8601.format(unixSeconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601.parse("2000-02-29T12:00:00Z") == 951_825_600)
        #expect(ISO8601.parse("2000-02-29T14:00:00+02:00") == 951_825_600)
        #expect(ISO8601.parse("2026-11-22") == 1_795_305_600)
        for bad in ["2026-02-30", "2026-13-01", "yesterday", "2026-11-22T25:00:00Z", "2026-11-22T10:00:00", "2026-11-22T10:00:00.Z"] {
            #expect(ISO8601.parse(bad) == nil, "\(bad)")
        }
    }
}
