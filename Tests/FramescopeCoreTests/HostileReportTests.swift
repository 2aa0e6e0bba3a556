import Foundation
@testable import FramescopeCore
import Testing

/// Issue 14, items 1, 2, 16 and 17: counts from outside are checked against physics
/// before anything adds them, fleet sums cannot overflow, tallies are bounded and merge
/// linearly, and bad ticks are counted instead of failing a recording.
@Suite("Hostile reports and ticks")
struct HostileReportTests {
    /// A consistent one-visit report: `seconds` at 60 Hz with a few drops.
    func report(seconds: Double = 10) -> FrameReport {
        var analyzer = FrameAnalyzer(configuration: AnalyzerConfiguration(refreshInterval: 1.0 / 60))
        var t = 0.0
        var index = 0
        while t < seconds {
            analyzer.recordTick(timestamp: t, targetTimestamp: nil, refreshInterval: nil)
            t += index % 50 == 49 ? 3.0 / 60 : 1.0 / 60
            index += 1
        }
        return analyzer.report().whole
    }

    /// `report`'s JSON object with `edit` applied.
    func editedJSON(_ report: FrameReport, _ edit: (inout [String: Any]) -> Void) throws -> Data {
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        edit(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test("Counts near Int.max in a JSON report are refused with the field named, not a trap",
          arguments: ["slowFrames", "frozenFrames", "droppedFrames", "dropEvents", "hangs", "maxDroppedFrames", "frames"])
    // rejectedTicks is not bounded by the report's duration (ticks can be refused at any
    // rate); it only saturates when merged, and the collector bounds it by the visit's duration.
    func hugeCountsInJSON(field: String) throws {
        let data = try editedJSON(report()) { $0[field] = Int.max }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FrameReport.self, from: data) }
    }

