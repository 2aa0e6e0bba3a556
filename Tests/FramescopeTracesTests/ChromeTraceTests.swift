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

    @Test("user-timing: the renderer is read; 8 presented vsyncs at 60 Hz, 13 dropped and 40 idle reporters as Chrome's figures")
    func userTiming() throws {
        let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent("lighthouse_user-timing_pipelinereporter.json")))
        #expect(TraceFormat.detect(prefix: bytes.prefix(4096)) == .chrome)
        let (report, notes) = try analyze(bytes, chunkSize: 5000)
        #expect(notes.first == "read Renderer (pid 88357): frames 8 shown, 9 not; not read: Browser (pid 88334; the browser's own UI) 1 shown; choose another with --process NAME or PID")
        #expect(figure(report, "Presented (PipelineReporter)") == 8)
        #expect(figure(report, "Dropped (PipelineReporter)") == 13)
        #expect(figure(report, "No update desired") == 40)
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

    @Test("iframe: 120 Hz; 12 presented vsyncs, one drop between two presented frames; 3 DroppedFrame events and 5 dropped reporters")
    func iframe() throws {
        let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent("lighthouse_iframe-layout_droppedframe.json")))
        let (report, notes) = try analyze(bytes, chunkSize: 65_536)
        #expect(notes.first?.hasPrefix("read Renderer (pid 99158): frames 12 shown") == true, "\(notes)")
        #expect(report.whole.refreshRates.entries.map(\.key) == [120])
        #expect(report.whole.droppedFrames == 1)
        #expect(figure(report, "Dropped (PipelineReporter)") == 5)
        #expect(figure(report, "of which partly presented") == 3)
        let browser = try analyze(bytes, process: "Browser").report
        #expect(figure(browser, "Presented (PipelineReporter)") != nil)
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
