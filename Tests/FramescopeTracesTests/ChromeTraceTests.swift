import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// Chrome's JSON trace (Trace Event Format): the corpus' two real Lighthouse traces and
/// fixtures written from the format's documentation for the edge cases.
@Suite("Trace readers: Chrome JSON trace")
struct ChromeTraceTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/chrome-trace")
    }

    func analyze(_ bytes: [UInt8], process: String? = nil, chunkSize: Int = .max) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        var source = MemoryByteSource(bytes, chunkSize: chunkSize)
        var notes: [String] = []
        let report = try TraceReader(file: "trace.json").analyze(from: &source, process: process, note: { notes.append($0) })
        return (report, notes)
    }

    func analyze(_ text: String, process: String? = nil) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        try analyze(Array(text.utf8), process: process)
    }

    func events(_ text: String) throws(TraceError) -> [TraceEvent] {
        var source = MemoryByteSource(text)
        var events: [TraceEvent] = []
        try TraceReader(file: "trace.json").read(from: &source) { (event, _) throws(TraceError) in events.append(event) }
        return events
    }

    func figure(_ report: RecordingReport, _ label: String) -> Double? {
        report.toolFigures.first { $0.label == label }?.value
    }

    @Test("user-timing: the renderer is read; 8 presented and 9 dropped vsyncs at 60 Hz (13 dropped reporters, 4 of them forked); 0.25 s measured of 2.23 s, so ratios are withheld")
    func userTiming() throws {
        let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent("lighthouse_user-timing_pipelinereporter.json")))
        #expect(TraceFormat.detect(prefix: bytes.prefix(4096)) == .chrome)
        let (report, notes) = try analyze(bytes, chunkSize: 5000)
        #expect(notes.first == "read Renderer (pid 88357): frames 8 shown, 9 not; not read: Browser (pid 88334; the browser's own UI) 1 shown; choose another with --process NAME or PID")
        #expect(figure(report, "Presented frames (vsyncs)") == 8)
        #expect(figure(report, "Dropped frames (vsyncs)") == 9)
        #expect(figure(report, "No update desired (vsyncs)") == 38)
        #expect(figure(report, "Presented (PipelineReporter)") == 8)
        #expect(figure(report, "Dropped (PipelineReporter)") == 13)
        #expect(figure(report, "No update desired (PipelineReporter)") == 40)
        #expect(figure(report, "of which forked (main thread)") == 6)
        let coverage = try #require(report.coverage)
        // First to last vsync (reporters and BeginFrame), 2.267 s; the drawn frames cover 0.25 s.
        #expect(abs(coverage.traceSeconds - 2.2666) < 0.001 && abs(coverage.measuredSeconds - 0.25) < 0.001, "\(coverage)")
        #expect(coverage.withholdsRatios)
        #expect(report.whole.refreshRates.entries.map(\.key) == [60])
        // Two runs of presented vsyncs, idle between: 8 ticks, 6 intervals. The first
        // (733 ms → 900 ms, across nine dropped vsyncs) counts like any other: the trace was
        // cut from a longer session, and its nine drops are the jank of the recording.
        #expect(report.whole.frames == 6)
        #expect(report.whole.firstFrames == 0)
        #expect(report.whole.droppedFrames == 9)
        #expect(abs(report.whole.hitchTime - 0.150) < 0.001)
    }

    @Test("Chromium 156 writes the reporter's state under args.frame_reporter: read the same as chrome_frame_reporter")
    func frameReporterKey() throws {
        let text = try String(contentsOf: Self.corpus.appendingPathComponent("lighthouse_user-timing_pipelinereporter.json"), encoding: .utf8)
        #expect(text.contains("\"chrome_frame_reporter\""))
        let renamed = text.replacingOccurrences(of: "\"chrome_frame_reporter\"", with: "\"frame_reporter\"")
        let (old, _) = try analyze(Array(text.utf8))
        let (new, notes) = try analyze(Array(renamed.utf8))
        #expect(new == old)
        #expect(!notes.contains { $0.contains("state Framescope does not know") }, "\(notes)")
    }

    @Test("iframe: 120 Hz; 12 presented vsyncs; 4 dropped vsyncs, as Chrome's per-vsync count (three end in an idle vsync); 5 dropped reporters, one forked")
    func iframe() throws {
        let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent("lighthouse_iframe-layout_droppedframe.json")))
        let (report, notes) = try analyze(bytes, chunkSize: 65_536)
        #expect(notes.first?.hasPrefix("read Renderer (pid 99158): frames 12 shown") == true, "\(notes)")
        #expect(report.whole.refreshRates.entries.map(\.key) == [120])
        #expect(report.whole.droppedFrames == 4)
        #expect(figure(report, "Dropped frames (vsyncs)") == 4)
        #expect(figure(report, "Presented frames (vsyncs)") == 12)
        #expect(figure(report, "Presented (PipelineReporter)") == 15)
        #expect(figure(report, "of which forked (main thread)") == 4)
        #expect(figure(report, "Dropped (PipelineReporter)") == 5)
        #expect(figure(report, "of which partly presented") == 3)
        let browser = try analyze(bytes, process: "Browser").report
        #expect(figure(browser, "Presented (PipelineReporter)") != nil)
    }

    @Test("The browser's own UI drawing more frames than the page is not read by default; --process Browser still reads it")
    func rendererOverBrowser() throws {
        // Derived from the iframe trace: 40 presented vsyncs of the browser process (99144)
        // added, as when its tab strip animates (headless Chromium draws no browser UI, so
        // this cannot be recorded here).
        let text = try String(contentsOf: Self.corpus.appendingPathComponent("lighthouse_iframe-layout_droppedframe.json"), encoding: .utf8)
        let added = (0..<40).map { #"{"name":"PipelineReporter","ph":"b","pid":99144,"ts":\#(1_000_000_000 + $0 * 8_333),"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}}"# }
        let open = try #require(text.range(of: "\"traceEvents\": ["))
        let derived = text.replacingCharacters(in: open, with: "\"traceEvents\": [" + added.joined(separator: ",") + ",")
        let (report, notes) = try analyze(Array(derived.utf8))
        #expect(figure(report, "Presented frames (vsyncs)") == 12)
        #expect(notes.first?.hasPrefix("read Renderer (pid 99158): frames 12 shown, 4 not; not read: Browser (pid 99144; the browser's own UI) 47 shown") == true, "\(notes)")
        let browser = try analyze(Array(derived.utf8), process: "Browser").report
        #expect(figure(browser, "Presented frames (vsyncs)") == 47)
    }

    /// A Chrome trace of one renderer at `hz`: per vsync a letter (P presented, D dropped,
    /// I no update desired, S a stop: `needsBeginFrame` 0, `-` nothing at all), each vsync
    /// but `-` with its `BeginFrame`, and a 30 kB event of another kind between.
    static func vsyncTrace(_ letters: String, hz: Double = 60) -> String {
        var events = [#"{"name":"process_name","ph":"M","pid":7,"args":{"name":"Renderer"}}"#]
        for (index, letter) in letters.enumerated() {
            let ts = 1_000_000 + Int((Double(index) * 1e6 / hz).rounded())
            let state = ["P": "STATE_PRESENTED_ALL", "D": "STATE_DROPPED", "I": "STATE_NO_UPDATE_DESIRED"][String(letter)]
            if letter == "S" {
                events.append(#"{"name":"NeedsBeginFrameChanged","ph":"I","pid":7,"ts":\#(ts),"args":{"data":{"needsBeginFrame":0}}}"#)
            } else if let state {
                events.append(#"{"name":"BeginFrame","ph":"I","pid":7,"ts":\#(ts)}"#)
                events.append(#"{"name":"PipelineReporter","ph":"b","pid":7,"ts":\#(ts),"args":{"chrome_frame_reporter":{"state":"\#(state)"}}}"#)
            }
        }
        return "[" + events.joined(separator: ",\n") + "]"
    }

    @Test("Content at half the refresh rate (presented, idle, presented … at 120 Hz) is measured whole: 204 frames at 60 FPS, none dropped")
    func halfCadenceIsNotIdle() throws {
        let (report, _) = try analyze(Self.vsyncTrace(String(repeating: "PI", count: 205), hz: 120))
        #expect(report.whole.frames == 204 && report.whole.droppedFrames == 0)
        #expect(abs((report.whole.averageFPS ?? 0) - 60) < 0.1)
        #expect(report.coverage.map { abs($0.measuredSeconds - 204.0 / 60) < 0.001 } == true)
        #expect(report.coverage?.withholdsRatios == false)
    }

    @Test("A stop that lasts seconds still pauses: no interval across it, no hang")
    func longStopPauses() throws {
        let letters = "PPPPIS" + String(repeating: "-", count: 120) + "PPPP"
        let (report, _) = try analyze(Self.vsyncTrace(letters))
        #expect(report.whole.frames == 6 && report.whole.droppedFrames == 0 && report.whole.hangs == 0)
    }

    @Test("Jank that ends an idle spell counts: presented, idle, idle, 14 dropped, presented gives 14 dropped frames; so does jank at the start of a trace")
    func jankAfterIdle() throws {
        let (report, _) = try analyze(Self.vsyncTrace("PPSII" + String(repeating: "D", count: 14) + "P"))
        #expect(report.whole.droppedFrames == 14)
        #expect((report.whole.hitchRatio ?? 0) > 0)
        #expect(figure(report, "Dropped frames (vsyncs)") == 14)
        let (start, _) = try analyze(Self.vsyncTrace(String(repeating: "D", count: 5) + "PPP"))
        #expect(start.whole.droppedFrames == 5)
    }

    @Test("A forked main-thread reporter at the same vsync is one frame: 2 reporters, 1 presented frame")
    func forkedReporterIsOneFrame() throws {
        let events = (0..<30).flatMap { index -> [String] in
            let ts = 1_000_000 + index * 16_667
            return [#"{"name":"PipelineReporter","ph":"b","pid":7,"ts":\#(ts),"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL","frame_type":"UNKNOWN"}}}"#,
                    #"{"name":"PipelineReporter","ph":"b","pid":7,"ts":\#(ts),"args":{"chrome_frame_reporter":{"frame_type":"FORKED","state":"STATE_PRESENTED_PARTIAL"}}}"#]
        }
        let (report, notes) = try analyze("[" + events.joined(separator: ",") + "]")
        #expect(figure(report, "Presented frames (vsyncs)") == 30)
        #expect(figure(report, "Presented (PipelineReporter)") == 60)
        #expect(figure(report, "of which forked (main thread)") == 30)
        #expect(report.whole.frames == 29)
        #expect(notes.first?.hasPrefix("read pid 7 (pid 7): frames 30 shown") == true, "\(notes)")
    }

    static var recordings: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings")
    }

    func recording(_ name: String) throws -> RecordingReport {
        var source = try TraceInput(path: Self.recordings.appendingPathComponent(name).path)
        return try TraceReader(file: name).analyze(from: &source)
    }

    @Test("Recorded here, Chromium 156 at 60 Hz: a page moving on every other animation frame, and a 30 fps setInterval page whose renderer stops for one vsync between frames, are measured whole with nothing dropped")
    func halfRateRecordings() throws {
        let raf = try recording("half-rate-raf.json.gz")
        #expect(raf.whole.droppedFrames == 0)
        #expect(abs((raf.whole.averageFPS ?? 0) - 30) < 1.5, "\(raf.whole.averageFPS ?? 0)")
        #expect((raf.coverage?.measuredSeconds ?? 0) > 3.5)
        let interval = try recording("half-rate-interval.json.gz")
        #expect(interval.whole.droppedFrames == 0)
        // 134 presented vsyncs (counted from the trace by a script), one run: 133 intervals.
        #expect(interval.whole.frames == 133)
        #expect(figure(interval, "Presented frames (vsyncs)") == 134)
        #expect(abs((interval.whole.averageFPS ?? 0) - 33) < 1, "\(interval.whole.averageFPS ?? 0)")
        #expect((interval.coverage?.measuredSeconds ?? 0) > 3.5)
    }

    @Test("Recorded here: a page idle 1.5 s whose animation's first frame blocks the main thread 200 ms shows the jank as dropped frames")
    func idleThenJankRecording() throws {
        let report = try recording("idle-then-jank.json.gz")
        #expect(report.whole.droppedFrames == 11)
        #expect(abs(report.whole.hitchTime - 0.1833) < 0.005, "\(report.whole.hitchTime)")
    }

    static let fixture = """
    [
    {"name":"process_name","ph":"M","pid":7,"args":{"name":"Renderer"}},
    {"name":"BeginFrame","ph":"I","pid":7,"ts":1000000},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":1016667,"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":1000000,"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}},
    {"name":"Screenshot","ph":"O","pid":7,"ts":1000001,"args":{"snapshot":"\(String(repeating: "QUJD", count: 5000))\\u00e9\\n"}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":1033333,"args":{"chrome_frame_reporter":{"state":"STATE_DROPPED"}}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":1050000,"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":1066667,"args":{"chrome_frame_reporter":{"state":"STATE_NO_UPDATE_DESIRED"}}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":3000000,"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":3016667,"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}},
    {"name":"PipelineReporter","ph":"b","pid":7,"ts":3033333,"args":{"chrome_frame_reporter":{"state":"STATE_PRESENTED_ALL"}}},
    """

    @Test("A bare list without its closing bracket; events out of order; a 20 kB string skipped; an idle vsync breaks the sequence without a frame of its own")
    func bareList() throws {
        let events = try events(Self.fixture)
        let ticks = events.compactMap { event -> Double? in if case let .tick(tick) = event { return tick.timestamp } else { return nil } }
        #expect(ticks.map { ($0 * 1e6).rounded() } == [1_000_000, 1_016_667, 1_050_000, 3_000_000, 3_016_667, 3_033_333])
        #expect(events.contains(.refreshRate(60)))
        #expect(events.contains(.idle))
        let (report, _) = try analyze(Self.fixture)
        // 1.000 → 1.017 is an interval like any other (another tool's recording); 1.017 →
        // 1.050 drops one frame; the idle gap to 3.000 is no frame's; then two frames at 60 Hz.
        #expect(report.whole.firstFrames == 0 && report.whole.frames == 4)
        #expect(report.whole.droppedFrames == 1)
        #expect(report.whole.hangs == 0, "the idle second is not a hang")
    }

    @Test("Without reporters, DrawFrame makes the ticks and DroppedFrame is counted; pid may be a string")
    func drawFrames() throws {
        let draws = (0..<30).map { #"{"name":"DrawFrame","ph":"I","pid":"12","ts":\#(1_000_000 + $0 * 16_667)}"# }
        let text = #"{"metadata":{"x":[1,2]},"traceEvents":["# + (draws + [#"{"name":"DroppedFrame","ph":"I","pid":"12","ts":2000000}"#]).joined(separator: ",") + "]}"
        let (report, notes) = try analyze(text)
        #expect(figure(report, "DrawFrame") == 30)
        #expect(figure(report, "DroppedFrame") == 1)
        #expect(report.whole.frames + report.whole.firstFrames == 29)
        #expect(notes.first == "read pid 12 (pid 12): frames 30 shown, 1 not; the only source in the recording")
    }

    @Test("Broken traces are errors naming the line", arguments: [
        (#"{"traceEvents":[{"name":"DrawFrame","pid":1}]}"#, "has no ts"),
        (#"{"traceEvents":[{"name":"DrawFrame","ts":5}]}"#, "has no pid"),
        (#"{"traceEvents":[{"name":"DrawFrame","pid":1,"ts":1e300}]}"#, "is not a time"),
        (#"{"traceEvents":[{"name":"DrawFrame","pid":1.5,"ts":1}]}"#, "not a whole number"),
        (#"{"traceEvents":[{"name":"Other","pid":1,"ts":1}]}"#, "has no frame events"),
        (#"{"traceEvents":[{"name":"DrawFrame","pid":1,"ts":1,"args":{"s":"\q"}}]}"#, "is not a JSON escape"),
        (#"{"traceEvents":[{"name":"DrawFrame","pid":1,"ts":1}"#, "file ends"),
        (#"{"traceEvents": 5}"#, "'[' to start the list of trace events"),
    ])
    func broken(_ text: String, _ message: String) {
        #expect {
            try analyze(text)
        } throws: { error in
            let error = error as? TraceError
            return error?.kind == .data && error?.message.contains(message) == true
        }
    }
}
