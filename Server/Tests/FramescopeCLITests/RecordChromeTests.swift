import Foundation
import Testing

/// `framescope record chrome` on this machine's Chromium: the thesis' message list as a
/// page of plain cells and of heavy cells (`dataset messages --html`), both scrolled by the
/// same script. Needs Chromium: without it the test fails (CI installs it). It measures a
/// real renderer's smoothness, so it runs in the isolated timing process (scripts/test, after
/// the main run, with `FRAMESCOPE_ISOLATED_TIMING=1`), not beside hundreds of other tests.
@Suite("framescope record chrome: a real renderer", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_ISOLATED_TIMING"] != nil,
                "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --package-path Server --filter RecordChromeTests"))
struct RecordChromeTests {
    /// Records `cells` scrolled by `script` and returns the report's figures.
    func record(_ cells: String, script: String, in directory: TemporaryDirectory) throws -> (report: [String: Any], trace: String, stderr: String) {
        let page = directory.url.appendingPathComponent("\(cells).html").path
        let made = try CLI.run(["dataset", "messages", "--html", "--cells", cells, "--output", page])
        #expect(made.exitCode == 0, "\(made.stderr)")
        let trace = directory.url.appendingPathComponent("\(cells)-\(script).json").path
        let recorded = try CLI.run(["record", "chrome", page, "--script", script, "--output", trace, "--format", "json"])
        #expect(recorded.exitCode == 0, "\(recorded.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(recorded.stdout.utf8)) as? [String: Any] ?? [:]
        return (report, trace, recorded.stderr)
    }

