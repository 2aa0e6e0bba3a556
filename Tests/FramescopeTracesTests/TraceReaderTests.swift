import FramescopeCore
import FramescopeTraces
import Testing

@Suite("Trace readers: CSV and JSON, streamed")
struct TraceReaderTests {
    /// What the CSV and JSON forms of the sample trace both say.
    static let sampleEvents: [TraceEvent] = [
        .refreshRate(60),
        .tick(FrameTick(timestamp: 1.0, targetTimestamp: 1.0166)),
        .segment("scroll 1"),
        .tick(FrameTick(timestamp: 1.0166, targetTimestamp: nil)),
        .tick(FrameTick(timestamp: 1.05, targetTimestamp: 1.0666)),
        .segment(nil),
        .tick(FrameTick(timestamp: 1.0666, targetTimestamp: 1.0833)),
    ]

    func events(_ text: String, chunkSize: Int = .max) throws(TraceError) -> [TraceEvent] {
        var source = MemoryByteSource(text, chunkSize: chunkSize)
        var events: [TraceEvent] = []
        try TraceReader(file: "t").read(from: &source) { event, _ in events.append(event) }
        return events
    }

    func report(_ text: String, refreshRate: Double? = nil) throws(TraceError) -> RecordingReport {
        var source = MemoryByteSource(text)
        return try TraceReader(file: "t").analyze(from: &source, refreshRateOverride: refreshRate)
    }

    func failure(_ text: String, refreshRate: Double? = nil) -> TraceError? {
        do { _ = try report(text, refreshRate: refreshRate); return nil } catch { return error }
    }

    @Test("CSV: header, comment, empty target, segments; every chunk size gives the same events", arguments: [1, 2, 3, 7, 64, Int.max])
    func csv(chunkSize: Int) throws {
        let text = "\u{FEFF}# refreshRate=60\r\ntimestamp,targetTimestamp,segment\r\n1.0,1.0166,\r\n1.0166,,scroll 1\n\n1.05,1.0666,\"scroll 1\"\n1.0666,1.0833,\n"
        let found = try events(text, chunkSize: chunkSize)
        #expect(found == Self.sampleEvents)
    }

    @Test("JSON: the same trace, streamed, every chunk size", arguments: [1, 5, 64, Int.max])
    func json(chunkSize: Int) throws {
        let text = """
            {"refreshRate": 60, "source": {"tool": "x", "list": [1, 2.5e3, true, null]},
             "ticks": [
              {"timestamp": 1.0, "targetTimestamp": 1.0166, "segment": null},
              {"timestamp": 1.0166, "segment": "scroll \\u0031"},
              {"timestamp": 1.05, "targetTimestamp": 1.0666, "segment": "scroll 1"},
              {"timestamp": 1.0666, "targetTimestamp": 1.0833}
            ]}
            """
        let found = try events(text, chunkSize: chunkSize)
        #expect(found == Self.sampleEvents)
    }

    @Test("CSV and JSON forms of one recording give the same report")
    func formatsAgree() throws {
        var csv = "timestamp,targetTimestamp,segment\n"
        var json = #"{"ticks": ["#
        let r = 1.0 / 60
        var t = 10.0
        for index in 0..<500 {
            t += (index % 50 == 49 ? 3 : 1) * r
            let segment = (index / 100) % 2 == 1 ? "scroll \(index / 200 + 1)" : ""
            csv += "\(t),\(t + r),\(segment)\n"
            json += (index == 0 ? "" : ",") + #"{"timestamp": \#(t), "targetTimestamp": \#(t + r), "segment": \#(segment.isEmpty ? "null" : "\"\(segment)\"")}"#
        }
        json += "]}"
        let fromCSV = try report(csv)
        let fromJSON = try report(json)
        #expect(fromCSV == fromJSON)
        #expect(fromCSV.whole.dropEvents == 10)
        #expect(fromCSV.segments.count == 2)
    }

    @Test("Numbers parse exactly as the standard library parses them")
    func numbers() throws {
        let values = ["0", "1", "-2.5", "1e3", "1.5E-3", "123456.789012345", "0.000001", "98765.4321098765432", "+3.25", "1e-300", ".5", "12345678901234567890"]
        var text = "timestamp\n"
        for value in values { text += value + "\n" }
        let ticks = try events(text).compactMap { event -> Double? in
            if case let .tick(tick) = event { return tick.timestamp } else { return nil }
        }
        #expect(ticks == values.map { Double($0)! })
    }

