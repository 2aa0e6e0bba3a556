import FramescopeClickHouse
import FramescopeClickHouseTesting
import FramescopeCollector
import FramescopeCore
import Testing

/// The `event_*` arrays are laid out by a frozen table of storage ids: layout v1 is pinned
/// here element by element, the current layout stores every figure of this build, and a
/// statistic added later (a fake sixth one, declared only in this test target) leaves every
/// row already stored reading as it did.
@Suite("Visit columns: the frozen layout")
struct VisitColumnsLayoutTests {
    typealias Layout = VisitColumns.Layout

    /// Layout v1 as docs/dev-notes/clickhouse-schema.md's table gives it ("Layout of the
    /// event arrays"): what every release wrote until issue 31. Never edit.
    static let v1Table = """
        layout v1
        counts[0]  visits
        counts[1]  whole frames (1)
        counts[2]  whole durationNanoseconds (2), whole seconds
        counts[3]  whole durationNanoseconds (2), nanoseconds left
        counts[4]  whole firstFrames (3)
        counts[5]  whole firstDurationNanoseconds (4), whole seconds
        counts[6]  whole firstDurationNanoseconds (4), nanoseconds left
        counts[7]  whole droppedFrames (5)
        counts[8]  whole dropEvents (6)
        counts[9]  whole hitchTimeNanoseconds (8), whole seconds
        counts[10]  whole hitchTimeNanoseconds (8), nanoseconds left
        counts[11]  whole hangs (9)
        counts[12]  whole hangTimeNanoseconds (10), whole seconds
        counts[13]  whole hangTimeNanoseconds (10), nanoseconds left
        counts[14]  whole slowFrames (11)
        counts[15]  whole frozenFrames (12)
        counts[16]  whole rejectedTicks (13)
        counts[17]  motion visits
        counts[18]  motion frames (1)
        counts[19]  motion durationNanoseconds (2), whole seconds
        counts[20]  motion durationNanoseconds (2), nanoseconds left
        counts[21]  motion firstFrames (3)
        counts[22]  motion firstDurationNanoseconds (4), whole seconds
        counts[23]  motion firstDurationNanoseconds (4), nanoseconds left
        counts[24]  motion droppedFrames (5)
        counts[25]  motion dropEvents (6)
        counts[26]  motion hitchTimeNanoseconds (8), whole seconds
        counts[27]  motion hitchTimeNanoseconds (8), nanoseconds left
        counts[28]  motion hangs (9)
        counts[29]  motion hangTimeNanoseconds (10), whole seconds
        counts[30]  motion hangTimeNanoseconds (10), nanoseconds left
        counts[31]  motion slowFrames (11)
        counts[32]  motion frozenFrames (12)
        counts[33]  motion rejectedTicks (13)
        counts[34]  statistic 1 visits
        counts[35]  statistic 2 visits
        counts[36]  statistic 3 visits
        counts[37]  statistic 4 visits
        counts[38]  statistic 5 visits
        counts[39]  statistic 1 zero values
        counts[40]  statistic 2 zero values
        counts[41]  statistic 3 zero values
        counts[42]  statistic 4 zero values
        counts[43]  statistic 5 zero values
        sums[0]  statistic 1 Σx
        sums[1]  statistic 1 Σy
        sums[2]  statistic 1 Σxx
        sums[3]  statistic 1 Σyy
        sums[4]  statistic 1 Σxy
        sums[5]  statistic 2 Σx
        sums[6]  statistic 2 Σy
        sums[7]  statistic 2 Σxx
        sums[8]  statistic 2 Σyy
        sums[9]  statistic 2 Σxy
        sums[10]  statistic 3 Σx
        sums[11]  statistic 3 Σy
        sums[12]  statistic 3 Σxx
        sums[13]  statistic 3 Σyy
        sums[14]  statistic 3 Σxy
        sums[15]  statistic 4 Σx
        sums[16]  statistic 4 Σy
        sums[17]  statistic 4 Σxx
        sums[18]  statistic 4 Σyy
        sums[19]  statistic 4 Σxy
        sums[20]  statistic 5 Σx
        sums[21]  statistic 5 Σy
        sums[22]  statistic 5 Σxx
        sums[23]  statistic 5 Σyy
        sums[24]  statistic 5 Σxy
        mins[0]  whole shortest frame, s
        mins[1]  motion shortest frame, s
        maxes[0]  whole longest frame, s
        maxes[1]  motion longest frame, s
        maxes[2]  whole maxDroppedFrames (7)
        maxes[3]  motion maxDroppedFrames (7)
        tallies kind 0  whole windowFPS
        tallies kind 2  whole refreshRates
        tallies kind 4  whole frameDurations
        tallies kind 1  motion windowFPS
        tallies kind 3  motion refreshRates
        tallies kind 5  motion frameDurations
        tallies kind 6  statistic 1 positive values
        tallies kind 7  statistic 2 positive values
        tallies kind 8  statistic 3 positive values
        tallies kind 9  statistic 4 positive values
        tallies kind 10  statistic 5 positive values
        """

