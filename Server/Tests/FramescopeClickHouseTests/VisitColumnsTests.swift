import FramescopeClickHouse
import FramescopeClickHouseTesting
import FramescopeCollector
import FramescopeCore
import FramescopeSimulation
import Testing

/// The `event_*` layout without a server: what the engine's element-wise sums, minima,
/// maxima, `sumMap` and code sets give for a group of visits, decoded, equals the Swift
/// merge of the visits' ``RollupValue``s.
@Suite("Visit columns")
struct VisitColumnsTests {
    /// Simulated visits: smooth and janky, with and without motion, at 60 and 120 Hz.
    static func visits() -> [ScreenVisitEvent] {
        (0..<6).map { index in
            var workload = SyntheticWorkload(profile: index % 2 == 0 ? .moderate : .heavy, duration: 4 + Double(index), seed: UInt64(index + 1))
            let report = PipelineSimulator(display: .fixed(hz: index < 3 ? 60 : 120), seed: UInt64(index + 1)).run(&workload).analyze()
            return ScreenVisitEvent(screen: "Feed", startedAt: "2026-11-20T10:00:00Z", duration: report.whole.duration + 1,
                                    context: VisitContext(network: .wifi, lowPowerMode: false),
                                    report: report.whole, motion: index == 4 ? nil : report.motion)
        }
    }

    /// The engine's merge of `columns` (rows of any layouts, so arrays of any lengths), done
    /// here element by element as `sumForEach`, `minForEach`, `maxForEach`, `sumMap` and
    /// `argMinIf` (the band of the first row with frames) do.
    static func engineMerged(_ columns: [VisitColumns]) -> VisitColumns {
        func elementwise<T>(_ arrays: [[T]], _ combine: (T, T) -> T) -> [T] {
            var result: [T] = []
            for array in arrays {
                for (index, value) in array.enumerated() {
                    if index < result.count { result[index] = combine(result[index], value) } else { result.append(value) }
                }
            }
            return result
        }
        var tallies: [UInt64: UInt64] = [:]
        for column in columns { for (key, count) in zip(column.tallyKeys, column.tallyCounts) { tallies[key, default: 0] += count } }
        let keys = tallies.keys.sorted()
        return VisitColumns(counts: elementwise(columns.map(\.counts), +), sums: elementwise(columns.map(\.sums), +),
                            mins: elementwise(columns.map(\.mins), min), maxes: elementwise(columns.map(\.maxes), max),
                            tallyKeys: keys, tallyCounts: keys.map { tallies[$0] ?? 0 },
                            band: columns.first { $0.counts[1] + $0.counts[4] + $0.counts[16] > 0 }?.band ?? 0.2)
    }

    /// The engine's merge of `columns`, decoded.
    static func engineMerge(_ columns: [VisitColumns], devices: [UInt16]) throws -> RollupValue {
        let merged = engineMerged(columns)
        return try VisitColumns.value(counts: merged.counts, sums: merged.sums, mins: merged.mins, maxes: merged.maxes,
                                      tallyKeys: merged.tallyKeys, tallyCounts: merged.tallyCounts, deviceCodes: devices, band: merged.band)
    }

    @Test("One visit decodes to its own rollup value; a group decodes to the merge of the visits")
    func roundTrip() throws {
        let visits = Self.visits()
        let columns = try visits.map { try VisitColumns(visit: $0) }
        #expect(columns.allSatisfy { $0.counts.count == VisitColumns.Layout.current.counts.count && $0.sums.count == VisitColumns.Layout.current.sums.count })
        #expect(columns.allSatisfy { $0.mins.count == 2 && $0.maxes.count == 4 })
        for (visit, column) in zip(visits, columns) {
            #expect(try Self.engineMerge([column], devices: []) == RollupValue(visit: visit))
        }
        var expected = RollupValue()
        var codes: Set<UInt16> = []
        for (index, visit) in visits.enumerated() {
            let id = "device-\(index % 4)"
            expected.merge(RollupValue(visit: visit, installationId: id))
            let register = DeviceSketch.register(of: id)
            codes.insert(UInt16(register.index * 64) + UInt16(register.rank))
        }
        let merged = try Self.engineMerge(columns, devices: codes.sorted())
        #expect(merged.visits == expected.visits)
        #expect(merged.report == expected.report)
        #expect(merged.motion == expected.motion)
        #expect(merged.devices == expected.devices)
        // Sums of doubles may differ in their last bit with the order of addition; counts,
        // buckets and extremes may not.
        for metric in VisitMetric.allCases {
            let got = merged.statistics[metric]
            let want = expected.statistics[metric]
            #expect(got.visits == want.visits && got.zeroValues == want.zeroValues && got.positiveValues == want.positiveValues)
            for (a, b) in [(got.sumX, want.sumX), (got.sumY, want.sumY), (got.sumXX, want.sumXX), (got.sumYY, want.sumYY), (got.sumXY, want.sumXY)] {
                #expect(abs(a - b) <= 1e-12 * max(1, abs(b)))
            }
        }
    }

    @Test("Nanosecond totals past 2⁶⁴ ns survive the merge as whole seconds and the rest")
    func longTotals() throws {
        let visit = Self.visits()[0]
        let column = try VisitColumns(visit: visit)
        // 6·10⁹ copies of a visit of about 4 s: the duration sum passes 2⁶⁴ ns (584 years), which only the split form carries.
        let copies = 6_000_000_000 as UInt64
        var counts = column.counts.map { $0 * copies }
        counts[0] = copies
        let value = try VisitColumns.value(counts: counts, sums: column.sums.map { $0 * Double(copies) }, mins: column.mins, maxes: column.maxes,
                                           tallyKeys: column.tallyKeys, tallyCounts: column.tallyCounts.map { $0 * copies }, deviceCodes: [], band: column.band)
        #expect(value.report == RollupValue(visit: visit).repeated(Int(copies)).report)
        #expect(value.report.durationNanoseconds.high > 0, "the sum passed 2⁶⁴ ns")
    }

    @Test("Merged columns no visits could give are refused")
    func refused() throws {
        let column = try VisitColumns(visit: Self.visits()[1])
        var counts = column.counts
        counts[14] = counts[1] + 1   // more slow frames than frames
        #expect(throws: VisitColumnsError.self) {
            try VisitColumns.value(counts: counts, sums: column.sums, mins: column.mins, maxes: column.maxes, tallyKeys: column.tallyKeys,
                                   tallyCounts: column.tallyCounts, deviceCodes: [], band: 0.2)
        }
        #expect(throws: VisitColumnsError.self) {
            try VisitColumns.value(counts: column.counts, sums: column.sums, mins: column.mins, maxes: column.maxes, tallyKeys: column.tallyKeys,
                                   tallyCounts: column.tallyCounts, deviceCodes: [600 * 64 + 3], band: 0.2)
        }
    }
}
