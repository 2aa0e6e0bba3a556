import FramescopeCore
import FramescopeTraces
import Testing

/// A SurfaceFlinger `--latency` dump in which no frame reached the screen is a recording
/// with no frame: an error (the CLI's exit 65), not a report of nothing.
@Suite("Trace readers: SurfaceFlinger dumps without a presented frame")
struct SurfaceFlingerNoFrameTests {
    @Test("All pending, all 0 0 0, or the period alone: a data error that says what the rows were", arguments: [
        ("16666667\n1000000000\t9223372036854775807\t990000000\n1016666667\t9223372036854775807\t1005000000\n",
         "has no presented frame (2 frames not yet presented (pending fence))"),
        ("16666667\n0 0 0\n0 0 0\n0 0 0\n", "has no presented frame (3 rows of 0 0 0)"),
        ("16666667\n0\t0\t0\n1000000000\t9223372036854775807\t990000000\n", "has no presented frame (1 frame not yet presented (pending fence) and 1 row of 0 0 0)"),
        ("16666667\n", "has no presented frame (only the refresh period)"),
    ])
    func noPresentedFrame(text: String, message: String) {
        var source = MemoryByteSource(text, chunkSize: 5)
        do {
            _ = try TraceReader(file: "sf.txt").analyze(from: &source)
            Issue.record("a dump without a presented frame gave a report")
        } catch {
            #expect(error.kind == .data)
            #expect(error.line == nil)
            #expect(error.message.hasPrefix(message), "\(error.message)")
            #expect(error.message.contains("adb shell dumpsys SurfaceFlinger --latency"))
        }
    }

    @Test("One presented frame among pending ones is a recording: its report, and the notes")
    func onePresented() throws {
        var source = MemoryByteSource("16666667\n1000000000\t1000000000\t990000000\n1016666667\t9223372036854775807\t1005000000\n")
        var notes: [String] = []
        var ticks = 0
        try TraceReader(file: "sf.txt").read(from: &source, note: { notes.append($0) }) { event, _ in
            if case .tick = event { ticks += 1 }
        }
        #expect(ticks == 1)
        #expect(notes == ["skipped 1 frame not yet presented (pending fence)"])
    }
}
