import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// Chrome traces, issue 42: events that are not about frames are skipped whatever their
/// fields hold, a frame event whose fields are wrong is an error naming it, and a `BACKFILL`
/// reporter counts at the vsync of its `frame_sequence`, wherever its `ts` puts it.
@Suite("Trace readers: Chrome JSON trace, odd events and backfilled frames")
struct ChromeTraceEventTests {
    func analyze(_ text: String) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        var source = MemoryByteSource(Array(text.utf8), chunkSize: 4096)
        var notes: [String] = []
        let report = try TraceReader(file: "trace.json").analyze(from: &source, note: { notes.append($0) })
        return (report, notes)
    }

    func figure(_ report: RecordingReport, _ label: String) -> Double? {
        report.toolFigures.first { $0.label == label }?.value
    }

    /// `vsyncTrace` with `event` added after the process name, on its line: event 1, line 1.
    func withEvent(_ event: String, _ letters: String = "PPPDPPPPII") -> String {
        let name = #"{"name":"process_name","ph":"M","pid":7,"args":{"name":"Renderer"}}"#
        let trace = ChromeTraceTests.vsyncTrace(letters)
        precondition(trace.hasPrefix("[" + name + ","))
        return "[" + name + "," + event + trace.dropFirst(1 + name.count)
    }

    @Test("Events that are not about frames are skipped whatever their fields hold: the report is the one without them", arguments: [
        #"{"name":"TracingStartedInBrowser","ph":"I","pid":7,"ts":null,"args":{"data":{"frames":[]}}}"#,
        #"{"name":"Screenshot","ph":"O","pid":"browser","ts":"1000000","id":"0x1","args":{"snapshot":"QUJD"}}"#,
        #"{"name":"thread_name","ph":"M","pid":7.5,"tid":{"a":1},"ts":[1,2],"args":{"name":42}}"#,
        #"{"name":null,"ph":null,"pid":null,"ts":true,"args":null}"#,
        #"{"name":5,"ph":["X"],"pid":-1e300,"ts":false}"#,
        #"{"name":"PipelineReporter","ph":"e","pid":7,"ts":null,"id2":{"local":"0x3"},"args":{}}"#,
        #"{"name":"PipelineReporter","ph":"b","pid":"7","ts":null,"args":{"chrome_frame_reporter":{"state":"STATE_SOMETHING_NEW"}}}"#,
        #"{"name":"NeedsBeginFrameChanged","ph":"I","pid":7,"ts":"soon","args":{"data":{"needsBeginFrame":1}}}"#,
        #"{"name":"process_name","ph":"M","pid":"the browser","args":{"name":"Browser"}}"#,
        #"{"name":"RunTask","ph":"X","pid":7,"ts":1000000,"dur":null,"args":{"name":"\#(String(repeating: "long data: URL ", count: 400))"}}"#,
        #"{"ph":"X","pid":7,"ts":{"µs":1}}"#,
    ])
    func nonFrameEventsAreSkipped(_ event: String) throws {
        let (plain, _) = try analyze(ChromeTraceTests.vsyncTrace("PPPDPPPPII"))
        let (odd, notes) = try analyze(withEvent(event))
        #expect(odd == plain)
        #expect(odd.whole.droppedFrames == 1)
        #expect(notes.contains { $0.hasPrefix("read Renderer (pid 7): frames 7 shown, 1 not") }, "\(notes)")
    }

    @Test("A frame event with a field Framescope needs gone wrong is an error naming the event's number, its name, the field and its line", arguments: [
        (#"{"name":"DrawFrame","ph":"I","pid":7,"ts":null}"#, "event 1 (DrawFrame): ts is null, not a number of µs"),
        (#"{"name":"BeginFrame","ph":"I","pid":7,"ts":"1000000"}"#, "event 1 (BeginFrame): ts is '1000000', not a number of µs"),
        (#"{"name":"DroppedFrame","ph":"I","pid":"renderer","ts":1000000}"#, "event 1 (DroppedFrame): pid is 'renderer', not a whole number"),
        (#"{"name":"DrawFrame","ph":"I","pid":7}"#, "event 1 (DrawFrame) has no ts"),
        (#"{"name":"PipelineReporter","ph":5,"pid":7,"ts":1000000,"args":{"chrome_frame_reporter":{"state":"STATE_DROPPED"}}}"#,
         "event 1 (PipelineReporter): ph is 5, not a phase such as \"b\""),
        (#"{"name":"PipelineReporter","ph":"b","pid":7,"ts":1000000,"args":{"frame_reporter":{"state":"STATE_DROPPED","frame_type":"BACKFILL","frame_sequence":"next"}}}"#,
         "event 1 (PipelineReporter): frame_sequence is 'next', not a whole number"),
        (#"{"name":"PipelineReporter","ph":"b","pid":7,"ts":1000000,"args":{"chrome_frame_reporter":{"state":"STATE_DROPPED","frame_source":{}}}}"#,
         "event 1 (PipelineReporter): frame_source is an object, not a whole number"),
        (#"{"name":"NeedsBeginFrameChanged","ph":"I","pid":7,"ts":[],"args":{"data":{"needsBeginFrame":0}}}"#,
         "event 1 (NeedsBeginFrameChanged): ts is a list, not a number of µs"),
    ])
    func brokenFrameEvent(_ event: String, _ message: String) {
        #expect {
            try analyze(withEvent(event))
        } throws: { error in
            guard let error = error as? TraceError else { return false }
            return error.kind == .data && error.line == 1 && error.message == message
        }
    }

    @Test("Events are numbered from 0 as the list holds them, and the line is the event's")
    func eventNumberAndLine() {
        let text = "{\"traceEvents\": [\n" + (0..<5).map { #"{"name":"DrawFrame","ph":"I","pid":1,"ts":\#(1000 + $0 * 16667)}"# }.joined(separator: ",\n")
            + ",\n" + #"{"name":"Other","ts":null},"# + "\n" + #"{"name":"DrawFrame","pid":1,"ts":1e300}"# + "\n]}"
        #expect {
            try analyze(text)
        } throws: { error in
            (error as? TraceError)?.description == "trace.json:8: event 6 (DrawFrame): ts 1e+300 is not a time in µs"
        }
    }

    /// One renderer at 60 Hz with `frame_sequence` 100 onward, one letter a vsync: P presented,
    /// D dropped, I no update desired, and B a `BACKFILL` dropped reporter stamped as if reported
    /// at the next vsync (its `ts`, and its `BeginFrame`'s, are the next vsync's). `key` is the
    /// reporter's key in `args`.
    static func backfillTrace(_ letters: String, key: String = "chrome_frame_reporter") -> String {
        var events = [#"{"name":"process_name","ph":"M","pid":7,"args":{"name":"Renderer"}}"#]
        let time = { (index: Int) in 1_000_000 + Int((Double(index) * 1e6 / 60).rounded()) }
        for (index, letter) in letters.enumerated() {
            let state = ["P": "STATE_PRESENTED_ALL", "D": "STATE_DROPPED", "B": "STATE_DROPPED", "I": "STATE_NO_UPDATE_DESIRED"][String(letter)]!
            let ts = letter == "B" ? time(index + 1) : time(index)
            let type = letter == "B" ? #","frame_type":"BACKFILL""# : ""
            events.append(#"{"name":"BeginFrame","ph":"I","pid":7,"ts":\#(ts),"args":{"frameSeqId":\#(100 + index)}}"#)
            events.append(#"{"args":{"\#(key)":{"state":"\#(state)"\#(type),"frame_sequence":\#(100 + index),"frame_source":4294967296}},"name":"PipelineReporter","ph":"b","pid":7,"ts":\#(ts)}"#)
        }
        return "[" + events.joined(separator: ",\n") + "]"
    }

    @Test("A backfilled drop stamped at the next vsync counts at its own: after idle vsyncs it starts the run (1 dropped frame, not 0); between presented frames it is a dropped vsync of its own", arguments: ["chrome_frame_reporter", "frame_reporter"])
    func backfillCountsAtItsSequence(_ key: String) throws {
        let (afterIdle, _) = try analyze(Self.backfillTrace("PPPPIIIBPPPP", key: key))
        #expect(afterIdle.whole.droppedFrames == 1)
        #expect(figure(afterIdle, "Dropped frames (vsyncs)") == 1)
        #expect(figure(afterIdle, "Presented frames (vsyncs)") == 8)
        #expect(figure(afterIdle, "No update desired (vsyncs)") == 3)
        let (between, _) = try analyze(Self.backfillTrace("PPPPPBPPPP", key: key))
        #expect(between.whole.droppedFrames == 1)
        #expect(figure(between, "Dropped frames (vsyncs)") == 1)
        #expect(figure(between, "Presented frames (vsyncs)") == 9)
        #expect(abs(between.whole.hitchTime - 1.0 / 60) < 0.0005, "\(between.whole.hitchTime)")
    }

    @Test("The iframe trace with its four BACKFILL reporters (and their BeginFrame and DroppedFrame) stamped at the next vsync still counts Chrome's 4 dropped vsyncs")
    func corpusBackfillsStampedLate() throws {
        let url = ChromeTraceTests.corpus.appendingPathComponent("lighthouse_iframe-layout_droppedframe.json")
        let trace = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var events = try #require(trace["traceEvents"] as? [[String: Any]])
        func reporter(_ event: [String: Any]) -> [String: Any]? {
            guard event["name"] as? String == "PipelineReporter", event["ph"] as? String == "b", event["pid"] as? Int == 99158 else { return nil }
            return (event["args"] as? [String: Any])?["chrome_frame_reporter"] as? [String: Any]
        }
        var times: [Int: Int] = [:]
        for event in events { if let args = reporter(event), let sequence = args["frame_sequence"] as? Int { times[sequence] = event["ts"] as? Int } }
        var late: [Int: Int] = [:]
        for event in events {
            if let args = reporter(event), args["frame_type"] as? String == "BACKFILL", let sequence = args["frame_sequence"] as? Int {
                let next: Int = try #require(times[sequence + 1])
                late[sequence] = next
            }
        }
        #expect(late.count == 4)
        for index in events.indices where events[index]["pid"] as? Int == 99158 {
            let sequence = reporter(events[index])?["frame_sequence"] as? Int ?? ((events[index]["args"] as? [String: Any])?["frameSeqId"] as? Int)
            if let sequence, let ts = late[sequence] { events[index]["ts"] = ts }
        }
        let derived = try JSONSerialization.data(withJSONObject: ["traceEvents": events])
        let (report, _) = try analyze(String(decoding: derived, as: UTF8.self))
        #expect(figure(report, "Dropped frames (vsyncs)") == 4)
        #expect(figure(report, "Presented frames (vsyncs)") == 12)
        #expect(report.whole.droppedFrames == 4)
    }
}
