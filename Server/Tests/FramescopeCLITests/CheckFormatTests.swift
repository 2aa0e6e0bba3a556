import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `check --format junit` and `--format github`: the CI report formats, their structure,
/// their escaping of names that come from outside, and the exit codes they leave alone.
@Suite("check --format junit and github", .serialized)
struct CheckFormatTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// The repository's root (this file is `Server/Tests/FramescopeCLITests/CheckFormatTests.swift`).
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The JUnit schema the reports are validated against.
    static var schema: URL { root.appendingPathComponent("Server/Tests/FramescopeCLITests/Fixtures/junit.xsd") }

    /// Limits on all three scopes: the recording and the motion are met by both traces of
    /// ``traces()``, and each segment allows 2 drop events and 2 dropped frames.
    static let budget = #"{"recording": {"droppedFrames": {"max": 3}}, "motion": {"dropEvents": {"max": 3}}, "eachSegment": {"dropEvents": {"max": 2}, "droppedFrames": {"max": 2}}}"#

    /// Two traces of three segments (`scroll 1` to `scroll 3`) with three one-frame drops
    /// each: `good.csv` has one per segment and meets ``budget``; `bad.csv` has all three in
    /// `scroll 1`, which breaks both segment limits there.
    func traces() throws -> (good: String, bad: String) {
        let labels = ["scroll 1", "scroll 2", "scroll 3"].flatMap { Array(repeating: $0, count: 10) }
        var concentrated = Array(repeating: 1, count: 30)
        concentrated[2] = 2; concentrated[5] = 2; concentrated[8] = 2
        var spread = Array(repeating: 1, count: 30)
        spread[2] = 2; spread[15] = 2; spread[25] = 2
        return (try directory.file("good.csv", csvTrace(spread, segments: labels)),
                try directory.file("bad.csv", csvTrace(concentrated, segments: labels)))
    }

    /// A JSON trace of 60 Hz ticks: `segments` gives each interval's segment label
    /// (`nil` for none) and `drops` the intervals that last two refreshes.
    func jsonTrace(_ segments: [String?], drops: Set<Int> = []) throws -> String {
        let r = 1.0 / 60
        var t = 100.0
        var ticks: [[String: Any]] = [["timestamp": t, "targetTimestamp": t + r]]
        for (index, segment) in segments.enumerated() {
            t += (drops.contains(index) ? 2 : 1) * r
            var tick: [String: Any] = ["timestamp": t, "targetTimestamp": t + r]
            if let segment { tick["segment"] = segment }
            ticks.append(tick)
        }
        let data = try JSONSerialization.data(withJSONObject: ["refreshRate": 60, "ticks": ticks])
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: JUnit

    @Test("junit: a file that meets the budget is a suite of passing test cases, one per scope and segment")
    func junitPassing() throws {
        let (good, _) = try traces()
        let budget = try directory.file("budget.json", Self.budget)
        let result = try CLI.run(["check", "--budget", budget, good, "--format", "junit"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        try expectValidJUnit(result.stdout)

        let root = try XMLTree.parse(result.stdout)
        #expect(root.name == "testsuites")
        #expect(root["tests"] == "5")
        #expect(root["failures"] == "0")
        let suites = root.children("testsuite")
        try #require(suites.count == 1)
        let suite = suites[0]
        #expect(suite["name"] == good)
        #expect(suite["tests"] == "5")
        #expect(suite["failures"] == "0")
        let cases = suite.children("testcase")
        #expect(cases.map { $0["name"] } == ["recording", "motion", "scroll 1", "scroll 2", "scroll 3"])
        #expect(cases.allSatisfy { $0["classname"] == "framescope.check.\(good)" })
        #expect(cases.allSatisfy { $0.children.isEmpty })
    }

    @Test("junit: a broken scope has one failure listing each of its broken limits; exit 1")
    func junitFailing() throws {
        let (good, bad) = try traces()
        let budget = try directory.file("budget.json", Self.budget)
        let result = try CLI.run(["check", "--budget", budget, good, bad, "--format", "junit"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        try expectValidJUnit(result.stdout)

        let root = try XMLTree.parse(result.stdout)
        #expect(root["tests"] == "10")
        #expect(root["failures"] == "1")
        let suites = root.children("testsuite")
        #expect(suites.map { $0["name"] } == [good, bad])
        let failing = try #require(suites.last)
        #expect(failing["tests"] == "5")
        #expect(failing["failures"] == "1")
        let cases = failing.children("testcase")
        #expect(cases.map { $0["name"] } == ["recording", "motion", "scroll 1", "scroll 2", "scroll 3"])
        #expect(cases.allSatisfy { $0["classname"] == "framescope.check.\(bad)" })
        #expect(cases.filter { !$0.children.isEmpty }.map { $0["name"] } == ["scroll 1"])

        // The failure's words are the table format's, one limit a line.
        let table = try CLI.run(["check", "--budget", budget, bad])
        let limits = table.stdout.split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(limits == ["scroll 1: 3 drop events, budget allows 2", "scroll 1: 3 dropped frames, budget allows 2"])
        let failures = cases[2].children("failure")
        try #require(failures.count == 1)
        #expect(failures[0]["type"] == "budget")
        #expect(failures[0]["message"] == limits.joined(separator: "; "))
        #expect(failures[0].text == limits.map { $0 + "\n" }.joined())
    }

    @Test("junit: the failing test cases are exactly the scopes --format json lists, on the example trace")
    func junitMatchesJSON() throws {
        let trace = Self.root.appendingPathComponent("Examples/traces/feed-scroll.csv").path
        let budget = try directory.file("budget.json", #"{"recording": {"hangs": {"max": 0}}, "eachSegment": {"dropEvents": {"max": 3}, "maxDroppedFrames": {"max": 3}}, "motion": {"hitchRatio": {"max": 5}}}"#)
        let junit = try CLI.run(["check", "--budget", budget, trace, "--format", "junit"])
        #expect(junit.exitCode == 1, "\(junit.stderr)")
        try expectValidJUnit(junit.stdout)
        let json = try CLI.run(["check", "--budget", budget, trace, "--format", "json"])
        #expect(json.exitCode == 1)

        let output = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let files = try #require(output["files"] as? [[String: Any]])
        let violations = try #require(files.first?["violations"] as? [[String: Any]])
        var expected: [String: [String]] = [:]
        for violation in violations {
            expected[violation["scope"] as? String ?? "?", default: []].append(violation["message"] as? String ?? "?")
        }
        #expect(expected.keys.contains("motion") && expected.keys.contains("scroll 3"), "\(expected)")

        let suite = try #require(try XMLTree.parse(junit.stdout).children("testsuite").first)
        let cases = suite.children("testcase")
        #expect(cases.map { $0["name"] } == ["recording", "motion", "scroll 1", "scroll 2", "scroll 3"])
        var found: [String: [String]] = [:]
        for testCase in cases {
            for failure in testCase.children("failure") {
                found[testCase["name"] ?? "?"] = failure.text.split(separator: "\n").map(String.init)
            }
        }
        #expect(found == expected)
        #expect(suite["failures"] == String(expected.count))
    }

    @Test("junit: a file and segment labels holding <, &, quotes, a newline and control characters stay well-formed")
    func junitHostileNames() throws {
        let labels = ["a<b&c\"d'e\u{1}f", "]]><x y=\"1\">\n\tz\u{1F}", "é\u{301}<\u{FFFE}"]
        var segments: [String?] = []
        for label in labels { segments += Array(repeating: label, count: 5) }
        // Every segment breaks its limit: each has a drop and the budget allows none.
        let trace = try directory.file("h<&\"'\u{7}>.json", try jsonTrace(segments, drops: [1, 6, 11]))
        let budget = try directory.file("budget.json", #"{"eachSegment": {"dropEvents": {"max": 0}}}"#)
        let result = try CLI.run(["check", "--budget", budget, trace, "--format", "junit"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(!result.stdout.contains("\u{1}") && !result.stdout.contains("\u{7}") && !result.stdout.contains("\u{FFFE}"))
        try expectValidJUnit(result.stdout)

        // What a reader gets back is each name as it was, with the scalars XML cannot
        // carry replaced by U+FFFD.
        func readable(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map {
                [0x1, 0x7, 0x1F, 0xFFFE].contains($0.value) ? "\u{FFFD}" : $0
            }))
        }
        let suite = try #require(try XMLTree.parse(result.stdout).children("testsuite").first)
        #expect(suite["name"] == readable(trace))
        #expect(suite["failures"] == "3")
        let cases = suite.children("testcase")
        #expect(cases.map { $0["name"] } == labels.map(readable))
        #expect(cases.allSatisfy { $0["classname"] == "framescope.check." + readable(trace) })
        for (testCase, label) in zip(cases, labels) {
            let failure = try #require(testCase.children("failure").first)
            #expect(failure["message"] == readable("\(label): 1 drop event, budget allows 0"))
            #expect(failure.text == readable("\(label): 1 drop event, budget allows 0\n"))
        }
    }

    @Test("junit: segments that share a label are told apart by position, as check's messages tell them")
    func junitRepeatedLabels() throws {
        let segments: [String?] = Array(repeating: "a", count: 5) + Array(repeating: "b", count: 5) + Array(repeating: "a", count: 5)
        let trace = try directory.file("repeated.json", try jsonTrace(segments, drops: [12]))
        let budget = try directory.file("budget.json", #"{"eachSegment": {"dropEvents": {"max": 0}}}"#)
        let result = try CLI.run(["check", "--budget", budget, trace, "--format", "junit"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        try expectValidJUnit(result.stdout)
        let suite = try #require(try XMLTree.parse(result.stdout).children("testsuite").first)
        let cases = suite.children("testcase")
        #expect(cases.map { $0["name"] } == ["a #1", "b", "a #3"])
        #expect(cases.map { $0.children("failure").first?["message"] } == [nil, nil, "a #3: 1 drop event, budget allows 0"])
    }

    @Test("junit: without segments, eachSegment limits apply to the recording, which is one test case")
    func junitNoSegments() throws {
        let trace = try directory.file("plain.csv", csvTrace([1, 2, 1, 2, 1, 1]))
        let budget = try directory.file("budget.json", #"{"eachSegment": {"dropEvents": {"max": 1}}}"#)
        let result = try CLI.run(["check", "--budget", budget, trace, "--format", "junit"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        try expectValidJUnit(result.stdout)
        let suite = try #require(try XMLTree.parse(result.stdout).children("testsuite").first)
        #expect(suite["tests"] == "1")
        #expect(suite["failures"] == "1")
        #expect(suite.children("testcase").map { $0["name"] } == ["recording"])
        #expect(suite.children("testcase").first?.children("failure").first?["message"] == "recording: 2 drop events, budget allows 1")
    }

    // MARK: GitHub

    @Test("github: an ::error per broken limit, a ::notice per file that meets the budget; exit 1")
    func githubFailing() throws {
        let (good, bad) = try traces()
        let budget = try directory.file("budget.json", Self.budget)
        let result = try CLI.run(["check", "--budget", budget, good, bad, "--format", "github"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let goodFile = good.replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
        let badFile = bad.replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
        #expect(result.stdout == """
            ::notice file=\(goodFile),title=Framescope budget::\(good): meets the budget
            ::error file=\(badFile),title=Framescope budget::scroll 1: 3 drop events, budget allows 2
            ::error file=\(badFile),title=Framescope budget::scroll 1: 3 dropped frames, budget allows 2

            """)

        let passing = try CLI.run(["check", "--budget", budget, good, "--format", "github"])
        #expect(passing.exitCode == 0, "\(passing.stderr)")
        #expect(passing.stdout == "::notice file=\(goodFile),title=Framescope budget::\(good): meets the budget\n")
    }

    @Test("github: a name holding ',', ':', '%' and a newline is escaped per GitHub's rules")
    func githubEscaping() throws {
        let name = "we,ird:50%\nname\r.json"
        let label = "a,b: 100%\nc"
        let trace = try directory.file(name, try jsonTrace(Array(repeating: label, count: 5), drops: [2]))
        let budget = try directory.file("budget.json", #"{"eachSegment": {"dropEvents": {"max": 0}}}"#)
        let result = try CLI.run(["check", "--budget", budget, trace, "--format", "github"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        let directoryPath = directory.url.path
        #expect(!directoryPath.contains(",") && !directoryPath.contains(":") && !directoryPath.contains("%"))
        // Property: % \r \n : , escaped. Data: only % \r \n.
        let file = directoryPath + "/we%2Cird%3A50%25%0Aname%0D.json"
        #expect(result.stdout == "::error file=\(file),title=Framescope budget::a,b: 100%25%0Ac: 1 drop event, budget allows 0\n")
        #expect(result.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 2)

        let passing = try directory.file("budget-met.json", #"{"eachSegment": {"dropEvents": {"max": 1}}}"#)
        let met = try CLI.run(["check", "--budget", passing, trace, "--format", "github"])
        #expect(met.exitCode == 0, "\(met.stderr)")
        #expect(met.stdout == "::notice file=\(file),title=Framescope budget::\(directoryPath)/we,ird:50%25%0Aname%0D.json: meets the budget\n")
    }

    @Test("github: standard input has no file to annotate, so its commands carry only the title")
    func githubStandardInput() throws {
        let (_, bad) = try traces()
        let budget = try directory.file("budget.json", #"{"eachSegment": {"dropEvents": {"max": 2}}}"#)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["check", "--budget", budget, "--format", "github", "-"]
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: bad))
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(stdout == "::error title=Framescope budget::scroll 1: 3 drop events, budget allows 2\n")
    }

    // MARK: Exit codes

    @Test("The new formats keep check's exit codes: 64 for an unknown format, 65 for bad data, 74 for I/O", arguments: ["junit", "github"])
    func exitCodes(_ format: String) throws {
        let (good, _) = try traces()
        let budget = try directory.file("budget.json", Self.budget)
        #expect(try CLI.run(["check", "--budget", budget, good, "--format", "sarif"]).exitCode == 64)
        let malformed = try directory.file("malformed.csv", "timestamp,targetTimestamp\n1.0,1.01\n1.02,oops\n")
        let bad = try CLI.run(["check", "--budget", budget, malformed, "--format", format])
        #expect(bad.exitCode == 65)
        #expect(bad.stdout.isEmpty, "nothing half-written on stdout: \(bad.stdout)")
        let missing = try CLI.run(["check", "--budget", budget, "/nonexistent-framescope-dir/x.csv", "--format", format])
        #expect(missing.exitCode == 74)
        #expect(missing.stdout.isEmpty)
    }

    // MARK: Helpers

    /// Validates `xml` against the JUnit schema with `xmllint`, which must be installed
    /// (Debian's `libxml2-utils`, which `scripts/test` installs): a machine without it
    /// fails this test rather than skip the validation.
    func expectValidJUnit(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let xmllint = ["/usr/bin/xmllint", "/usr/local/bin/xmllint", "/opt/homebrew/bin/xmllint"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let xmllint else {
            Issue.record("xmllint is not installed: install libxml2-utils (scripts/test does) to validate the JUnit report", sourceLocation: sourceLocation)
            return
        }
        let report = directory.url.appendingPathComponent("report-\(UUID().uuidString).xml")
        try Data(xml.utf8).write(to: report)
        let result = try CLI.runProduct(URL(fileURLWithPath: xmllint), ["--noout", "--schema", Self.schema.path, report.path])
        #expect(result.exitCode == 0, "xmllint: \(result.stderr)\n\(xml)", sourceLocation: sourceLocation)
    }
}

/// An XML element read back with Foundation's `XMLParser`: its name, attributes, child
/// elements and text.
struct XMLTree {
    /// The element's name.
    var name: String
    /// Its attributes, as the parser decoded them.
    var attributes: [String: String]
    /// Its child elements, in order.
    var children: [XMLTree] = []
    /// Its character data (entities and character references resolved).
    var text = ""

    /// The attribute `name`'s value.
    subscript(_ name: String) -> String? { attributes[name] }

    /// The child elements named `name`.
    func children(_ name: String) -> [XMLTree] { children.filter { $0.name == name } }

    /// Parses `xml`; a document that is not well-formed throws with the parser's error.
    static func parse(_ xml: String) throws -> XMLTree {
        let parser = XMLParser(data: Data(xml.utf8))
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw ParseError(description: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "no root"), line \(parser.lineNumber)\n\(xml)")
        }
        return root
    }

    /// A document `XMLParser` refused.
    struct ParseError: Error, CustomStringConvertible {
        /// The parser's error and where.
        var description: String
    }

    /// Builds the tree from the parser's events.
    final class Builder: NSObject, XMLParserDelegate {
        /// The elements open, outermost first.
        var stack: [XMLTree] = []
        /// The document element, once closed.
        var root: XMLTree?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            stack.append(XMLTree(name: elementName, attributes: attributes))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if !stack.isEmpty { stack[stack.count - 1].text += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            let element = stack.removeLast()
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
    }
}
