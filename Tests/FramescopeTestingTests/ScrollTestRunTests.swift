import Foundation
import FramescopeCore
import FramescopeScroll
import FramescopeScrollRunner
import FramescopeSimulation
import FramescopeTesting
import Testing

@Suite("Scroll test runs: display ticks in, offsets and a per-pass report out")
struct ScrollTestRunTests {
    let geometry = ScrollGeometry(contentHeight: 2_000, viewportHeight: 504)

    /// Plays `run` against a 60 Hz display whose frames at the given indices arrive
    /// `late` refreshes late; answers the offsets set.
    func play(_ run: inout ScrollTestRun, lateFrames: Set<Int> = [], late: Int = 2) -> [Double] {
        var offsets: [Double] = []
        var time = 100.0
        var index = 0
        while index < 100_000 {
            let interval = 1.0 / 60
            guard let offset = run.step(timestamp: time, targetTimestamp: time + interval, refreshInterval: interval) else { break }
            offsets.append(offset)
            time += interval * Double(lateFrames.contains(index) ? 1 + late : 1)
            index += 1
        }
        return offsets
    }

    @Test("A smooth steady run: one segment per pass, no drops, the budget met")
    func smoothSteady() {
        var run = ScrollTestRun(script: .steady(SteadyScroll(pointsPerFrame: 8, passes: 2)), geometry: geometry)
        let offsets = play(&run)
        #expect(run.isFinished)
        #expect(offsets.first == 0 && offsets.max() == 1496)
        let report = run.report()
        #expect(report.segments.map(\.label) == ["pass 1", "pass 2"])
        // 1,496 / 8 = 187 moves: a pass's intervals are those moves plus the end frame's,
        // less, in the first pass, the recording's first interval (reported as firstFPS only).
        #expect(report.segments.map(\.report.frames) == [187, 188])
        #expect(report.whole.droppedFrames == 0)
        #expect(smoothnessFailureMessage(report, within: Budget(eachSegment: [.max(.droppedFrames, 0)])) == nil)
    }

    @Test("Late frames land in the pass they happened in, and the budget names it")
    func lateFramesPerPass() {
        var run = ScrollTestRun(script: .steady(SteadyScroll(pointsPerFrame: 8, passes: 2)), geometry: geometry)
        // Frame 50 is in pass 1; frame 250 (pass 2 starts at frame 189) in pass 2, twice.
        _ = play(&run, lateFrames: [50, 250, 260])
        let report = run.report()
        #expect(report.segments.map(\.report.droppedFrames) == [2, 4])
        #expect(report.segments.map(\.report.dropEvents) == [1, 2])
        let message = smoothnessFailureMessage(report, within: Budget(eachSegment: [.max(.dropEvents, 1)]))
        #expect(message?.contains("pass 2") == true)
        #expect(message?.contains("pass 1") == false)
    }

    @Test("The thesis' accelerating script: five passes, the jump outside any segment, ~18 s")
    func accelerating() {
        var run = ScrollTestRun(script: .accelerating(.thesis), geometry: geometry)
        let offsets = play(&run)
        let report = run.report()
        #expect(report.segments.map(\.label) == ["pass 1", "pass 2", "pass 3", "pass 4", "pass 5"])
        #expect(report.whole.duration > 18 && report.whole.duration < 18.8)
        #expect(offsets.contains(1496))
        // Motion is the five passes: everything but the 0.4 s before each pass's first fire.
        #expect(abs((report.motion?.duration ?? 0) - (report.whole.duration - 5 * 0.4)) < 0.2)
    }

