import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// Android's `dumpsys SurfaceFlinger --latency`: the corpus' two real dumps and fixtures
/// written from the format's description for the edge cases.
@Suite("Trace readers: Android SurfaceFlinger --latency")
struct SurfaceFlingerLatencyTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/android-gfxinfo")
    }

    /// The events and notes of `text`, read in chunks of `chunkSize` bytes, detected from content.
    func read(_ text: String, chunkSize: Int = .max) throws(TraceError) -> (events: [TraceEvent], notes: [String]) {
        var source = MemoryByteSource(text, chunkSize: chunkSize)
        var events: [TraceEvent] = []
        var notes: [String] = []
        try TraceReader(file: "sf").read(from: &source, note: { notes.append($0) }) { event, _ in events.append(event) }
        return (events, notes)
    }

    func ticks(_ events: [TraceEvent]) -> [FrameTick] {
        events.compactMap { if case let .tick(tick) = $0 { return tick } else { return nil } }
    }

    @Test("The 127-frame dump: 127 ticks at its actual present times, a 16.67 ms period, one missed refresh")
    func corpus127() throws {
        let text = try String(contentsOf: Self.corpus.appendingPathComponent("aosp-studio-profiler_surfaceflinger-latency_127-frames.txt"), encoding: .utf8)
        #expect(TraceFormat.detect(prefix: Array(text.utf8.prefix(512))) == .surfaceFlingerLatency)
        let (events, notes) = try read(text)
        #expect(events.first == .refreshRate(1e9 / 16_666_667))
        let ticks = ticks(events)
        #expect(ticks.count == 127)
        #expect(ticks.first?.timestamp == 96_070_372_447_472 / 1e9)
        #expect(notes.isEmpty)
        var source = MemoryByteSource(text)
        let report = try TraceReader(file: "sf").analyze(from: &source)
        #expect(report.whole.frames + report.whole.firstFrames == 126)
        #expect(report.whole.dropEvents == 1 && report.whole.droppedFrames == 1)
        #expect(abs((report.whole.maxFrameDuration ?? 0) - 0.0334) < 0.0005)
    }

    @Test("The dump with empty rows: 36 frames, and a note that 91 rows of 0 0 0 were skipped")
    func corpusZeroRows() throws {
        let text = try String(contentsOf: Self.corpus.appendingPathComponent("aosp-studio-profiler_surfaceflinger-latency_with-zero-rows.txt"), encoding: .utf8)
        let (events, notes) = try read(text, chunkSize: 7)
        #expect(ticks(events).count == 36)
        #expect(notes == ["skipped 91 rows of 0 0 0 (no frame recorded yet)"])
    }

    @Test("Pending fences are skipped and counted; spaces, tabs and CRLF separate; every chunk size agrees", arguments: [1, 2, 5, 64, Int.max])
    func fixture(chunkSize: Int) throws {
        let text = "16666667\r\n0 0 0\n1000000000\t1000000000\t990000000\r\n1016666667  1016666667  1005000000\n1033333334\t9223372036854775807\t1020000000\n"
        let (events, notes) = try read(text, chunkSize: chunkSize)
        #expect(ticks(events) == [FrameTick(timestamp: 1.0, targetTimestamp: nil), FrameTick(timestamp: 1.016666667, targetTimestamp: nil)])
        #expect(notes == ["skipped 1 row of 0 0 0 (no frame recorded yet)", "skipped 1 frame not yet presented (pending fence)"])
    }

    @Test("Bad rows are errors naming the line", arguments: [
        ("16666667\n1 2 3\n4 2 5\n", 3, "is not after the previous frame's"),
        ("16666667\n1 2\n", 2, "expected three whole numbers"),
        ("16666667\n1 2 x\n", 2, "expected three whole numbers"),
        ("16666667\n1 99999999999999999999 3\n", 2, "expected three whole numbers"),
        ("16666667\n1 -2 3\n", 2, "expected three whole numbers"),
        ("16666667 1\n1 2 3\n", 1, "header"),
        ("5\n1 2 3\n", 1, "is not a display's"),
    ])
    func badRows(_ text: String, _ line: Int, _ message: String) {
        do {
            _ = try read(text)
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test("Detection: a first line that is a whole number alone; nothing else is taken for this format")
    func detection() {
        #expect(TraceFormat.detect(prefix: Array("16666667\n1 2 3\n".utf8)) == .surfaceFlingerLatency)
        #expect(TraceFormat.detect(prefix: Array("16666667\n".utf8)) == .surfaceFlingerLatency)
        #expect(TraceFormat.detect(prefix: Array("16666667".utf8)) == .csv)
        #expect(TraceFormat.detect(prefix: Array("timestamp\n1\n".utf8)) == .csv)
        #expect(TraceFormat.detect(prefix: Array("1.5\n1 2 3\n".utf8)) == .csv)
        #expect(TraceFormat.detect(prefix: Array("{\"ticks\": []}".utf8)) == .json)
    }
}