    @Test("Heavy cells are measurably less smooth than plain ones under the same scroll, and a budget fails on them", arguments: ["steady", "accelerating"])
    func heavyVersusPlain(script: String) throws {
        let directory = try TemporaryDirectory()
        let plain = try record("plain", script: script, in: directory)
        let heavy = try record("heavy", script: script, in: directory)
        let plainDropped = plain.report["droppedFrames"] as? Int ?? -1
        let heavyDropped = heavy.report["droppedFrames"] as? Int ?? -1
        let plainRatio = plain.report["hitchRatio"] as? Double ?? -1
        let heavyRatio = heavy.report["hitchRatio"] as? Double ?? -1
        print("record chrome \(script): plain \(plain.report["frames"] ?? "?") frames, \(plainDropped) dropped, hitch ratio \(plainRatio) ms/s; heavy \(heavy.report["frames"] ?? "?") frames, \(heavyDropped) dropped, hitch ratio \(heavyRatio) ms/s")
        #expect((plain.report["frames"] as? Int ?? 0) > 150, "the plain page's scroll gave frames: \(plain.stderr)")
        #expect(plain.stderr.contains("scrolled \(script == "steady" ? 6000 : 11000) of"), "\(plain.stderr)")
        #expect(heavyDropped > plainDropped, "heavy \(heavyDropped) dropped frames, plain \(plainDropped)")
        #expect(heavyRatio > plainRatio, "heavy \(heavyRatio) ms/s, plain \(plainRatio) ms/s")
        // One frame count per stream: Chrome's presented vsyncs (its figure, in frames) are
        // the frames stderr says were shown; forked reporters are counted apart, as reporters.
        for recorded in [plain, heavy] {
            let figures = recorded.report["toolFigures"] as? [[String: Any]] ?? []
            func figure(_ label: String) -> Int? { (figures.first { $0["label"] as? String == label }?["value"] as? Double).map { Int($0) } }
            let presented = try #require(figure("Presented frames (vsyncs)"), "\(figures)")
            #expect(recorded.stderr.contains("frames \(presented) shown"), "\(recorded.stderr)")
            #expect((figure("Presented (PipelineReporter)") ?? -1) >= presented)
            #expect(figure("of which forked (main thread)") != nil)
        }
        // The recording is a Chrome trace like any other: `check` reads it, and a budget
        // between the two pages' hitch ratios passes the plain page and fails the heavy one.
        // (How far apart they are depends on the machine and its load: the heavy page's
        // accelerating scroll has measured from 4 to over 50 ms/s here.)
        let limit = plainRatio + (heavyRatio - plainRatio) / 2
        let budget = try directory.file("budget.json", #"{"recording": {"hitchRatio": {"max": \#(limit)}}}"#)
        let check = try CLI.run(["check", "--budget", budget, heavy.trace])
        #expect(check.exitCode == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("hitch ratio"), "\(check.stdout)")
        let passes = try CLI.run(["check", "--budget", budget, plain.trace])
        #expect(passes.exitCode == 0, "\(passes.stdout)\(passes.stderr)")
    }

    /// A page that moves a box from a 30 fps `setInterval` timer once `framescopeStart()` is
    /// called: content at half the display's rate, whose renderer stops asking for frames
    /// for a vsync between them (docs/traces.md, "Idle is not a drop, and not always a pause").
    static let halfRatePage = """
        <!doctype html><html><head><meta charset="utf-8"><style>body{margin:0}#box{position:absolute;top:100px;width:200px;height:200px;background:#939}</style></head>
        <body><div id="box"></div><script>
        let x = 0;
        window.framescopeStart = () => setInterval(() => { x = (x + 8) % 1000; document.getElementById('box').style.transform = 'translateX(' + x + 'px)'; }, 33);
        </script></body></html>
        """

    @Test("--watch records a page running by itself: a 30 fps timer page is measured as one animation at about 30 FPS, not as a few frames between pauses")
    func watchHalfRate() throws {
        let directory = try TemporaryDirectory()
        let page = try directory.file("half-rate.html", Self.halfRatePage)
        let trace = directory.url.appendingPathComponent("half-rate.json").path
        let recorded = try CLI.run(["record", "chrome", page, "--watch", "3", "--output", trace, "--format", "json"])
        #expect(recorded.exitCode == 0, "\(recorded.stderr)")
        #expect(recorded.stderr.contains("running by itself for 3 s"), "\(recorded.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(recorded.stdout.utf8)) as? [String: Any] ?? [:]
        let coverage = report["coverage"] as? [String: Double] ?? [:]
        let measured = coverage["measuredSeconds"] ?? 0
        let span = coverage["traceSeconds"] ?? 1
        print("record chrome --watch: \(report["frames"] ?? "?") frames, \(report["droppedFrames"] ?? "?") dropped, \(report["averageFPS"] ?? "?") FPS, measured \(measured) s of \(span) s")
        // Most of the 3 s is one animation, not idle spells between isolated frames.
        #expect(measured > 0.5 * span && measured > 1.5, "measured \(measured) s of \(span) s")
        let fps = report["averageFPS"] as? Double ?? 0
        #expect(fps > 20 && fps < 50, "the content's rate (30 fps, frames 1 and 3 refreshes apart), not the display's 60: \(fps)")
        let refused = try CLI.run(["record", "chrome", page, "--watch", "0.1", "--output", trace])
        #expect(refused.exitCode == 64 && refused.stderr.contains("--watch must be 0.5 to 60 seconds"), "\(refused.stderr)")
    }

    @Test("A selector that matches nothing is exit 74 naming it; a missing browser is exit 74 saying how to give one")
    func refusals() throws {
        let directory = try TemporaryDirectory()
        let page = try directory.file("empty.html", "<!doctype html><title>x</title><p>nothing to scroll</p>")
        let missing = try CLI.run(["record", "chrome", page, "--selector", "#nope", "--output", directory.url.appendingPathComponent("t.json").path])
        #expect(missing.exitCode == 74)
        #expect(missing.stderr.contains("no element matches the selector #nope"), "\(missing.stderr)")
        let noBrowser = try CLI.run(["record", "chrome", page, "--chromium", "/nonexistent/chromium", "--output", directory.url.appendingPathComponent("t.json").path])
        #expect(noBrowser.exitCode == 74)
        #expect(noBrowser.stderr.contains("could not start /nonexistent/chromium"), "\(noBrowser.stderr)")
    }

    @Test("Interleaved runs on a real renderer: heavy cells against plain, 5 runs a side, regress with exit 1; plain against plain does not")
    func interleavedRuns() throws {
        let directory = try TemporaryDirectory()
        for cells in ["plain", "heavy"] {
            let page = directory.url.appendingPathComponent("\(cells).html").path
            #expect(try CLI.run(["dataset", "messages", "--html", "--cells", cells, "--output", page]).exitCode == 0)
        }
        let plain = directory.url.appendingPathComponent("plain.html").path
        let heavy = directory.url.appendingPathComponent("heavy.html").path
        let runs = directory.url.appendingPathComponent("runs").path
        let recorded = try CLI.run(["record", "chrome", plain, heavy, "--runs", "5", "--script", "steady", "--output", runs])
        #expect(recorded.exitCode == 0, "\(recorded.stderr)")
        let command = recorded.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(command.hasPrefix("framescope compare --baseline ") && command.contains(" --candidate "), "\(command)")
        let files = try FileManager.default.contentsOfDirectory(atPath: runs).sorted()
        #expect(files == (1...5).map { "heavy-\($0).json" } + (1...5).map { "plain-\($0).json" }, "\(files)")
        // The interleaving: plain 1, heavy 1, plain 2, … as stderr reports them.
        let order = recorded.stderr.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("framescope: ") ? line.split(separator: " ")[1].description : nil
        }
        #expect(order == Array(repeating: ["plain", "heavy"], count: 5).flatMap { $0 }, "\(recorded.stderr)")

        let arguments = Array(command.split(separator: " ").dropFirst().map(String.init))
        let regressed = try CLI.run(arguments)
        print(regressed.stdout)
        #expect(regressed.exitCode == 1, "\(regressed.stdout)")
        #expect(regressed.stdout.contains("verdict: REGRESSED"))
        let json = try CLI.run(arguments + ["--format", "json"])
        let figures = (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["figures"] as? [[String: Any]] ?? []
        // A Chrome trace has no segments: the whole run's hitch ratio gates in place of motion's.
        #expect(json.stderr.contains("hitchRatio gates in place of motionHitchRatio"))
        let hitch = figures.first { $0["figure"] as? String == "hitchRatio" }
        #expect(hitch?["verdict"] as? String == "regressed" && hitch?["gating"] as? Bool == true, "\(json.stdout)")

        // Plain against plain (the same page twice): no regression, exit 0.
        let same = directory.url.appendingPathComponent("same").path
        let again = try CLI.run(["record", "chrome", plain, plain, "--runs", "5", "--script", "steady", "--output", same])
        #expect(again.exitCode == 0, "\(again.stderr)")
        let sameArguments = Array(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").dropFirst().map(String.init))
        #expect(sameArguments.contains { $0.hasSuffix("baseline-plain-1.json") }, "\(again.stdout)")
        let notRegressed = try CLI.run(sameArguments)
        print(notRegressed.stdout)
        #expect(notRegressed.exitCode == 0, "\(notRegressed.stdout)")
    }
}
