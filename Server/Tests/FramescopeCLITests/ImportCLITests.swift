import Foundation
import Testing

/// `framescope analyze` on other tools' recordings (docs/traces.md): the corpus of real
/// files, detection without `--input-format`, and `--input-format` overriding detection.
@Suite("framescope reads other tools' recordings")
struct ImportCLITests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }

    /// The corpus files whose formats Framescope reads, with the frame count (measured
    /// intervals plus first intervals) each must give.
    static let readable: [(path: String, frames: Int)] = [
        ("android-gfxinfo/aosp-studio-profiler_surfaceflinger-latency_127-frames.txt", 126),
        ("android-gfxinfo/aosp-studio-profiler_surfaceflinger-latency_with-zero-rows.txt", 35),
        ("android-gfxinfo/flashlight_gfxinfo-summary_android12plus.txt", 21),
        ("android-gfxinfo/flashlight_reactnativefeed_gfxinfo-summary.txt", 35_360),
        ("xctrace/xcode27_display-surface-swap.xml", 11),
        ("xctrace/xcode27_display-vsyncs-interval.xml", 9),
        ("xctrace/xcode27_displayed-surfaces-interval.xml", 11),
        ("xctrace/xcode27_hitches-renders.xml", 11),
        ("xctrace/xcode27_hitches.xml", 11),
        ("xctrace/xcode27_potential-hangs.xml", 23),
        // PresentMon: the displayed presents of the application read (never the
        // compositor while an application presented), less one.
        ("presentmon/capframex_farcry-new-dawn_presentmon-1.x.csv", 1_170),
        ("presentmon/capframex_ghost-recon-breakpoint_120hz_presentmon-1.5.csv", 1_686),
        ("presentmon/ocat_metro-exodus_rtx2080ti.csv", 2_501),
        ("presentmon/presentmon-1.5_test_case_2.csv", 18),
        ("presentmon/presentmon-2.x-v1metrics_test_case_2.csv", 18),
        ("presentmon/presentmon-2.x-v2metrics_test_case_2.csv", 17),
        ("presentmon/presentmon-2.x_test_case_2.csv", 17),
        // Chrome: intervals between presented vsyncs of the renderer, idle gaps left out;
        // in the iframe trace three runs end with a drop then an idle vsync, closed there.
        ("chrome-trace/lighthouse_user-timing_pipelinereporter.json", 6),
        ("chrome-trace/lighthouse_iframe-layout_droppedframe.json", 8),
        // MetricKit: one frame per hang diagnostic; a payload of crashes alone has none.
        ("metrickit/meter_xcode-simulated_ios14_diagnostic-payload.json", 1),
        ("metrickit/meter_xcode-simulated_macos13_diagnostic-payload.json", 1),
        ("metrickit/meter_real_ios14_crash-diagnostic-payload.json", 0),
    ]

    @Test("Every readable corpus file: exit 0 and a report, the format detected from the content", arguments: readable.map(\.path))
    func corpusFile(path: String) throws {
        let result = try CLI.run(["analyze", "--format", "json", Self.corpus.appendingPathComponent(path).path])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let frames = (report?["frames"] as? Int ?? -1) + (report?["firstFrames"] as? Int ?? -1)
        #expect(frames == Self.readable.first { $0.path == path }?.frames)
    }

    @Test("--input-format overrides detection: a SurfaceFlinger dump read as CSV is refused naming line 1")
    func inputFormatOverrides() throws {
        let path = Self.corpus.appendingPathComponent(Self.readable[0].path).path
        let forced = try CLI.run(["analyze", "--input-format", "csv", path])
        #expect(forced.exitCode == 65)
        #expect(forced.stderr.contains("\(path):1: missing header line"), "\(forced.stderr)")
        let named = try CLI.run(["analyze", "--input-format", "surfaceflinger-latency", path])
        #expect(named.exitCode == 0, "\(named.stderr)")
        let unknown = try CLI.run(["analyze", "--input-format", "excel", path])
        #expect(unknown.exitCode == 64)
        #expect(unknown.stderr.contains("surfaceflinger-latency"))
    }

    @Test("A gfxinfo dump prints its own figures beside Framescope's, and a budget can fail on it")
    func gfxinfoTable() throws {
        let path = Self.corpus.appendingPathComponent("android-gfxinfo/flashlight_gfxinfo-summary_android12plus.txt").path
        let result = try CLI.run(["analyze", path])
        #expect(result.exitCode == 0)
        #expect(result.stdout.contains("gfxinfo's figure"))
        #expect(result.stdout.range(of: #"Janky frames +4 frames +slowFrames 4, frozenFrames 0"#, options: .regularExpression) != nil, "\(result.stdout)")
        #expect(result.stdout.range(of: #"99th percentile +200 ms +200 ms \(frameDuration.p99 by Framescope's rule\)"#, options: .regularExpression) != nil)
        #expect(result.stderr.contains("frames measured at 60 Hz (pass --refresh-rate to set it)"))
        let directory = try TemporaryDirectory()
        let budget = try directory.file("budget.json", #"{"recording": {"frameDuration.p95": {"max": 0.05}}}"#)
        let check = try CLI.run(["check", "--budget", budget, path])
        #expect(check.exitCode == 1, "\(check.stdout)\(check.stderr)")
    }

    @Test("PresentMon: --process picks the game, its figures print beside Framescope's, and a name that is not there is exit 65 listing those that are")
    func presentMonProcess() throws {
        let path = Self.corpus.appendingPathComponent("presentmon/capframex_ghost-recon-breakpoint_120hz_presentmon-1.5.csv").path
        let result = try CLI.run(["analyze", "--process", "GRB.exe", path])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("read GRB.exe (pid 13456, swap chain 0x000002604A44FD30): frames 1687 shown, 22 not (chosen with --process); left out by --process: dwm.exe, AMD Ryzen Master.exe; choose another with --process NAME or PID"), "\(result.stderr)")
        // Without --process the game is read too, and the compositor is named as such.
        let byDefault = try CLI.run(["analyze", path])
        #expect(byDefault.stderr.contains("read GRB.exe (pid 13456, swap chain 0x000002604A44FD30): frames 1687 shown, 22 not; not read: AMD Ryzen Master.exe (pid 16864, swap chain 0x0000000000000000) 28 shown, dwm.exe (pid 1520, swap chain 0x000001927FEB15A0; the compositor) 1692 shown; choose another"), "\(byDefault.stderr)")
        #expect(result.stdout.contains("PresentMon's figure"))
        #expect(result.stdout.range(of: #"Not displayed \(dropped\) +22 frames +droppedFrames 3"#, options: .regularExpression) != nil, "\(result.stdout)")
        let missing = try CLI.run(["analyze", "--process", "Cyberpunk2077.exe", path])
        #expect(missing.exitCode == 65)
        #expect(missing.stderr.contains("--process Cyberpunk2077.exe names no application in the recording; it has dwm.exe, GRB.exe, AMD Ryzen Master.exe"), "\(missing.stderr)")
    }

    @Test("A CapFrameX capture (//key=value lines before PresentMon's header) is read with its description printed; a file no format matches is exit 65 saying what was tried")
    func capFrameX() throws {
        let directory = try TemporaryDirectory()
        let ocat = Array(try Data(contentsOf: Self.corpus.appendingPathComponent("presentmon/ocat_metro-exodus_rtx2080ti.csv")))
        let header = "//GameName=re2.exe\r\n//GPU=NVIDIA GeForce RTX 2080 Ti\r\n//Comment=\r\n"
        let path = try directory.file("re2.csv", bytes: Array(header.utf8) + ocat)
        let result = try CLI.run(["analyze", path])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.range(of: #"GameName +re2\.exe"#, options: .regularExpression) != nil, "\(result.stdout)")
        #expect(result.stdout.range(of: #"GPU +NVIDIA GeForce RTX 2080 Ti"#, options: .regularExpression) != nil)
        #expect(result.stderr.contains("read MetroExodus.exe (pid 13840"), "\(result.stderr)")
        let unknown = try directory.file("notes.txt", "//foo=bar\nhello\n")
        let refused = try CLI.run(["analyze", unknown])
        #expect(refused.exitCode == 65)
        #expect(refused.stderr.contains("unknown column '//foo=bar'") && refused.stderr.contains("not PresentMon") && refused.stderr.contains("choose one with --input-format"), "\(refused.stderr)")
    }

    @Test("Chrome user-timing: 0.25 s measured of 2.27 s, so the table withholds the ratios and says how much was measured, and a hitchRatio budget fails saying why; droppedFrames agrees with Chrome's per-vsync count")
    func chromeCoverage() throws {
        let path = Self.corpus.appendingPathComponent("chrome-trace/lighthouse_user-timing_pipelinereporter.json").path
        let result = try CLI.run(["analyze", path])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.range(of: #"hitchRatio +— \(withheld\)"#, options: .regularExpression) != nil, "\(result.stdout)")
        #expect(result.stdout.range(of: #"measured +0\.25 s of 2\.27 s"#, options: .regularExpression) != nil)
        #expect(result.stdout.range(of: #"Dropped frames \(vsyncs\) +9 frames +droppedFrames 9"#, options: .regularExpression) != nil)
        #expect(result.stderr.contains("hitchRatio and hangRate withheld: only 0.25 s of 2.27 s measured; a ratio needs 1 s"), "\(result.stderr)")
        let directory = try TemporaryDirectory()
        let budget = try directory.file("budget.json", #"{"recording": {"hitchRatio": {"max": 1000}, "droppedFrames": {"max": 20}}}"#)
        let check = try CLI.run(["check", "--budget", budget, path])
        #expect(check.exitCode == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("recording: hitch ratio withheld (only 0.25 s of 2.27 s measured; a ratio needs 1 s), budget allows"), "\(check.stdout)")
        let json = try CLI.run(["check", "--format", "json", "--budget", budget, path])
        #expect(json.stdout.contains(#""withheld""#))
    }
}
