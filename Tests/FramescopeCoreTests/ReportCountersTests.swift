import FramescopeCore
import Testing

/// The report's counters are listed once (``FrameReport/counters``): their order, ids and
/// kinds are pinned, and the binary form built from the table is byte for byte version 1.
@Suite("Report counters")
struct ReportCountersTests {
    /// A report with every counter above zero and distinct, in the binary form of version 1 as
    /// commit 8fee672 wrote it (before the table existed; the whole report of the hand-made
    /// visit in Tests/FramescopeClickHouseTests/Fixtures/visit-columns-v1.json).
    static let everyCounterHex = "0178d4a888c30a02c0f0f50b40022faa95d0fc030280d6c28c04010101001111111111813f9a9999999999e93f9a9999999999c93f04c4061d40598802015a01026401a82d01023c5b3c1d"

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0 }
    }

    @Test("The table: thirteen counters in the binary form's order, with permanent ids and kinds")
    func table() {
        let expected: [(Int, String, FrameReport.Counter.Kind)] = [
            (1, "frames", .count), (2, "durationNanoseconds", .nanoseconds), (3, "firstFrames", .count),
            (4, "firstDurationNanoseconds", .nanoseconds), (5, "droppedFrames", .count), (6, "dropEvents", .count),
            (7, "maxDroppedFrames", .maximum), (8, "hitchTimeNanoseconds", .nanoseconds), (9, "hangs", .count),
            (10, "hangTimeNanoseconds", .nanoseconds), (11, "slowFrames", .count), (12, "frozenFrames", .count), (13, "rejectedTicks", .count),
        ]
        #expect(FrameReport.counters.count == expected.count, "a counter appended needs a new binary version: see FrameReport.counters")
        for (counter, (id, name, kind)) in zip(FrameReport.counters, expected) {
            #expect(counter.id == id && counter.name == name && counter.kind == kind, "\(counter)")
            #expect(FrameReport.counter(id: id) == counter)
        }
        #expect(FrameReport.counter(id: 14) == nil)
    }

    @Test("Binary version 1 bytes written before the table decode to the same fields and encode to the same bytes")
    func binaryVersion1() throws {
        let bytes = Self.bytes(Self.everyCounterHex)
        let report = try FrameReport(binary: bytes)
        #expect(report.frames == 120)
        #expect(report.durationNanoseconds == 2_825_000_020)
        #expect(report.firstFrames == 2)
        #expect(report.firstDurationNanoseconds == 25_000_000)
        #expect(report.droppedFrames == 64)
        #expect(report.dropEvents == 2)
        #expect(report.maxDroppedFrames == 47)
        #expect(report.hitchTimeNanoseconds == 1_066_666_666)
        #expect(report.hangs == 2)
        #expect(report.hangTimeNanoseconds == 1_100_000_000)
        #expect(report.slowFrames == 1)
        #expect(report.frozenFrames == 1)
        #expect(report.rejectedTicks == 1)
        #expect(report.maxFrameDuration == 0.8)
        #expect(report.binaryEncoded() == bytes)
    }

    @Test("Each counter reads and writes its own field, in a report and in stored sums")
    func fields() throws {
        let report = try FrameReport(binary: Self.bytes(Self.everyCounterHex))
        let named: [String: Int] = [
            "frames": report.frames, "firstFrames": report.firstFrames, "droppedFrames": report.droppedFrames, "dropEvents": report.dropEvents,
            "maxDroppedFrames": report.maxDroppedFrames, "hangs": report.hangs, "slowFrames": report.slowFrames,
            "frozenFrames": report.frozenFrames, "rejectedTicks": report.rejectedTicks,
        ]
        let totals: [String: NanosecondTotal] = [
            "durationNanoseconds": report.durationNanoseconds, "firstDurationNanoseconds": report.firstDurationNanoseconds,
            "hitchTimeNanoseconds": report.hitchTimeNanoseconds, "hangTimeNanoseconds": report.hangTimeNanoseconds,
        ]
        var sums = FrameReport.StoredSums()
        for counter in FrameReport.counters {
            switch counter.kind {
            case .count, .maximum:
                #expect(report[count: counter] == named[counter.name], "\(counter)")
                sums[count: counter] = report[count: counter]
                #expect(sums[count: counter] == named[counter.name], "\(counter)")
            case .nanoseconds:
                #expect(report[nanoseconds: counter] == totals[counter.name], "\(counter)")
                sums[nanoseconds: counter] = report[nanoseconds: counter]
                #expect(sums[nanoseconds: counter] == totals[counter.name], "\(counter)")
            }
        }
        #expect(sums.frames == 120 && sums.maxDroppedFrames == 47 && sums.hangTimeNanoseconds == 1_100_000_000 && sums.rejectedTicks == 1)
        sums.minFrameDuration = report.minFrameDuration
        sums.maxFrameDuration = report.maxFrameDuration
        sums.frameDurations = report.frameDurations
        sums.windowFPS = report.windowFPS
        sums.refreshRates = report.refreshRates
        sums.stabilityBand = report.stabilityBand
        #expect(try FrameReport(storedSums: sums) == report)
    }
}
