import Foundation
import Testing

@Suite("framescope CLI", .serialized)
struct CLITests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("analyze --format json prints the DESIGN §3 object with hand-computed values")
    func analyzeJSON() throws {
        // 1 first interval, then 9 intervals: one of 3 refreshes (2 dropped), the rest on time.
        let path = try directory.file("t.csv", csvTrace([1, 1, 1, 3, 1, 1, 1, 1, 1, 1]))
        let result = try CLI.run(["analyze", path, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let report = try json(result.stdout)
        #expect(report["frames"] as? Int == 9)
        #expect(report["droppedFrames"] as? Int == 2)
        #expect(report["dropEvents"] as? Int == 1)
        #expect(report["maxDroppedFrames"] as? Int == 2)
        let hitch = try #require(report["hitchTime"] as? Double)
        #expect(abs(hitch - 2.0 / 60) < 1e-6)
        let average = try #require(report["averageFPS"] as? Double)
        #expect(abs(average - 9 / (11.0 / 60)) < 1e-3)
        #expect(report["stability"] is NSNull)  // under a second: no complete window
        #expect(report["motion"] is NSNull)
        #expect((report["refreshRates"] as? [String: Int]) == ["60": 9])
    }

    @Test("bench formats reads a generated recording of each format and prints its MB/s beside wc -l")
    func benchFormats() throws {
        let result = try CLI.run(["bench", "formats", "--megabytes", "2", "--runs", "1"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        for format in ["csv", "surfaceflinger-latency", "presentmon", "chrome", "xctrace"] {
            let line = result.stdout.split(separator: "\n").first { $0.hasPrefix(format + " ") }
            #expect(line != nil, "\(format): \(result.stdout)")
            // wc -l's rate, analyze's best and median, then a frame count above zero.
            let fields = line.map { $0.split(separator: " ") } ?? []
            #expect(fields.filter { $0 == "MB/s" }.count == 3, "\(line ?? "")")
            #expect(fields.count > 10 && (Int(fields[fields.count - 3]) ?? 0) > 100, "\(line ?? "")")
        }
    }

    @Test("analyze prints a readable table with segments")
    func analyzeTable() throws {
        let path = try directory.file("s.csv", csvTrace([1, 1, 2, 1, 1, 4, 1, 1], segments: ["", "a", "a", "a", "", "b", "b", ""]))
        let result = try CLI.run(["analyze", path])
        #expect(result.exitCode == 0)
        #expect(result.stdout.contains("hitchRatio"))
        #expect(result.stdout.contains("motion"))
        #expect(result.stdout.contains("dropEvents"))
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("a ") && $0.contains("  1  ") })
        #expect(lines.contains { $0.hasPrefix("b ") })
    }

    @Test("ticks without targets take --refresh-rate")
    func refreshRateOption() throws {
        let path = try directory.file("bare.csv", "timestamp\n0\n0.0166666667\n0.0333333333\n0.0833333333\n")
        let missing = try CLI.run(["analyze", path])
        #expect(missing.exitCode == 65)
        #expect(missing.stderr.contains("bare.csv:2:"))
        let given = try CLI.run(["analyze", path, "--refresh-rate", "60", "--format", "json"])
        #expect(given.exitCode == 0)
        #expect(try json(given.stdout)["droppedFrames"] as? Int == 2)
    }

    @Test("--hang-threshold changes what counts as a hang")
    func hangThreshold() throws {
        let path = try directory.file("h.csv", csvTrace([1, 1, 12, 1, 1]))  // a 200 ms frame
        #expect(try json(try CLI.run(["analyze", path, "--format", "json"]).stdout)["hangs"] as? Int == 0)
        #expect(try json(try CLI.run(["analyze", path, "--format", "json", "--hang-threshold", "0.1"]).stdout)["hangs"] as? Int == 1)
    }

    @Test("Bad input: a message naming file and line on stderr, exit 65, nothing on stdout", arguments: [
        ("malformed.csv", "timestamp,targetTimestamp\n1.0,1.01\n1.02,oops\n", ":3:", "not a number"),
        ("missing-column.csv", "timestamp,targetTimestamp\n1.0,1.01\n1.02\n", ":3:", "column is missing"),
        ("negative.csv", "timestamp,targetTimestamp\n1.0,1.01\n1.02,1.0\n", ":3:", "negative"),
        ("empty.csv", "", "empty.csv:", "empty"),
        ("nohead.csv", "1.0,1.01\n", ":1:", "header"),
        ("broken.json", "{\"ticks\": [\n{\"timestamp\": 1.0, \"targetTimestamp\": 1.01},\n{\"timestamp\": }\n]}", ":3:", "expected a number"),
    ])
    func badInput(name: String, contents: String, location: String, fragment: String) throws {
        let path = try directory.file(name, contents)
        let result = try CLI.run(["analyze", path])
        #expect(result.exitCode == 65, "\(name): \(result.stderr)")
        #expect(result.stderr.contains(name + location) || (location.hasSuffix(":") && result.stderr.contains(location)), "\(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test("A directory and a binary file are bad input (65); a missing file is an I/O failure (74)")
    func filesThatAreNotTraces() throws {
        let directoryResult = try CLI.run(["analyze", directory.url.path])
        #expect(directoryResult.exitCode == 65)
        #expect(directoryResult.stderr.contains("is a directory"))
        let binary = try directory.file("image.png", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48])
        let binaryResult = try CLI.run(["analyze", binary])
        #expect(binaryResult.exitCode == 65)
        #expect(binaryResult.stderr.contains("binary"))
        let missing = try CLI.run(["analyze", directory.url.appendingPathComponent("nope.csv").path])
        #expect(missing.exitCode == 74)
        #expect(missing.stderr.contains("nope.csv: cannot open"))
    }

    @Test("Bad usage exits 64")
    func usage() throws {
        #expect(try CLI.run(["analyze"]).exitCode == 64)
        #expect(try CLI.run(["analyze", "x.csv", "--format", "yaml"]).exitCode == 64)
        #expect(try CLI.run(["analyze", "x.csv", "--refresh-rate", "-60"]).exitCode == 64)
        #expect(try CLI.run(["frobnicate"]).exitCode == 64)
    }

    @Test("check: exit 0 when the budget is met, 1 with each broken limit when not")
    func check() throws {
        let budget = try directory.file("budget.json", #"{"eachSegment": {"dropEvents": {"max": 2}}}"#)
        let labels = Array(repeating: "scroll 1", count: 10) + Array(repeating: "scroll 2", count: 10) + Array(repeating: "scroll 3", count: 10)
        var concentrated = Array(repeating: 1, count: 30)
        concentrated[2] = 2; concentrated[5] = 2; concentrated[8] = 2
        var spread = Array(repeating: 1, count: 30)
        spread[2] = 2; spread[15] = 2; spread[25] = 2
        let bad = try directory.file("bad.csv", csvTrace(concentrated, segments: labels))
        let good = try directory.file("good.csv", csvTrace(spread, segments: labels))

        let pass = try CLI.run(["check", "--budget", budget, good])
        #expect(pass.exitCode == 0)
        #expect(pass.stdout.contains("meets the budget"))
        let fail = try CLI.run(["check", "--budget", budget, good, bad])
        #expect(fail.exitCode == 1)
        #expect(fail.stdout.contains("scroll 1: 3 drop events, budget allows 2"))
        let failJSON = try CLI.run(["check", "--budget", budget, bad, "--format", "json"])
        #expect(failJSON.exitCode == 1)
        let output = try json(failJSON.stdout)
        #expect(output["passed"] as? Bool == false)

        // A report written by analyze --format json is checked the same way.
        let report = try directory.file("bad-report.json", try CLI.run(["analyze", bad, "--format", "json"]).stdout)
        #expect(try CLI.run(["check", "--budget", budget, report]).exitCode == 1)
    }

    @Test("check: an unusable budget is bad input naming the field")
    func badBudget() throws {
        let trace = try directory.file("t.csv", csvTrace([1, 1, 1]))
        let typo = try directory.file("typo.json", #"{"recording": {"hitchRate": {"max": 5}}}"#)
        let result = try CLI.run(["check", "--budget", typo, trace])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("typo.json"))
        #expect(result.stderr.contains("hitchRate"))
        let notJSON = try directory.file("nope.json", "max 5")
        #expect(try CLI.run(["check", "--budget", notJSON, trace]).exitCode == 65)
    }

    @Test("compare: both reports side by side with change, relativeChange and the API's verdict words")
    func compare() throws {
        let baseline = try directory.file("base.csv", csvTrace(Array(repeating: 2, count: 120)))  // 30 FPS
        let candidate = try directory.file("cand.csv", csvTrace(Array(repeating: 1, count: 120)))  // 60 FPS
        let table = try CLI.run(["compare", baseline, candidate])
        #expect(table.exitCode == 0)
        #expect(table.stdout.contains("averageFPS"))
        #expect(table.stdout.contains("+100.0 %"))
        let result = try CLI.run(["compare", baseline, candidate, "--format", "json"])
        let changes = try #require(try json(result.stdout)["changes"] as? [[String: Any]])
        let fps = try #require(changes.first { $0["metric"] as? String == "averageFPS" })
        #expect(abs((fps["relativeChange"] as? Double ?? 0) - 1) < 1e-6)
        #expect(fps["verdict"] as? String == "improved")
        #expect(table.stdout.contains("relativeChange") && table.stdout.contains("improved"))
        #expect(!table.stdout.contains("better") && !table.stdout.contains("worse"))
        let frames = try #require(changes.first { $0["metric"] as? String == "frames" })
        #expect(frames["verdict"] as? String == "noSignificantChange")
        let dropped = try #require(changes.first { $0["metric"] as? String == "droppedFrames" })
        #expect(dropped["baseline"] as? Double == 119)
        #expect(dropped["verdict"] as? String == "improved")
    }
}