    /// A layout as a release adding a sixth statistic (storage id 6) would declare it.
    static let withSixth = Layout.v1.appending(version: 2,
                                               counts: [.statisticVisits(6), .statisticZeroValues(6)],
                                               sums: VisitColumns.StatisticSum.allCases.map { .statisticSum(6, $0) },
                                               tallies: [VisitColumns.TallyKind(.statisticValues(6), kind: 11)])

    /// The fake sixth statistic: slow frames per 1 000 frames.
    static func sixth(of report: FrameReport) -> RatioStatistics {
        var statistics = RatioStatistics()
        if report.frames > 0 { statistics.add(numerator: Double(report.slowFrames) * 1000, denominator: Double(report.frames)) }
        return statistics
    }

    /// A row written by the release with the sixth statistic for `visits`.
    static func rowWithSixth(_ visits: [ScreenVisitEvent]) throws -> (columns: VisitColumns, value: RollupValue, sixth: RatioStatistics) {
        var value = RollupValue()
        var sixth = RatioStatistics()
        for visit in visits {
            value.merge(RollupValue(visit: visit))
            sixth.merge(Self.sixth(of: visit.report))
        }
        var contents = VisitColumns.Contents(value)
        contents.statistics[6] = sixth
        return (try VisitColumns(contents: contents, layout: withSixth), value, sixth)
    }

    /// The fixture's arrays of v1 rows.
    static func storedRows() throws -> [(name: String, columns: VisitColumns, value: RollupValue)] {
        let fixture = try VisitColumnsFixtureTests.load(VisitColumnsFixtureTests.v1)
        return try fixture.cases.map { stored in
            let columns = VisitColumns(counts: stored.counts, sums: try stored.sums.map(VisitColumnsFixtureTests.double),
                                       mins: try stored.mins.map(VisitColumnsFixtureTests.double), maxes: try stored.maxes.map(VisitColumnsFixtureTests.double),
                                       tallyKeys: stored.tallyKeys, tallyCounts: stored.tallyCounts, band: try VisitColumnsFixtureTests.double(stored.band))
            return (stored.name, columns, try VisitColumnsFixtureTests.value(of: stored.visits))
        }
    }

    /// Counts, buckets and extremes equal; the statistics' sums equal up to the order of addition.
    static func expectClose(_ got: RollupValue, _ want: RollupValue, _ comment: Comment) {
        #expect(got.visits == want.visits, comment)
        #expect(got.report == want.report, comment)
        #expect(got.motion == want.motion, comment)
        #expect(Set(got.statistics.metrics.keys) == Set(want.statistics.metrics.keys), comment)
        for metric in VisitMetric.allCases {
            expectClose(got.statistics[metric], want.statistics[metric], comment)
        }
    }