    @Test("NaN and decreasing timestamps are ticks the analyzer rejects, not read errors")
    func nanIsATick() throws {
        let result = try report("timestamp,targetTimestamp\n1,1.1\nnan,1.2\n1.1,1.2\n1.05,1.2\n1.2,1.3\n")
        #expect(result.whole.rejectedTicks == 2)
        #expect(result.whole.frames == 1)
    }

    @Test("Refresh rate: declared in the trace, or given; missing altogether is an error naming the line")
    func refreshRate() throws {
        let bare = "timestamp\n0\n0.0166666667\n0.0333333333\n0.0833333333\n"
        #expect(try report("# refreshRate=60\n" + bare).whole.droppedFrames == 2)
        #expect(try report(bare, refreshRate: 60).whole.droppedFrames == 2)
        #expect(try report("# refreshRate=30\n" + bare, refreshRate: 60).whole.droppedFrames == 2)
        let error = failure(bare)
        #expect(error?.line == 2)
        #expect(error?.message.contains("--refresh-rate") == true)
    }

    @Test("Bad input is a data error naming the line", arguments: [
        ("", nil as Int?, "empty"),
        ("   \n\n", nil, "empty"),
        ("1.0,1.01\n2.0,2.01\n", 1, "missing header"),
        ("timestamp,targetTimestamp\n1.0,1.01\n1.02\n", 3, "a column is missing"),
        ("timestamp,targetTimestamp\n1.0,1.01,x\n", 2, "more fields"),
        ("timestamp,targetTimestamp\n1.0,abc\n", 2, "'abc' is not a number"),
        ("timestamp,targetTimestamp\n,1.0\n", 2, "timestamp is empty"),
        ("timestamp,targetTimestamp\n1.0,0.99\n", 2, "negative or zero"),
        ("targetTimestamp\n1.0\n", 1, "missing column 'timestamp'"),
        ("timestamp,when\n1.0,2\n", 1, "unknown column 'when'"),
        ("# refreshRate=-60\ntimestamp\n1\n", 1, "positive number of Hz"),
        ("timestamp\n1\n2\u{0}\n", 1, "binary"),
        ("{\"ticks\": [{\"timestamp\": 1.0,}]}", 1, "expected a string"),
        ("{\"ticks\": [{\"timestamp\": 1.0, \"targetTimestamp\": 0.5}]}", 1, "negative or zero"),
        ("{\"ticks\": [\n{\"targetTimestamp\": 0.5}\n]}", 2, "no \"timestamp\""),
        ("{\"refreshRate\": 60}", 1, "no \"ticks\""),
        ("{\"ticks\": [{\"timestamp\": 1.0, \"targetTimestamp\": 1.1}\n\n", 3, "file ends"),
        ("{\"ticks\": []} extra", 1, "unexpected content"),
    ])
    func badInput(text: String, line: Int?, fragment: String) {
        let error = failure(text)
        #expect(error?.kind == .data, "\(text.debugDescription)")
        #expect(error?.line == line, "\(text.debugDescription): \(String(describing: error))")
        #expect(error?.message.contains(fragment) == true, "\(text.debugDescription): \(String(describing: error))")
    }

    @Test("Invalid UTF-8 is reported as binary")
    func invalidUTF8() {
        var source = MemoryByteSource([0xFF, 0xFE, 0x41, 0x0A, 0x31, 0x0A])
        #expect(throws: TraceError.self) { try TraceReader(file: "b").analyze(from: &source) }
    }

    @Test("Format detection looks at the first non-blank character")
    func detection() {
        #expect(TraceFormat.detect(prefix: Array("  \n{\"ticks\"".utf8)) == .json)
        #expect(TraceFormat.detect(prefix: [0xEF, 0xBB, 0xBF] + Array("{".utf8)) == .json)
        #expect(TraceFormat.detect(prefix: Array("timestamp".utf8)) == .csv)
    }

    @Test("A file no format matches says what detection tried, not only the CSV reader's complaint; a forced CSV says only that")
    func detectionRefusals() throws {
        var source = MemoryByteSource("//foo=bar\nsomething else\n")
        #expect {
            try TraceReader(file: "t.txt").analyze(from: &source)
        } throws: { error in
            guard let error = error as? TraceError, error.line == 1 else { return false }
            return error.message.hasPrefix("unknown column '//foo=bar'") && error.message.contains("not PresentMon")
                && error.message.contains("not gfxinfo") && error.message.hasSuffix("choose one with --input-format")
        }
        var forced = MemoryByteSource("//foo=bar\nsomething else\n")
        #expect {
            try TraceReader(file: "t.txt").analyze(from: &forced, format: .csv)
        } throws: { error in
            (error as? TraceError)?.message == "unknown column '//foo=bar'; the columns are timestamp, targetTimestamp and segment"
        }
    }
}