    @Test("slowFrames = frozenFrames = Int.max: the old sum trapped; now the report is refused")
    func slowPlusFrozen() throws {
        let data = try editedJSON(report()) { $0["slowFrames"] = Int.max; $0["frozenFrames"] = Int.max; $0["frames"] = Int.max }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FrameReport.self, from: data) }
    }

    @Test("A binary report with every counter at Int.max and dropEvents × maxDroppedFrames past Int.max is refused")
    func hugeCountsInBinary() throws {
        var writer = BinaryWriter()
        writer.bytes.append(FrameReport.binaryVersion)
        let huge = UInt64(Int.max)
        writer.unsigned(huge)                     // frames
        writer.total(NanosecondTotal(high: 1, low: 0))  // duration: 2^64 ns
        writer.unsigned(0); writer.total(.zero)   // first frames
        writer.unsigned(huge); writer.unsigned(huge); writer.unsigned(huge)  // dropped, events, max
        writer.total(.zero)
        writer.unsigned(0); writer.total(.zero)   // hangs
        writer.unsigned(huge); writer.unsigned(huge); writer.unsigned(0)
        writer.double(0.01); writer.double(0.02); writer.double(0.2)
        writer.pairs([(100, Int.max)])
        writer.pairs([])
        writer.pairs([(60, Int.max)])
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: writer.bytes) }
    }

    @Test("Physics: more frames than 1,000 per second of duration, tally keys out of range and times past duration are refused")
    func physics() throws {
        let base = report()
        let cases: [(String, (inout [String: Any]) -> Void)] = [
            ("frames", { $0["duration"] = 0.01 }),
            ("refreshRates", { $0["refreshRates"] = ["5000": base.frames] }),
            ("hitchTime", { $0["hitchTime"] = 1e6 }),
            ("windowFPS", { object in
                var histograms = object["histograms"] as? [String: Any] ?? [:]
                histograms["windowFPS"] = [[2000.0, 3]]
                object["histograms"] = histograms
            }),
        ]
        for (field, edit) in cases {
            let data = try editedJSON(base, edit)
            #expect(throws: DecodingError.self, "\(field)") { try JSONDecoder().decode(FrameReport.self, from: data) }
        }
    }

    @Test("Reports of 2^62 frames each merge without a trap: counts saturate, 128-bit times stay exact")
    func fleetScaleMerge() throws {
        var huge = report()
        huge.frames = 1 << 62
        huge.durationNanoseconds = NanosecondTotal(high: 1 << 10, low: 0)  // 2^74 ns, about 600,000 years
        var merged = huge
        merged.merge(huge)
        merged.merge(huge)
        #expect(merged.frames == Int.max)
        #expect(merged.durationNanoseconds == NanosecondTotal(high: 3 << 10, low: 0))
        #expect(merged.averageFPS.map { $0 > 0 && $0.isFinite } == true)
    }

    @Test("A month of a large fleet (about 1M users × 10 min/day × 30 days, 584 years) sums exactly past Int64")
    func largeFleetDuration() {
        let tenMinutes = NanosecondTotal(600_000_000_000 as UInt64)
        var users = NanosecondTotal.zero
        for _ in 0..<1_000 { users += tenMinutes }   // 1,000 users' day
        for _ in 0..<10 { users += users }            // 1,024,000 users' day
        var month = NanosecondTotal.zero
        for _ in 0..<30 { month += users }
        #expect(month.int64Value == nil)
        #expect(month.description == "18432000000000000000")
        #expect(abs(month.seconds / (365.25 * 86_400) - 584.07) < 0.01)
        var twoMonths = month
        twoMonths += month
        #expect(twoMonths.high == 1)
        #expect(twoMonths.description == "36864000000000000000")
    }

    @Test("NanosecondTotal: carries, saturates at max, and round-trips through the binary form beside 64-bit varints")
    func nanosecondTotal() throws {
        let almost = NanosecondTotal(UInt64.max)
        #expect(almost + NanosecondTotal(1 as UInt64) == NanosecondTotal(high: 1, low: 0))
        #expect(NanosecondTotal.max + NanosecondTotal(1 as UInt64) == .max)
        var added = NanosecondTotal(high: .max, low: .max - 1)
        added.add(5)
        #expect(added == .max)
        for value in [NanosecondTotal.zero, NanosecondTotal(127 as UInt64), NanosecondTotal(UInt64.max), NanosecondTotal(high: 1, low: 0),
                      NanosecondTotal(high: 0x7F, low: 12345), .max] {
            var writer = BinaryWriter()
            writer.total(value)
            var reader = BinaryReader(bytes: writer.bytes)
            #expect(try reader.total() == value)
            if value.high == 0 {
                var plain = BinaryWriter()
                plain.unsigned(value.low)
                #expect(plain.bytes == writer.bytes, "a total below 2^64 is written as the 64-bit varint it was in version 1")
            }
        }
        var tooLong = BinaryReader(bytes: [UInt8](repeating: 0xFF, count: 19) + [0x01])
        #expect(throws: BinaryReportError.self) { try tooLong.total() }
        #expect(NanosecondTotal(seconds: 1e20)?.seconds == 1e20)
        #expect(NanosecondTotal(seconds: -1) == nil)
        #expect(NanosecondTotal(seconds: .nan) == nil)
    }

    @Test("Tally merge is one linear pass: two tallies of 200,000 disjoint keys merge exactly")
    func linearTallyMerge() throws {
        let left = try Tally(entries: (0..<200_000).map { Tally.Entry(key: 2 * $0, count: 1) })
        let right = try Tally(entries: (0..<200_000).map { Tally.Entry(key: 2 * $0 + 1, count: 2) })
        let merged = left.merging(right)
        #expect(merged.entries.count == 400_000)
        #expect(merged.total == 600_000)
        #expect(merged.entries.map(\.key) == Array(0..<400_000))
        var saturating = try Tally(entries: [Tally.Entry(key: 1, count: Int.max)])
        saturating.merge(saturating)
        #expect(saturating.total == Int.max)
        #expect(Tally(counting: [(5, 2), (1, 1), (5, 3), (2, 0)]).entries == [Tally.Entry(key: 1, count: 1), Tally.Entry(key: 5, count: 5)])
    }

    @Test("Ticks whose target is under 1 ms or over 1 s ahead, or that jump 10^6 s, are rejected and counted; huge timestamps do not trap")
    func physicalTicks() {
        var analyzer = FrameAnalyzer(configuration: AnalyzerConfiguration())
        #expect(analyzer.recordTick(timestamp: 0, targetTimestamp: 0.0001, refreshInterval: nil) == .rejected(.invalidTarget))
        #expect(analyzer.recordTick(timestamp: 0, targetTimestamp: 5, refreshInterval: nil) == .rejected(.invalidTarget))
        #expect(analyzer.recordTick(timestamp: 0, targetTimestamp: nil, refreshInterval: 1e-5) == .rejected(.invalidTarget))
        #expect(analyzer.recordTick(timestamp: 0, targetTimestamp: 1.0 / 60, refreshInterval: nil) == .started)
        #expect(analyzer.recordTick(timestamp: 2e6, targetTimestamp: 2e6 + 0.5, refreshInterval: nil) == .rejected(.gapTooLong))
        #expect(analyzer.recordTick(timestamp: 1e300, targetTimestamp: nil, refreshInterval: 1.0 / 60) == .rejected(.gapTooLong))
        #expect(analyzer.recordTick(timestamp: 2.0 / 60, targetTimestamp: 3.0 / 60, refreshInterval: nil) != .rejected(.gapTooLong))
        let report = analyzer.report().whole
        #expect(report.rejectedTicks == 5)
        #expect(report.inconsistency == nil)
    }
}

