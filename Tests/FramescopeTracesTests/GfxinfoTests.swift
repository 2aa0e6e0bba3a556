import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// Android's `dumpsys gfxinfo <package>` summary: the corpus' two real dumps (the reference
/// figures are the dumps' own) and fixtures for the edge cases.
@Suite("Trace readers: Android dumpsys gfxinfo")
struct GfxinfoTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/android-gfxinfo")
    }

    func analyze(_ text: String, chunkSize: Int = .max, refreshRate: Double? = nil) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        var source = MemoryByteSource(text, chunkSize: chunkSize)
        var notes: [String] = []
        let report = try TraceReader(file: "dump").analyze(from: &source, refreshRateOverride: refreshRate, note: { notes.append($0) })
        return (report, notes)
    }

    func figure(_ report: RecordingReport, _ label: String) -> ToolFigure? {
        report.toolFigures.first { $0.label == label }
    }

    func corpusText(_ name: String) throws -> String {
        try String(contentsOf: Self.corpus.appendingPathComponent(name), encoding: .utf8)
    }

    @Test("Android 12+ dump: 21 frames, 4 janky beside 4 slow, percentiles 19/57/57/200 ms agree exactly")
    func android12() throws {
        let text = try corpusText("flashlight_gfxinfo-summary_android12plus.txt")
        #expect(TraceFormat.detect(prefix: Array(text.utf8.prefix(512))) == .gfxinfo)
        let (report, notes) = try analyze(text, chunkSize: 97)
        #expect(report.whole.frames == 21)
        #expect(figure(report, "Total frames rendered")?.value == 21)
        #expect(figure(report, "Janky frames")?.value == 4)
        #expect(figure(report, "Janky frames")?.metrics == [.slowFrames, .frozenFrames])
        #expect(figure(report, "Janky frames (legacy)")?.value == 16)
        for (rank, ms) in [(50, 19.0), (90, 57), (95, 57), (99, 200)] {
            let percentile = figure(report, "\(rank)th percentile")
            #expect(percentile?.value == ms)
            #expect(percentile?.framescope == ms, "p\(rank)")
        }
        // At 60 Hz, frames of 25 ms or more missed a refresh: 46, 57, 57 and 200 ms.
        #expect(report.whole.slowFrames == 4 && report.whole.frozenFrames == 0 && report.whole.hangs == 0)
        #expect(abs((report.whole.frameDurations.value(atQuantile: 0.5) ?? 0) - 0.019) <= 0.019 * DurationHistogram.maximumRelativeError)
        #expect(report.whole.maxFrameDuration == 0.2)
        #expect(report.whole.windows == 0, "a histogram has no times, so no FPS window")
        #expect(notes == ["the recording does not say the display's refresh rate: frames measured at 60 Hz (pass --refresh-rate to set it)"])
        // The GPU percentiles are not frame figures.
        #expect(!report.toolFigures.contains { $0.label.contains("gpu") })
    }

    @Test("React Native feed: 35,360 frames, 66.73 % janky, percentiles 28/48/53/57 ms agree exactly")
    func reactNativeFeed() throws {
        let (report, _) = try analyze(try corpusText("flashlight_reactnativefeed_gfxinfo-summary.txt"))
        #expect(report.whole.frames == 35_360)
        #expect(figure(report, "Janky frames")?.value == 23_595)
        for (rank, ms) in [(50, 28.0), (90, 48), (95, 53), (99, 57)] {
            #expect(figure(report, "\(rank)th percentile")?.value == ms)
            #expect(figure(report, "\(rank)th percentile")?.framescope == ms, "p\(rank)")
        }
        #expect(figure(report, "Number Frame deadline missed")?.value == 12_149)
        #expect(figure(report, "Number Frame deadline missed")?.metrics == [.dropEvents])
        // Frames of 25 ms or more at 60 Hz, none 700 ms or more; 3 of 250 ms or more.
        #expect(report.whole.slowFrames == 19_151 && report.whole.frozenFrames == 0 && report.whole.hangs == 3)
        #expect(report.whole.dropEvents == 19_151)
    }

    @Test("--refresh-rate sets the display the frames are measured at, and no note is needed")
    func refreshRate() throws {
        let (at120, notes) = try analyze(try corpusText("flashlight_gfxinfo-summary_android12plus.txt"), refreshRate: 120)
        // At 120 Hz every frame of 12.5 ms or more missed a refresh: all 21.
        #expect(at120.whole.slowFrames == 21)
        #expect(notes.isEmpty)
    }

    static let twoProcesses = """
        Applications Graphics Acceleration Info:
        ** Graphics info for pid 1 [com.small] **
        Total frames rendered: 2
        HISTOGRAM: 16ms=1 17ms=1 18ms=0
        ** Graphics info for pid 2 [com.big] **
        Total frames rendered: 4
        Janky frames: 1 (25.00%)
        50th percentile: 16ms
        HISTOGRAM: 16ms=2 17ms=0 40ms=1
        """

    @Test("Several processes: the one with the most frames, a note naming the others and a count that disagrees")
    func severalProcesses() throws {
        let (report, notes) = try analyze(Self.twoProcesses, chunkSize: 5)
        #expect(report.whole.frames == 3)
        #expect(figure(report, "Total frames rendered")?.value == 4)
        #expect(figure(report, "50th percentile")?.framescope == 16)
        #expect(notes.contains("2 processes have frames; reading Graphics info for pid 2 [com.big], the one with the most (3); not read: Graphics info for pid 1 [com.small]"))
        #expect(notes.contains("HISTOGRAM counts 3 frames; 'Total frames rendered' says 4"))
    }

    @Test("Counts at the physical limit add up without a trap")
    func hugeCounts() throws {
        let text = "** Graphics info for pid 1 [x] **\nHISTOGRAM: 16ms=500000000000 4950ms=500000000000\n"
        let (report, _) = try analyze(text)
        #expect(report.whole.frames == 1_000_000_000_000)
        #expect(report.whole.hangs == 500_000_000_000)
        #expect(report.whole.duration > 2.4e12)
    }

    @Test("Bad dumps are errors naming the line", arguments: [
        ("** Graphics info for pid 1 [x] **\nHISTOGRAM: 5ms=abc\n", 2, "is not a count of frames"),
        ("** Graphics info for pid 1 [x] **\nHISTOGRAM: 5ms=1 4ms=1\n", 2, "is not after 5ms"),
        ("** Graphics info for pid 1 [x] **\nHISTOGRAM: 5=1\n", 2, "is not 'Nms=count'"),
        ("** Graphics info for pid 1 [x] **\nTotal frames rendered: -3\nHISTOGRAM: 5ms=1\n", 2, "is not a count of frames"),
        ("** Graphics info for pid 1 [x] **\nHISTOGRAM: 5ms=1000000000001\n", 2, "is not a count of frames"),
        ("** Graphics info for pid 1 [x] **\nHISTOGRAM: 5ms=900000000000 6ms=900000000000\n", 2, "more than 10^12 frames"),
        ("** Graphics info for pid 1 [x] **\nHISTOGRAM: 5ms=1\nHISTOGRAM: 5ms=1\n", 3, "a second HISTOGRAM"),
        ("** Graphics info for pid 1 [x] **\n50th percentile: fast\nHISTOGRAM: 5ms=1\n", 2, "is not a duration in whole ms"),
    ] as [(String, Int, String)])
    func badDumps(text: String, line: Int, message: String) {
        #expect {
            _ = try analyze(text)
        } throws: { error in
            guard let error = error as? TraceError else { return false }
            return error.kind == .data && error.line == line && error.message.contains(message)
        }
    }

    @Test("A dump without a histogram says what was expected")
    func noHistogram() {
        #expect {
            _ = try analyze("Applications Graphics Acceleration Info:\nUptime: 1 Realtime: 2\n")
        } throws: { error in
            (error as? TraceError)?.message.contains("has no 'HISTOGRAM:' line and no frames in a PROFILEDATA block; expected the output of 'adb shell dumpsys gfxinfo <package>'") == true
        }
    }

    @Test("Control characters in a figure's name from the file are replaced")
    func controlCharacters() throws {
        let text = "** Graphics info for pid 1 [x\u{1B}[31m] **\nNumber Evil\u{1B}]0;pwned\u{07}: 3\nHISTOGRAM: 16ms=1\n"
        let (report, notes) = try analyze(text)
        #expect(report.toolFigures.map(\.label) == ["Number Evil\u{FFFD}]0;pwned\u{FFFD}"])
        #expect(!notes.joined().contains("\u{1B}"))
    }
}
