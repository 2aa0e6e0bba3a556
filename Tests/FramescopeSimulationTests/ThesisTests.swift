import Foundation
import FramescopeCore
import FramescopeSimulation
import Testing

@Suite("The thesis' data set and scenarios")
struct ThesisTests {
    @Test("The data set's proportions over 100 000 messages")
    func datasetProportions() {
        let messages = MessageDataset.generate(count: 100_000, seed: 42)
        #expect(messages.map(\.messageId) == Array(0..<100_000))
        let media = messages.filter { $0.mediaItems != nil }
        #expect(abs(Double(media.count) / 100_000 - 0.25) <= 0.01)
        let outgoing = messages.filter { $0.direction == .outgoing }.count
        #expect(abs(Double(outgoing) / 100_000 - 0.5) <= 0.01)
        for itemCount in 1...3 {
            let share = Double(media.filter { $0.mediaItems?.count == itemCount }.count) / Double(media.count)
            #expect(abs(share - 1.0 / 3) <= 0.01, "\(itemCount) items: \(share)")
        }
        let items = media.flatMap { $0.mediaItems ?? [] }
        #expect(items.allSatisfy { MessageDataset.imagePool.contains($0) })
        let animated = Double(items.filter(Message.isAnimated).count) / Double(items.count)
        #expect(abs(animated - 10.0 / 110) <= 0.01)
        #expect(Set(items).count == 110)
        let texts = messages.compactMap(\.message)
        #expect(Set(texts) == Set(MessageDataset.texts))
        #expect(messages.allSatisfy { ($0.message == nil) != ($0.mediaItems == nil) })
        #expect(MessageDataset.texts.map { $0.split(separator: "\n").count } == [1, 3, 6])
    }

    @Test("The data set's JSON has the thesis' schema")
    func datasetSchema() throws {
        let messages = MessageDataset.generate(count: 200, seed: 1)
        let json = try #require(JSONSerialization.jsonObject(with: try JSONEncoder().encode(messages)) as? [[String: Any]])
        for object in json {
            let keys = Set(object.keys)
            #expect(keys == ["messageId", "direction", "message"] || keys == ["messageId", "direction", "mediaItems"])
            #expect(["in", "out"].contains(object["direction"] as? String ?? ""))
        }
        #expect(MessageDataset.generate(count: 50, seed: 9) == MessageDataset.generate(count: 50, seed: 9))
        #expect(MessageDataset.generate(count: 50, seed: 9) != MessageDataset.generate(count: 50, seed: 10))
    }

    @Test("Each scenario lands within ±5 % FPS and ±5 points of stability of the thesis (seed 1)",
          arguments: ThesisScenario.all.map(\.name))
    func scenarioWithinTolerance(name: String) throws {
        let scenario = try #require(ThesisScenario.named(name))
        let report = scenario.simulate(seed: 1).analyze().whole
        let fps = try #require(report.averageFPS)
        let stability = try #require(report.stability)
        #expect(abs(fps - scenario.thesisAverageFPS) <= 0.05 * scenario.thesisAverageFPS, "\(name): \(fps) FPS vs \(scenario.thesisAverageFPS)")
        #expect(abs(stability - scenario.thesisStability) <= 0.05, "\(name): stability \(stability) vs \(scenario.thesisStability)")
    }

    @Test("The optimisations move the figures the way the thesis found, and scenarios are deterministic")
    func ordering() {
        func fps(_ name: String) -> Double { ThesisScenario.named(name)!.simulate(seed: 1).analyze().whole.averageFPS ?? 0 }
        #expect(fps("worst-case") < fps("reuse-cells"))
        #expect(fps("reuse-cells") < fps("static-layouts"))
        #expect(fps("rasterized-layers") < fps("resized-images"))  // 6.1 is a regression
        #expect(fps("resized-images") < fps("no-offscreen-rendering"))
        #expect(fps("no-offscreen-rendering") < fps("best-case"))
        let scenario = ThesisScenario.named("cached-heights")!
        #expect(scenario.simulate(seed: 3).ticks == scenario.simulate(seed: 3).ticks)
    }
}
