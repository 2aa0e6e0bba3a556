import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// `dumpsys gfxinfo <package> framestats`: the `---PROFILEDATA---` blocks. No real dump
/// under a licence that allows a copy was found (../shared/corpus/SOURCES.md, "Not found"),
/// so these fixtures follow AOSP's column names (`FrameInfo.cpp`) and the layout Android's
/// documentation gives: a header, one row per frame, a comma after every field.
@Suite("Trace readers: gfxinfo framestats")
struct GfxinfoFramestatsTests {
    func analyze(_ text: String) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        var source = MemoryByteSource(text, chunkSize: 61)
        var notes: [String] = []
        let report = try TraceReader(file: "framestats.txt").analyze(from: &source, note: { notes.append($0) })
        return (report, notes)
    }

    static let classicColumns = "Flags,IntendedVsync,Vsync,OldestInputEvent,NewestInputEvent,HandleInputStart,AnimationStart,PerformTraversalsStart,DrawStart,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted,DequeueBufferDuration,QueueBufferDuration,GpuCompleted,"

    /// A classic row (Android 6–11) of a frame `milliseconds` long, starting at `start` ns.
    static func classicRow(flags: Int = 0, start: Int64, milliseconds: Double) -> String {
        let completed = start + Int64(milliseconds * 1_000_000)
        let middle = (0..<8).map { _ in String(start + 1_000) }
        return ([String(flags), String(start), String(start), "9223372036854775807", "0"] + middle + [String(completed), "120000", "80000", String(completed)]).joined(separator: ",") + ","
    }

    static var classicDump: String {
        let durations = [9.0, 9, 9, 40, 9]
        var rows: [String] = []
        for (index, duration) in durations.enumerated() { rows.append(classicRow(start: 10_000_000_000 + Int64(index) * 50_000_000, milliseconds: duration)) }
        rows.insert(classicRow(flags: 1, start: 9_000_000_000, milliseconds: 300), at: 2)
        return """
        Applications Graphics Acceleration Info:
        Uptime: 8172838 Realtime: 8172838

        ** Graphics info for pid 4242 [com.example.list] **

        Stats since: 8050394512ns
        Total frames rendered: 5
        Janky frames: 1 (20.00%)
        50th percentile: 9ms
        90th percentile: 40ms
        95th percentile: 40ms
        99th percentile: 40ms
        HISTOGRAM: 5ms=0 6ms=0 7ms=0 8ms=0 9ms=4 40ms=1

        ---PROFILEDATA---
        \(classicColumns)
        \(rows.joined(separator: "\n"))
        ---PROFILEDATA---

        View hierarchy:
        """
    }

    @Test("Classic columns: each valid row is a frame of FrameCompleted − IntendedVsync; a flagged row is skipped and counted; the histogram stays as gfxinfo's figures")
    func classic() throws {
        let (report, notes) = try analyze(Self.classicDump)
        #expect(report.whole.frames == 5)
        #expect(report.whole.slowFrames == 1, "the 40 ms frame missed refreshes at 60 Hz")
        #expect(report.whole.maxFrameDuration == 0.040)
        #expect(report.toolFigures.first { $0.label == "PROFILEDATA frames" }?.value == 5)
        #expect(report.toolFigures.first { $0.label == "Janky frames" }?.value == 1)
        #expect(notes.contains("frames from the 5 PROFILEDATA rows (their exact times); the HISTOGRAM's 5 frames are shown as gfxinfo's figures"))
        #expect(notes.contains("skipped 1 PROFILEDATA row whose Flags are not 0 (not frames by HWUI's rules)"))
        #expect(notes.contains { $0.contains("measured at 60 Hz") }, "no FrameInterval column: 60 Hz, said")
    }

    @Test("Android 12+ columns in a new order: FrameInterval gives 120 Hz, FrameDeadline marks the late frame, and no HISTOGRAM is needed")
    func android12() throws {
        let header = "Flags,FrameTimelineVsyncId,IntendedVsync,Vsync,InputEventId,HandleInputStart,AnimationStart,PerformTraversalsStart,DrawStart,FrameDeadline,FrameStartTime,FrameInterval,WorkloadTarget,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted,DequeueBufferDuration,QueueBufferDuration,GpuCompleted,SwapBuffersCompleted,DisplayPresentTime,CommandSubmissionCompleted,"
        var rows: [String] = []
        for index in 0..<11 {
            let start: Int64 = 20_000_000_000 + Int64(index) * 8_333_333
            let duration: Int64 = index == 5 ? 20_000_000 : 7_000_000
            let completed = start + duration
            let fields: [Int64] = [0, 700 + Int64(index), start, start, 0, start, start, start, start, start + 16_666_666, start, 8_333_333, 8_333_333,
                                   start, start, start, start, completed, 100_000, 50_000, completed, completed, 0, completed]
            rows.append(fields.map(String.init).joined(separator: ",") + ",")
        }
        let dump = "** Graphics info for pid 77 [com.example.feed] **\n---PROFILEDATA---\n\(header)\n\(rows.joined(separator: "\n"))\n---PROFILEDATA---\n"
        let (report, notes) = try analyze(dump)
        #expect(report.whole.frames == 11)
        #expect(report.whole.refreshRates.entries.map(\.key) == [120])
        #expect(report.toolFigures.first { $0.label == "PROFILEDATA frames past FrameDeadline" }?.value == 1)
        #expect(report.whole.slowFrames == 1, "20 ms is more than 1.5 intervals at 120 Hz")
        #expect(notes.isEmpty, "\(notes)")
    }

    @Test("Broken blocks are errors naming the line", arguments: [
        ("Flags,IntendedVsync,Vsync,", "no Flags, IntendedVsync or FrameCompleted"),
        (classicColumns + "\n0,1,2,", "has 3 fields"),
        (classicColumns + "\n" + classicRow(start: 5_000_000_000, milliseconds: -3), "is not 0 to 1,000 s after IntendedVsync"),
        (classicColumns + "\n" + classicRow(start: 5_000_000_000, milliseconds: 5).replacingOccurrences(of: "9223372036854775807", with: "x").replacingOccurrences(of: "5000000000,5000000000", with: "five,5000000000"), "must be whole numbers"),
    ])
    func broken(_ block: String, _ message: String) {
        let dump = "** Graphics info for pid 1 [x] **\n---PROFILEDATA---\n\(block)\n---PROFILEDATA---\n"
        #expect {
            try analyze(dump)
        } throws: { error in
            let error = error as? TraceError
            return error?.kind == .data && error?.line != nil && error?.message.contains(message) == true
        }
    }
}
