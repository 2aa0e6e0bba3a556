import FramescopeCore
import FramescopeTraces
import Testing

/// Issue 14, items 16 and 17: a bad tick costs one tick, and a missing rate is inferred
/// where the ticks make it unambiguous.
@Suite("Faulty traces")
struct HostileTraceTests {
    func analyze(_ text: String) throws(TraceError) -> RecordingReport {
        var source = MemoryByteSource(text)
        return try TraceReader(file: "t.csv").analyze(from: &source)
    }

    /// `count` ticks at `hz` from 0, one line each, with no target, with `extra` lines after tick `at`.
    func csv(hz: Double, count: Int, insert extra: String = "", at position: Int = -1) -> String {
        var lines = ["timestamp,targetTimestamp"]
        for index in 0..<count {
            lines.append("\(Double(index) / hz),")
            if index == position { lines.append(extra) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("A NaN timestamp in a CSV without a declared rate is one rejected tick; every good tick is kept")
    func nanTick() throws {
        let report = try analyze(csv(hz: 60, count: 61, insert: "nan,", at: 5))
        #expect(report.whole.rejectedTicks == 1)
        #expect(report.whole.frames == 59)  // 60 intervals, the first counted apart
        #expect(report.inferredRefreshRate == 60)
        #expect(report.whole.droppedFrames == 0)
    }

    @Test("Without targets or a declared rate, twenty steady intervals give the rate, and earlier ticks are measured with it", arguments: [50.0, 60, 120])
    func inferred(hz: Double) throws {
        // A drop of two frames after tick 3, then steady.
        var lines = ["timestamp,targetTimestamp"]
        var t = 0.0
        for index in 0..<40 {
            lines.append("\(t),")
            t += index == 3 ? 3 / hz : 1 / hz
        }
        let report = try analyze(lines.joined(separator: "\n") + "\n")
        #expect(report.inferredRefreshRate == hz)
        #expect(report.whole.droppedFrames == 2)
        #expect(report.whole.dropEvents == 1)
    }

    @Test("Too few steady intervals: the file is refused, naming the first tick without a target")
    func tooFew() {
        #expect(throws: TraceError.self) { try analyze(csv(hz: 60, count: 10)) }
        do {
            _ = try analyze(csv(hz: 60, count: 10))
        } catch {
            #expect(error.description.contains("t.csv:2"))
            #expect(error.description.contains("steady intervals"))
        }
    }

    @Test("A declared rate still wins, and nothing is said to be inferred")
    func declaredRate() throws {
        let report = try analyze("# refreshRate=60\n" + csv(hz: 60, count: 30))
        #expect(report.inferredRefreshRate == nil)
        #expect(report.whole.frames == 28)
    }
}
