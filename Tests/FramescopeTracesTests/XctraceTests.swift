import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// Instruments' `xctrace export` XML: the corpus' six real tables (the reference figures are
/// Instruments' own) and fixtures for id/ref, several tables and broken documents.
@Suite("Trace readers: Instruments xctrace export")
struct XctraceTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/xctrace")
    }

    func corpusText(_ name: String) throws -> String {
        try String(contentsOf: Self.corpus.appendingPathComponent(name), encoding: .utf8)
    }

    func analyze(_ text: String, chunkSize: Int = .max) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        var source = MemoryByteSource(text, chunkSize: chunkSize)
        var notes: [String] = []
        let report = try TraceReader(file: "export.xml").analyze(from: &source, note: { notes.append($0) })
        return (report, notes)
    }

    func figure(_ report: RecordingReport, _ label: String) -> Double? {
        report.toolFigures.first { $0.label == label }?.value
    }

    @Test("hitches.xml: 11 hitches, 616.7 ms of hitch time, the same in Framescope's hitchTime")
    func hitches() throws {
        let text = try corpusText("xcode27_hitches.xml")
        #expect(TraceFormat.detect(prefix: Array(text.utf8.prefix(512))) == .xctrace)
        let (report, _) = try analyze(text, chunkSize: 61)
        #expect(figure(report, "Hitches") == 11)
        #expect(abs((figure(report, "Hitch time") ?? 0) - 616.7) < 0.05)
        #expect(report.whole.dropEvents == 11)
        #expect(abs(report.whole.hitchTime - 0.6167) < 0.0001)
        // 216.67, 200 and 50 ms late are 13, 12 and 3 refreshes; 33.33 is 2; seven of 16.67 are 1 each.
        #expect(report.whole.droppedFrames == 13 + 12 + 3 + 2 + 7)
        #expect(report.whole.hangs == 0)
    }

    @Test("potential-hangs.xml: 23 rows, 6 Brief Unresponsiveness (100 ms or more), none reaches 250 ms")
    func potentialHangs() throws {
        let (report, _) = try analyze(try corpusText("xcode27_potential-hangs.xml"), chunkSize: 13)
        #expect(figure(report, "Potential hangs") == 23)
        #expect(figure(report, "Brief Unresponsiveness") == 6)
        #expect(figure(report, "Potential Interaction Delay") == 17)
        #expect(report.whole.frames == 23)
        #expect(report.whole.hangs == 0)
        let longest = try #require(report.whole.maxFrameDuration)
        #expect(longest >= 0.1 && longest < 0.25)
        #expect(abs(longest * 1000 - (figure(report, "Longest potential hang") ?? 0)) < 0.001)
    }

    @Test("Display tables give ticks: vsyncs with their successor as target, the others at 60 Hz from their shortest interval", arguments: [
        ("xcode27_display-vsyncs-interval.xml", 10),
        ("xcode27_display-surface-swap.xml", 12),
        ("xcode27_displayed-surfaces-interval.xml", 12),
        ("xcode27_hitches-renders.xml", 12),
    ])
    func displayTables(name: String, rows: Int) throws {
        let text = try corpusText(name)
        let (report, notes) = try analyze(text)
        #expect(report.whole.frames + report.whole.firstFrames == rows - 1)
        #expect(report.whole.refreshRates.entries.map(\.key) == [60])
        #expect(report.whole.droppedFrames == 0)
        #expect(notes.isEmpty)
        // Every chunk size gives the same report.
        for chunk in [1, 7, 4096] {
            #expect(try analyze(text, chunkSize: chunk).report == report)
        }
    }

    static func export(_ schema: String, columns: [(String, String)], rows: [String]) -> String {
        let cols = columns.map { "<col><mnemonic>\($0.0)</mnemonic><name>x</name><engineering-type>\($0.1)</engineering-type></col>" }.joined()
        return "<node xpath='//x'><schema name=\"\(schema)\">\(cols)</schema>\n" + rows.map { "<row>\($0)</row>\n" }.joined() + "</node>\n"
    }

    static let hitchColumns = [("start", "start-time"), ("duration", "duration"), ("label", "string")]

    @Test("A display table and a hitch table in one export: ticks from the display, the hitches as figures only")
    func severalTables() throws {
        let vsyncs = Self.export("display-vsyncs-interval", columns: [("timestamp", "start-time")],
                                 rows: (0..<5).map { "<start-time id=\"\(100 + $0)\">\(1_000_000_000 + $0 * 16_666_667)</start-time>" })
        let hitches = Self.export("hitches", columns: Self.hitchColumns,
                                  rows: ["<start-time id=\"1\">5</start-time><duration id=\"2\">16666667</duration><string id=\"3\">a &amp; b</string>",
                                         "<start-time id=\"4\">9</start-time><duration ref=\"2\"/><string ref=\"3\"/>"])
        let text = "<?xml version=\"1.0\"?>\n<!-- two tables -->\n<trace-query-result>\n" + vsyncs + hitches + "</trace-query-result>\n"
        let (report, notes) = try analyze(text, chunkSize: 3)
        #expect(report.whole.frames + report.whole.firstFrames == 4)
        #expect(figure(report, "Hitches") == 2)
        #expect(notes == ["the hitch and hang tables are shown as Instruments' figures only: the display table gives the frames"])
    }

    @Test("A table Framescope does not read is skipped with a note; an export of only such tables is an error naming them")
    func unknownTables() throws {
        let other = Self.export("time-profile", columns: [("weight", "weight")], rows: ["<weight id=\"1\">3</weight>"])
        let hitches = Self.export("hitches", columns: Self.hitchColumns, rows: ["<start-time id=\"7\">5</start-time><duration id=\"8\">16666667</duration><sentinel/>"])
        let (_, notes) = try analyze("<trace-query-result>" + other + hitches + "</trace-query-result>")
        #expect(notes.contains("skipped the tables Framescope does not read: time-profile"))
        #expect {
            _ = try analyze("<trace-query-result>" + other + "</trace-query-result>")
        } throws: { error in
            (error as? TraceError)?.message.contains("has tables 'time-profile'; Framescope reads the xctrace tables hitches, potential-hangs") == true
        }
    }

    @Test("Broken exports are errors naming the line", arguments: [
        (export("hitches", columns: hitchColumns, rows: ["<start-time id=\"1\">5</start-time><duration ref=\"9\"/>"]), 2, "ref=\"9\" points to no earlier value"),
        (export("hitches", columns: [("start", "start-time")], rows: []), 1, "table 'hitches' has no 'duration' column"),
        (export("hitches", columns: hitchColumns, rows: ["<start-time id=\"1\">5</start-time><duration id=\"2\">-4</duration>"]), 2, "duration '-4' is not a time in whole ns"),
        (export("hitches", columns: hitchColumns, rows: ["<start-time id=\"1\">5</start-time><duration id=\"2\">99999999999999999999</duration>"]), 2, "is not a time in whole ns"),
        (export("hitches", columns: hitchColumns, rows: ["<start-time id=\"1\">5</start-time>"]), 2, "a row without its duration"),
        (export("display-vsyncs-interval", columns: [("timestamp", "start-time")], rows: ["<start-time id=\"1\">50</start-time>", "<start-time id=\"2\">40</start-time>"]), 3, "is not after the previous one"),
        ("<trace-query-result><node><schema name=\"hitches\"><col><mnemonic>start", 0, "the document ends inside"),
        ("<trace-query-result><row a=1></row>", 1, "unquoted value"),
    ] as [(String, Int, String)])
    func broken(text: String, line: Int, message: String) {
        #expect {
            _ = try analyze("<trace-query-result>\n" + text.replacingOccurrences(of: "<trace-query-result>", with: ""))
        } throws: { error in
            guard let error = error as? TraceError else { return false }
            // The document gets a first line of its own, so lines are one further on; 0: no line.
            return error.kind == .data && error.message.contains(message) && error.line == (line == 0 ? nil : line + 1)
        }
    }

    @Test("Hang types from the file are names without control characters, entities expanded")
    func hangTypeNames() throws {
        let text = "<trace-query-result>" + Self.export("potential-hangs", columns: [("start", "start-time"), ("duration", "duration"), ("hang-type", "hang-type")],
            rows: ["<start-time id=\"1\">5</start-time><duration id=\"2\">300000000</duration><hang-type id=\"3\">Evil&#27;[31m &lt;b&gt;</hang-type>"]) + "</trace-query-result>"
        let (report, _) = try analyze(text)
        #expect(report.toolFigures.map(\.label).contains("Evil\u{FFFD}[31m <b>"))
        #expect(report.whole.hangs == 1)
    }
}