@Suite("Wire text")
struct WireTextTests {
    @Test("Names are limited in UTF-8 bytes and refuse control, format and separator scalars; combining marks and markup characters are text")
    func rule() {
        #expect(WireText.problem(in: "Feed", maximumBytes: 128) == nil)
        #expect(WireText.problem(in: "<b>\"\u{301}é日本", maximumBytes: 128) == nil)
        #expect(WireText.problem(in: "", maximumBytes: 128) == "must not be empty")
        #expect(WireText.problem(in: "", maximumBytes: 128, allowEmpty: true) == nil)
        #expect(WireText.problem(in: "a" + String(repeating: "\u{301}", count: 64), maximumBytes: 128)?.contains("129") == true)
        for (scalar, kind) in [("\u{202E}", "format"), ("\u{600}", "format"), ("\u{200B}", "format"), ("\u{7}", "control"),
                               ("\n", "control"), ("\u{2028}", "separator"), ("\u{E000}", "private-use")] {
            #expect(WireText.problem(in: "x" + scalar, maximumBytes: 128)?.contains(kind) == true, "\(scalar.unicodeScalars.first!.value)")
        }
    }

    @Test("sanitized removes refused scalars and cuts at a scalar boundary within the byte limit")
    func sanitized() {
        #expect(WireText.sanitized("Feed\u{202E}\n", maximumBytes: 128, fallback: "?") == "Feed")
        #expect(WireText.sanitized("\u{202E}", maximumBytes: 128, fallback: "(unnamed)") == "(unnamed)")
        let cut = WireText.sanitized(String(repeating: "é", count: 100), maximumBytes: 9, fallback: "?")
        #expect(cut.utf8.count == 8 && WireText.isValid(cut, maximumBytes: 9))
    }
}

@Suite("Physics holds for merges")
struct PhysicsMergeTests {
    @Test("Reports at the edge of every bound merge into a report that is still consistent (the bounds are additive)")
    func edgeReportsMerge() throws {
        // One frame of exactly the shortest refresh allowed: frames × 999,000 ns = duration.
        var edge = FrameReport()
        edge.frames = 1
        edge.durationNanoseconds = NanosecondTotal(999_000 as UInt64)
        edge.minFrameDuration = 0.000_999
        edge.maxFrameDuration = 0.000_999
        edge.frameDurations.record(seconds: 0.000_999)
        edge.refreshRates.add(1000)
        #expect(edge.inconsistency == nil)
        var merged = FrameReport()
        for _ in 0..<1000 { merged.merge(edge) }
        #expect(merged.inconsistency == nil)
        var tooShort = edge
        tooShort.durationNanoseconds = NanosecondTotal(998_999 as UInt64)
        tooShort.minFrameDuration = 0.000_998_999
        tooShort.maxFrameDuration = 0.000_998_999
        #expect(tooShort.inconsistency?.field == "frames")
    }

    @Test("A saturated histogram still answers a quantile instead of trapping")
    func saturatedQuantile() throws {
        var histogram = try DurationHistogram(buckets: [DurationHistogram.Bucket(index: 900, count: Int.max)])
        histogram.merge(histogram)
        #expect(histogram.value(atQuantile: 1) != nil)
        #expect(histogram.value(atQuantile: 0.5) != nil)
    }
}
