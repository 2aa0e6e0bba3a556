import Foundation
import FramescopeProcessTesting
import Testing

/// `framescope compare --baseline FILE… --candidate FILE…` on simulated runs written by
/// `framescope simulate`: a real step regresses with exit 1 in every format; A against A
/// does not fail; wrong options are usage errors.
@Suite("framescope compare over runs")
struct CompareRunsTests {
    /// `count` simulated runs of `workload` (8 s each) in `directory`, named `prefix-N.csv`.
    static func runs(_ count: Int, workload: String, prefix: String, seed: Int, in directory: TemporaryDirectory) throws -> [String] {
        try (0..<count).map { index in
            let path = directory.url.appendingPathComponent("\(prefix)-\(index).csv").path
            let result = try CLI.run(["simulate", "--workload", workload, "--duration", "8", "--seed", "\(seed + index)", "--output", path])
            #expect(result.exitCode == 0, "\(result.stderr)")
            return path
        }
    }

    @Test("Moderate against heavy, 6 runs a side: both gating figures regressed, exit 1, in the table, JSON, JUnit and GitHub forms")
    func regression() throws {
        let directory = try TemporaryDirectory()
        let base = try Self.runs(6, workload: "moderate", prefix: "base", seed: 1, in: directory)
        let cand = try Self.runs(6, workload: "heavy", prefix: "cand", seed: 101, in: directory)
        let table = try CLI.run(["compare", "--baseline"] + base + ["--candidate"] + cand)
        #expect(table.exitCode == 1, "\(table.stderr)")
        #expect(table.stdout.contains("verdict: REGRESSED"))
        #expect(table.stdout.contains("motionHitchRatio *") && table.stdout.contains("dropEvents *"))

        let json = try CLI.run(["compare", "--baseline"] + base + ["--candidate"] + cand + ["--format", "json"])
        #expect(json.exitCode == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["regressed"] as? Bool == true && object["failed"] as? Bool == true)
        let figures = try #require(object["figures"] as? [[String: Any]])
        let hitch = try #require(figures.first { $0["figure"] as? String == "motionHitchRatio" })
        #expect((hitch["baseline"] as? [Double])?.count == 6 && (hitch["candidate"] as? [Double])?.count == 6)
        #expect(hitch["verdict"] as? String == "regressed" && hitch["gating"] as? Bool == true)
        #expect((hitch["lower"] as? Double ?? 0) > 0 && (hitch["intervalConfidence"] as? Double) == 0.975)
        let baselineValues = hitch["baseline"] as? [Double] ?? []
        #expect(hitch["baselineMin"] as? Double == baselineValues.min() && hitch["baselineMax"] as? Double == baselineValues.max())
        #expect((hitch["noiseFloor"] as? Double ?? -1) >= 0)
        #expect(table.stdout.contains("base spread") && table.stdout.contains("noise floor"))
        #expect(figures.first { $0["figure"] as? String == "hangs" }?["gating"] as? Bool == false)

        let junit = try CLI.run(["compare", "--baseline"] + base + ["--candidate"] + cand + ["--format", "junit"])
        #expect(junit.exitCode == 1)
        #expect(junit.stdout.contains(#"<testsuites name="framescope compare" tests="2" failures="2" errors="0">"#))
        #expect(junit.stdout.contains(#"type="regressed""#))
        let github = try CLI.run(["compare", "--baseline"] + base + ["--candidate"] + cand + ["--format", "github"])
        #expect(github.exitCode == 1)
        #expect(github.stdout.hasPrefix("::error title=Framescope compare%3A motionHitchRatio::motionHitchRatio: regressed"))

        // 3 runs a side at 90 % over one figure: P(U = 0) = 1/20 is exactly α/2, so an interval
        // exists (α computed in binary floating point gave none), counted exactly.
        let three = try CLI.run(["compare", "--baseline"] + base.prefix(3) + ["--candidate"] + cand.prefix(3)
                                + ["--figures", "motionHitchRatio", "--confidence", "0.9", "--format", "json"])
        let threeObject = try #require(try JSONSerialization.jsonObject(with: Data(three.stdout.utf8)) as? [String: Any])
        let threeHitch = try #require((threeObject["figures"] as? [[String: Any]])?.first { $0["figure"] as? String == "motionHitchRatio" })
        #expect(threeHitch["lower"] is Double && threeHitch["intervalExact"] as? Bool == true, "\(three.stdout)")
        #expect(threeHitch["verdict"] as? String == "regressed" && three.exitCode == 1)

        // Folders stand for their runs (by name): the same figures as the files named one by one.
        let baseFolder = directory.url.appendingPathComponent("base-runs"), candFolder = directory.url.appendingPathComponent("cand-runs")
        for (folder, paths) in [(baseFolder, base), (candFolder, cand)] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for path in paths { try FileManager.default.copyItem(atPath: path, toPath: folder.appendingPathComponent((path as NSString).lastPathComponent).path) }
        }
        let folders = try CLI.run(["compare", "--baseline", baseFolder.path, "--candidate", candFolder.path, "--format", "json"])
        let folderObject = try #require(try JSONSerialization.jsonObject(with: Data(folders.stdout.utf8)) as? [String: Any])
        let folderHitch = try #require((folderObject["figures"] as? [[String: Any]])?.first { $0["figure"] as? String == "motionHitchRatio" })
        #expect(folders.exitCode == 1 && folderHitch["baseline"] as? [Double] == hitch["baseline"] as? [Double]
                && folderHitch["candidate"] as? [Double] == hitch["candidate"] as? [Double], "\(folders.stderr)")
        let emptyFolder = directory.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: emptyFolder, withIntermediateDirectories: true)
        let empty = try CLI.run(["compare", "--baseline", emptyFolder.path, "--candidate", candFolder.path])
        #expect(empty.exitCode == 65 && empty.stderr.contains("a folder with no runs in it"), "\(empty.stderr)")

        // Only hangs gating: none in either side, so nothing fails.
        let hangsOnly = try CLI.run(["compare", "--baseline"] + base + ["--candidate"] + cand + ["--figures", "hangs"])
        #expect(hangsOnly.exitCode == 0, "\(hangsOnly.stdout)")
    }

    @Test("A against A: not regressed, exit 0; --fail-on-inconclusive fails on an interval that reaches past the minimum")
    func sameWorkload() throws {
        let directory = try TemporaryDirectory()
        let runs = try Self.runs(10, workload: "moderate", prefix: "run", seed: 1, in: directory)
        let arguments = ["compare", "--baseline"] + Array(runs.prefix(5)) + ["--candidate"] + Array(runs.suffix(5))
        let result = try CLI.run(arguments)
        #expect(result.exitCode == 0, "\(result.stdout)")
        #expect(!result.stdout.contains("REGRESSED"))
        let strict = try CLI.run(arguments + ["--fail-on-inconclusive", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(strict.stdout.utf8)) as? [String: Any])
        let verdicts = (object["figures"] as? [[String: Any]] ?? []).filter { $0["gating"] as? Bool == true }.compactMap { $0["verdict"] as? String }
        #expect(strict.exitCode == (verdicts.contains("inconclusive") ? 1 : 0))
        // A wide minimum change leaves nothing that matters unexplained.
        let lenient = try CLI.run(arguments + ["--min-change", "motionHitchRatio=500%", "--min-change", "dropEvents=100%,50",
                                               "--fail-on-inconclusive"])
        #expect(lenient.exitCode == 0, "\(lenient.stdout)")
    }

    @Test("Usage errors: one side only, both forms at once, an unknown figure, a bad minimum, a bad confidence; junit needs runs")
    func usage() throws {
        let directory = try TemporaryDirectory()
        let runs = try Self.runs(2, workload: "light", prefix: "r", seed: 1, in: directory)
        for arguments in [["--baseline", runs[0]], [runs[0], runs[1], "--baseline", runs[0], "--candidate", runs[1]],
                          ["--baseline", runs[0], "--candidate", runs[1], "--figures", "fps"],
                          ["--baseline", runs[0], "--candidate", runs[1], "--min-change", "hangs=lots"],
                          ["--baseline", runs[0], "--candidate", runs[1], "--confidence", "2"],
                          [runs[0], runs[1], "--format", "junit"], [runs[0]]] {
            let result = try CLI.run(["compare"] + arguments)
            #expect(result.exitCode == 64, "\(arguments): \(result.stderr)")
        }
        // Two runs a side give no interval: inconclusive, and still exit 0.
        let few = try CLI.run(["compare", "--baseline", runs[0], runs[1], "--candidate", runs[1], runs[0]])
        #expect(few.exitCode == 0 && few.stdout.contains("inconclusive"))
    }
}
