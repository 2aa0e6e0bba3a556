import Foundation
import FramescopeClickHouse
import FramescopeCollector
import FramescopeCore
import Testing

/// Rows already stored keep their meaning: the `event_*` arrays written for known visits
/// are pinned in `Fixtures/visit-columns-v1.json`, as `collector-v6.sqlite` pins SQLite's.
///
/// The fixture was written by the code of commit 8fee672 (before ``VisitColumns`` had a
/// layout table, when positions followed `VisitMetric.allCases`), so it is layout v1 as
/// stored by every release until then. Each case gives its visits as their reports'
/// binary form (``FrameReport/binaryEncoded()``, version 1, in hex) and the arrays of
/// the one row ``VisitColumns/init(value:layout:)`` writes for the merge of their
/// ``RollupValue``s; doubles are strings (Swift's shortest exact form, `inf` and `-inf`
/// included). Never rewrite it: a new layout gets a new fixture file.
///
/// To write a fixture for a new layout (a new file; an existing one is never overwritten):
/// `FRAMESCOPE_WRITE_VISIT_COLUMNS_FIXTURE=Fixtures/visit-columns-vN.json swift test --filter VisitColumnsFixtureTests`.
@Suite("Visit columns: rows stored by earlier releases")
struct VisitColumnsFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let v1 = fixtures.appendingPathComponent("visit-columns-v1.json")

    /// One visit's reports, in hex of their binary form.
    struct Visit: Codable {
        var report: String
        var motion: String?
    }

    /// Visits and the one row written for them.
    struct Case: Codable {
        var name: String
        var visits: [Visit]
        var counts: [UInt64]
        var sums: [String]
        var mins: [String]
        var maxes: [String]
        var tallyKeys: [UInt64]
        var tallyCounts: [UInt64]
        var band: String
    }

    /// The fixture file.
    struct Fixture: Codable {
        var about: String
        var cases: [Case]
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func bytes(_ hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { throw VisitColumnsError("odd hex length") }
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { throw VisitColumnsError("bad hex") }
            return byte
        }
    }

    static func double(_ text: String) throws -> Double {
        guard let value = Double(text) else { throw VisitColumnsError("\(text) is not a double") }
        return value
    }

    /// The merged rollup value of a case's visits.
    static func value(of visits: [Visit]) throws -> RollupValue {
        var value = RollupValue()
        for visit in visits {
            let report = try FrameReport(binary: try bytes(visit.report))
            let motion = try visit.motion.map { try FrameReport(binary: try bytes($0)) }
            value.merge(RollupValue(visits: 1, report: report, motion: motion, statistics: VisitStatistics(whole: report, motion: motion)))
        }
        return value
    }

    /// A visit with every counter above zero: a second at 60 Hz, then in motion a 0.3 s
    /// hang, a 0.8 s frozen frame and half a second at 60 Hz, a tick back in time
    /// (rejected), a pause, and a quarter second at 120 Hz.
    static func everyCounterVisit() -> (report: FrameReport, motion: FrameReport?) {
        var analyzer = FrameAnalyzer()
        func tick(_ at: Double, hz: Double = 60) {
            _ = analyzer.recordTick(timestamp: at, targetTimestamp: at + 1 / hz, refreshInterval: 1 / hz)
        }
        for index in 0...60 { tick(Double(index) / 60) }
        analyzer.beginSegment("scroll")
        tick(1.3)
        tick(2.1)
        for index in 1...30 { tick(2.1 + Double(index) / 60) }
        analyzer.endSegment()
        tick(2.0)
        analyzer.pause()
        for index in 0...30 { tick(3 + Double(index) / 120, hz: 120) }
        let recording = analyzer.report()
        return (recording.whole, recording.motion)
    }

    /// The cases a new fixture is written for: the simulated visits of ``VisitColumnsTests``
    /// and ``everyCounterVisit()``.
    static func newCases() -> [(name: String, visits: [(report: FrameReport, motion: FrameReport?)])] {
        let visits = VisitColumnsTests.visits().map { (report: $0.report, motion: $0.motion) }
        return [("a heavy visit at 60 Hz with motion", [visits[1]]),
                ("a moderate visit at 120 Hz without motion", [visits[4]]),
                ("a visit with every counter above zero: hang, frozen frame, rejected tick, pause, 60 and 120 Hz", [everyCounterVisit()]),
                ("six visits merged into one row, as the bulk loader writes them", visits)]
    }

    static func write(to path: URL) throws {
        var text = "{\n  \"about\": \"event_* arrays written by VisitColumns for known visits; see VisitColumnsFixtureTests\",\n  \"cases\": [\n"
        func strings(_ values: [Double]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        func numbers(_ values: [UInt64]) -> String { "[" + values.map { "\($0)" }.joined(separator: ", ") + "]" }
        var parts: [String] = []
        for (name, visits) in newCases() {
            let stored = visits.map { Visit(report: hex($0.report.binaryEncoded()), motion: $0.motion.map { hex($0.binaryEncoded()) }) }
            let columns = try VisitColumns(value: try value(of: stored))
            var part = "    {\n      \"name\": \"\(name)\",\n      \"visits\": [\n"
            part += stored.map { "        {\"report\": \"\($0.report)\", \"motion\": \($0.motion.map { "\"\($0)\"" } ?? "null")}" }.joined(separator: ",\n")
            part += "\n      ],\n"
            part += "      \"counts\": \(numbers(columns.counts)),\n"
            part += "      \"sums\": \(strings(columns.sums)),\n"
            part += "      \"mins\": \(strings(columns.mins)),\n"
            part += "      \"maxes\": \(strings(columns.maxes)),\n"
            part += "      \"tallyKeys\": \(numbers(columns.tallyKeys)),\n"
            part += "      \"tallyCounts\": \(numbers(columns.tallyCounts)),\n"
            part += "      \"band\": \"\(columns.band)\"\n    }"
            parts.append(part)
        }
        text += parts.joined(separator: ",\n") + "\n  ]\n}\n"
        guard !FileManager.default.fileExists(atPath: path.path) else { throw VisitColumnsError("\(path.path) exists; a fixture is never rewritten") }
        try Data(text.utf8).write(to: path)
    }

    static func load(_ url: URL) throws -> Fixture {
        try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    @Test("Today's code writes exactly the v1 arrays for the fixture's visits")
    func writesV1() throws {
        if let path = ProcessInfo.processInfo.environment["FRAMESCOPE_WRITE_VISIT_COLUMNS_FIXTURE"] {
            try Self.write(to: Self.fixtures.deletingLastPathComponent().appendingPathComponent(path))
        }
        let fixture = try Self.load(Self.v1)
        #expect(fixture.cases.count == 4)
        for stored in fixture.cases {
            let columns = try VisitColumns(value: try Self.value(of: stored.visits))
            #expect(columns.counts == stored.counts, "\(stored.name)")
            #expect(columns.sums.map(\.bitPattern) == (try stored.sums.map { try Self.double($0).bitPattern }), "\(stored.name)")
            #expect(columns.mins.map(\.bitPattern) == (try stored.mins.map { try Self.double($0).bitPattern }), "\(stored.name)")
            #expect(columns.maxes.map(\.bitPattern) == (try stored.maxes.map { try Self.double($0).bitPattern }), "\(stored.name)")
            #expect(columns.tallyKeys == stored.tallyKeys, "\(stored.name)")
            #expect(columns.tallyCounts == stored.tallyCounts, "\(stored.name)")
            #expect(columns.band.bitPattern == (try Self.double(stored.band)).bitPattern, "\(stored.name)")
        }
    }

    @Test("The v1 arrays read back as the visits' rollup value")
    func readsV1() throws {
        let fixture = try Self.load(Self.v1)
        for stored in fixture.cases {
            let value = try VisitColumns.value(counts: stored.counts, sums: try stored.sums.map(Self.double), mins: try stored.mins.map(Self.double),
                                               maxes: try stored.maxes.map(Self.double), tallyKeys: stored.tallyKeys, tallyCounts: stored.tallyCounts,
                                               deviceCodes: [], band: try Self.double(stored.band))
            #expect(value == (try Self.value(of: stored.visits)), "\(stored.name)")
        }
    }
}