    static func expectClose(_ got: RatioStatistics, _ want: RatioStatistics, _ comment: Comment) {
        #expect(got.visits == want.visits && got.zeroValues == want.zeroValues && got.positiveValues == want.positiveValues, comment)
        for (a, b) in [(got.sumX, want.sumX), (got.sumY, want.sumY), (got.sumXX, want.sumXX), (got.sumYY, want.sumYY), (got.sumXY, want.sumXY)] {
            #expect(abs(a - b) <= 1e-12 * max(1, abs(b)), comment)
        }
    }

    @Test("Layout v1 is frozen element by element, and is what this release writes")
    func v1IsFrozen() {
        #expect(Layout.v1.description == Self.v1Table)
        #expect(Layout.current == Layout.v1)
        #expect(Layout.v1.counts.count == 44 && Layout.v1.sums.count == 25 && Layout.v1.mins.count == 2 && Layout.v1.maxes.count == 4)
    }

    @Test("The current layout stores every report counter and every VisitMetric; storage ids are unique")
    func currentCoversEveryFigure() {
        #expect(Layout.current.missingFigures == [])
        #expect(Set(VisitMetric.allCases.map(\.storageID)).count == VisitMetric.allCases.count)
        #expect(VisitMetric.allCases.allSatisfy { VisitMetric(storageID: $0.storageID) == $0 })
        #expect(VisitMetric(storageID: 6) == nil)
        #expect(Set(FrameReport.counters.map(\.id)).count == FrameReport.counters.count)
        // The sixth statistic is no VisitMetric of this build: a layout without it misses nothing else.
        #expect(Self.withSixth.missingFigures == [])
        #expect(Self.withSixth.statisticIDs == [1, 2, 3, 4, 5, 6])
    }

    @Test("The materialized views' band condition reads the whole report's frames, first frames and rejected ticks")
    func bandConditionPositions() throws {
        for (position, element) in Layout.bandConditionPositions {
            #expect(Layout.current.counts[position] == element)
        }
        let location = ClickHouseLocation(host: "127.0.0.1", database: "framescope")
        let statements = ClickHouseMigrator.migrations.flatMap { $0.statements(ClickHouseTopology(location: location)) }
        let condition = Layout.bandConditionPositions.map { "event_counts[\($0.position + 1)]" }.joined(separator: " + ") + " > 0"
        #expect(statements.contains { $0.contains(condition) })
    }

