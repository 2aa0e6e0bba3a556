import Foundation
import Testing

@Suite("framescope simulate and dataset", .serialized)
struct SimulateCLITests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("A simulated trace says it is simulated, and analyze finds its ground truth", arguments: ["trace.csv", "trace.json"])
    func simulateAndAnalyze(file: String) throws {
        let trace = directory.url.appendingPathComponent(file).path
        let truthPath = directory.url.appendingPathComponent("truth.json").path
        let result = try CLI.run(["simulate", "--workload", "heavy", "--display", "120", "--duration", "8", "--stall-every", "2", "--seed", "4", "--output", trace, "--ground-truth", truthPath])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(text.contains("simulated by framescope simulate"))
        #expect(text.contains("not a measurement of a device"))
        let truth = try json(try String(contentsOfFile: truthPath, encoding: .utf8))
        let report = try json(try CLI.run(["analyze", trace, "--format", "json"]).stdout)
        #expect(report["droppedFrames"] as? Int == truth["droppedFrames"] as? Int)
        #expect(report["dropEvents"] as? Int == truth["dropEvents"] as? Int)
        #expect(report["hangs"] as? Int == (truth["hangs"] as? [Any])?.count)
        #expect((report["segments"] as? [Any])?.count == (truth["segments"] as? [Any])?.count)
        #expect((report["refreshRates"] as? [String: Int])?["120"] != nil)
    }

    @Test("Without --output, CSV goes to stdout; the same seed gives the same trace")
    func stdoutAndDeterminism() throws {
        let first = try CLI.run(["simulate", "--duration", "3", "--seed", "9"])
        let second = try CLI.run(["simulate", "--duration", "3", "--seed", "9"])
        #expect(first.exitCode == 0)
        #expect(first.stdout == second.stdout)
        #expect(first.stdout.split(separator: "\n")[1] == "timestamp,targetTimestamp,segment")
    }

    @Test("--scenario writes the thesis variant; analyze gives its figures")
    func scenario() throws {
        let trace = directory.url.appendingPathComponent("best.csv").path
        #expect(try CLI.run(["simulate", "--scenario", "best-case", "--output", trace]).exitCode == 0)
        let report = try json(try CLI.run(["analyze", trace, "--format", "json"]).stdout)
        let fps = try #require(report["averageFPS"] as? Double)
        #expect(abs(fps - 60) < 3)
    }

    @Test("--list names every scenario with the thesis' figures beside the simulated ones")
    func list() throws {
        let result = try CLI.run(["simulate", "--list"])
        #expect(result.exitCode == 0)
        for name in ["best-case", "worst-case", "reuse-cells", "static-layouts", "manual-heights", "cached-heights", "resized-images", "rasterized-layers", "no-offscreen-rendering", "asyncdisplaykit"] {
            #expect(result.stdout.contains(name))
        }
        #expect(result.stdout.contains("not a measurement of a device"))
    }

    @Test("Bad options are usage errors (64)")
    func badOptions() throws {
        #expect(try CLI.run(["simulate", "--scenario", "fastest"]).exitCode == 64)
        #expect(try CLI.run(["simulate", "--duration", "-1"]).exitCode == 64)
        #expect(try CLI.run(["simulate", "--output", "trace.txt"]).exitCode == 64)
        #expect(try CLI.run(["dataset", "messages", "--media-probability", "2"]).exitCode == 64)
    }

    @Test("dataset messages prints the thesis' schema")
    func dataset() throws {
        let result = try CLI.run(["dataset", "messages", "--count", "20", "--seed", "3"])
        #expect(result.exitCode == 0)
        let list = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 20)
        #expect(list.map { $0["messageId"] as? Int } == (0..<20).map { $0 })
    }
}