    @Test("The simulator and a device run follow one script: the simulated thesis run moves through the same targets")
    func simulatorFollowsTheScript() {
        let workload = ThesisScenario.all[0].workload(seed: 1)
        #expect(ThesisWorkload.script == AcceleratingScroll.thesis)
        let geometry = workload.geometry
        #expect(geometry.viewportHeight == 504 && geometry.maximumOffset > 10_000)
        var run = ScrollTestRun(script: .accelerating(ThesisWorkload.script), geometry: geometry)
        var rests: [Double] = []
        var previous = 0.0
        var time = 0.0
        var moving = false
        while let offset = run.step(timestamp: time, targetTimestamp: time + 1.0 / 60, refreshInterval: 1.0 / 60) {
            if offset == previous, moving { rests.append(offset) }
            moving = offset != previous
            previous = offset
            time += 1.0 / 60
        }
        let targets = ThesisWorkload.script.targets(in: geometry)
        #expect(Array(rests.prefix(5)) == Array(targets[0].prefix(5)))
        let (_, duration) = ThesisScenario.all[0].run(seed: 1)
        #expect(duration != nil)
    }

    @Test("XCUITest launch arguments round-trip; a broken request names the flag")
    func launchArguments() throws {
        let request = ScrollTestLaunch(target: "feed-table", script: .fling(FlingScroll(velocity: 3_000)), reportPath: "/tmp/feed.json", delay: 0.5)
        let arguments = ["/path/Shop", "-AppleLanguages", "(en)"] + request.arguments
        #expect(try ScrollTestLaunch(arguments: arguments) == request)
        #expect(try ScrollTestLaunch(arguments: ["/path/Shop"]) == nil)
        let broken: [([String], ScrollTestLaunchError)] = [
            (["-FramescopeScrollTarget"], .missingValue("-FramescopeScrollTarget")),
            (["-FramescopeScrollTarget", "t", "-FramescopeScrollReport", "/tmp/r.json"], .missingValue("-FramescopeScrollScript")),
            (["-FramescopeScrollTarget", "t", "-FramescopeScrollScript", #"{"script": "steady"}"#], .missingValue("-FramescopeScrollReport")),
            (["-FramescopeScrollTarget", "t", "-FramescopeScrollScript", #"{"script": "steady", "passes": 0}"#, "-FramescopeScrollReport", "/r"],
             .invalidScript("passes must be 1 to 1000")),
            (["-FramescopeScrollTarget", "t", "-FramescopeScrollScript", "{", "-FramescopeScrollReport", "/r"], .invalidScript("not JSON")),
            (["-FramescopeScrollTarget", "t", "-FramescopeScrollScript", #"{"script": "steady"}"#, "-FramescopeScrollReport", "/r",
              "-FramescopeScrollDelay", "-1"], .invalidDelay("-1")),
            (["-FramescopeScrollTarget", "t", "-FramescopeScrollScript", #"{"script": "steady"}"#, "-FramescopeScrollReport", "../x.json"],
             .invalidReportPath("../x.json")),
        ]
        for (arguments, expected) in broken {
            #expect(throws: expected, "\(arguments)") { try ScrollTestLaunch(arguments: arguments) }
        }
    }

    @Test("Report paths: found even in a broken request; relative paths stay inside the app's folder")
    func reportPaths() {
        #expect(ScrollTestLaunch.reportPath(in: ["-FramescopeScrollTarget", "t", "-FramescopeScrollReport", "out.json"]) == "out.json")
        #expect(ScrollTestLaunch.reportPath(in: ["-FramescopeScrollReport"]) == nil)
        #expect(ScrollTestLaunch.reportPath(in: ["-FramescopeScrollReport", ""]) == nil)
        #expect(ScrollTestLaunch.resolvedReportPath("/tmp/feed.json", temporaryDirectory: "/var/app/tmp/") == "/tmp/feed.json")
        #expect(ScrollTestLaunch.resolvedReportPath("runs/feed.json", temporaryDirectory: "/var/app/tmp/") == "/var/app/tmp/runs/feed.json")
        #expect(ScrollTestLaunch.resolvedReportPath("feed.json", temporaryDirectory: "/var/app/tmp") == "/var/app/tmp/feed.json")
        #expect(ScrollTestLaunch.resolvedReportPath("../../Library/x", temporaryDirectory: "/var/app/tmp") == nil)
        #expect(ScrollTestLaunch.resolvedReportPath("a/../../x", temporaryDirectory: "/var/app/tmp") == nil)
    }
}