    @Test("Statistics' tally kinds and report distributions' kinds are disjoint; v1's kinds did not move")
    func tallyKinds() {
        for tally in Self.withSixth.tallies {
            if case .statisticValues(let id) = tally.distribution {
                #expect(Layout.statisticKinds.contains(tally.kind))
                if id <= 5 { #expect(tally.kind == UInt64(5 + id)) }
            } else {
                #expect(tally.kind < 6)
            }
        }
        #expect(Layout.reportKindsFrom >= Layout.statisticKinds.upperBound)
    }

    @Test("Rows written before a sixth statistic existed read the same in the layout that adds it")
    func oldRowsReadInNewLayout() throws {
        for row in try Self.storedRows() {
            let before = try row.columns.contents(layout: .v1)
            let after = try row.columns.contents(layout: Self.withSixth)
            #expect(after == before, "\(row.name)")
            #expect(after.statistics[6] == nil, "\(row.name)")
            #expect(try row.columns.rollupValue(layout: Self.withSixth) == row.value, "\(row.name)")
        }
    }

    @Test("Old rows and rows with a sixth statistic merged in the engine: the five add across both, the sixth counts only the new rows")
    func mixedRows() throws {
        let stored = try Self.storedRows()
        let old = stored[stored.count - 1]
        let newVisits = Array(VisitColumnsTests.visits()[2...3])
        let new = try Self.rowWithSixth(newVisits)
        #expect(new.columns.counts.count == 46 && new.columns.sums.count == 30)
        #expect(Array(new.columns.counts.prefix(44)) == (try VisitColumns(value: new.value)).counts, "v1's elements are where they were")
        var expected = old.value
        expected.merge(new.value)
        let merged = VisitColumnsTests.engineMerged([old.columns, new.columns])
        let contents = try merged.contents(layout: Self.withSixth)
        Self.expectClose(contents.rollupValue(), expected, "read by the release with the sixth statistic")
        let sixth = try #require(contents.statistics[6])
        Self.expectClose(sixth, new.sixth, "the sixth statistic")
        #expect(sixth.visits == newVisits.count)
        // A release without it (one rolled back to) reads the same rows, the sixth ignored.
        Self.expectClose(try merged.rollupValue(layout: .v1), expected, "read by the release before")
    }

    @Test("On a real server, states of v1 rows and of longer rows merge as the layout assumes")
    func engineMergesMixedLengths() async throws {
        let server = try await SharedClickHouse.shared.server()
        let client = ClickHouseClient(location: server.location(database: "default"))
        let stored = try Self.storedRows()
        let rows = [stored[0].columns, stored[stored.count - 1].columns, try Self.rowWithSixth(Array(VisitColumnsTests.visits()[2...3])).columns]
        func unsigned(_ values: [UInt64]) -> String { "CAST([\(values.map(String.init).joined(separator: ","))] AS Array(UInt64))" }
        func doubles(_ values: [Double]) -> String { "CAST([\(values.map { "\($0)" }.joined(separator: ","))] AS Array(Float64))" }
        let parts = rows.map { row in
            """
            SELECT sumForEachState(rc) AS c, sumForEachState(rs) AS s, minForEachState(rmi) AS mi, maxForEachState(rma) AS ma, sumMapState(rk, rv) AS t
            FROM (SELECT \(unsigned(row.counts)) AS rc, \(doubles(row.sums)) AS rs, \(doubles(row.mins)) AS rmi, \(doubles(row.maxes)) AS rma,
                         \(unsigned(row.tallyKeys)) AS rk, \(unsigned(row.tallyCounts)) AS rv)
            """
        }
        let answer = try await client.rows("""
            SELECT sumForEachMerge(c), sumForEachMerge(s), minForEachMerge(mi), maxForEachMerge(ma), sumMapMerge(t) AS m, tupleElement(m, 1), tupleElement(m, 2)
            FROM (\(parts.joined(separator: " UNION ALL ")))
            """)
        let row = try #require(answer.first)
        try #require(row.count == 7)
        func elements(_ text: String) -> [Substring] {
            let inner = text.drop { $0 == "[" }.prefix { $0 != "]" }
            return inner.isEmpty ? [] : inner.split(separator: ",")
        }
        let engine = VisitColumns(counts: elements(row[0]).compactMap { UInt64($0) }, sums: elements(row[1]).compactMap { Double($0) },
                                  mins: elements(row[2]).compactMap { Double($0) }, maxes: elements(row[3]).compactMap { Double($0) },
                                  tallyKeys: elements(row[5]).compactMap { UInt64($0) }, tallyCounts: elements(row[6]).compactMap { UInt64($0) },
                                  band: rows[0].band)
        let local = VisitColumnsTests.engineMerged(rows)
        #expect(engine.counts == local.counts)
        #expect(engine.mins == local.mins && engine.maxes == local.maxes)
        #expect(engine.tallyKeys == local.tallyKeys && engine.tallyCounts == local.tallyCounts)
        #expect(engine.sums.count == local.sums.count)
        for (a, b) in zip(engine.sums, local.sums) { #expect(abs(a - b) <= 1e-12 * max(1, abs(b))) }
        let contents = try engine.contents(layout: Self.withSixth)
        Self.expectClose(contents.rollupValue(), try local.rollupValue(layout: Self.withSixth), "decoded from the server's merge")
        #expect(contents.statistics[6]?.visits == 2)
    }
}
