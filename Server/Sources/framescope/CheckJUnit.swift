import FramescopeCore

/// `check --format junit`: the files' verdicts as a JUnit XML document.
///
/// A `<testsuites>` root holds one `<testsuite>` per file (named by the file, with its
/// `tests` and `failures` counts), and each suite one `<testcase>` per scope the budget
/// limits (``CheckedFile/scopes``): `recording`, `motion`, and every segment when the
/// budget has `eachSegment` limits. A test case's `classname` is `framescope.check.`
/// followed by the file's name, its `name` the scope's. A scope that broke a limit has
/// one `<failure type="budget">` whose `message` joins its broken limits with `; ` and
/// whose text lists them one a line, in the words of the table format:
///
/// ```xml
/// <testcase name="scroll 3" classname="framescope.check.feed-scroll.csv">
///   <failure message="scroll 3: 4 drop events, budget allows 3" type="budget">scroll 3: 4 drop events, budget allows 3
/// </failure>
/// </testcase>
/// ```
///
/// File names and segment labels come from outside, so every text and attribute goes
/// through ``escapeXML(_:inAttribute:)``; the document is well-formed XML 1.0 whatever
/// they hold. It matches `Tests/FramescopeCLITests/Fixtures/junit.xsd`.
func junitReport(_ files: [CheckedFile]) -> String {
    let suites = files.map(junitSuite)
    let tests = suites.reduce(0) { $0 + $1.tests }
    let failures = suites.reduce(0) { $0 + $1.failures }
    var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
    xml += #"<testsuites name="framescope check" tests="\#(tests)" failures="\#(failures)" errors="0">"# + "\n"
    for suite in suites { xml += suite.xml }
    xml += "</testsuites>\n"
    return xml
}

/// One file's `<testsuite>` element (indented, ending in a newline) and its counts.
private func junitSuite(_ file: CheckedFile) -> (xml: String, tests: Int, failures: Int) {
    let results = file.scopeResults
    let failures = results.filter { !$0.violations.isEmpty }.count
    let classname = escapeXML("framescope.check." + file.name, inAttribute: true)
    var xml = #"  <testsuite name="\#(escapeXML(file.name, inAttribute: true))" tests="\#(results.count)" failures="\#(failures)" errors="0" skipped="0">"# + "\n"
    for (scope, violations) in results {
        let name = escapeXML(scope.name, inAttribute: true)
        if violations.isEmpty {
            xml += #"    <testcase name="\#(name)" classname="\#(classname)"/>"# + "\n"
            continue
        }
        let messages = violations.map(\.description)
        let message = escapeXML(messages.joined(separator: "; "), inAttribute: true)
        let text = escapeXML(messages.map { $0 + "\n" }.joined(), inAttribute: false)
        xml += #"    <testcase name="\#(name)" classname="\#(classname)">"# + "\n"
        xml += #"      <failure message="\#(message)" type="budget">\#(text)</failure>"# + "\n"
        xml += "    </testcase>\n"
    }
    xml += "  </testsuite>\n"
    return (xml, results.count, failures)
}

/// `text` made safe for XML 1.0 character data or, with `inAttribute`, for a quoted
/// attribute value, walking it by Unicode scalar (never by `Character`, which can hide a
/// `<` or `"` behind a combining mark; see the dashboard's `escapeMarkup`, which is
/// internal to its module and leaves control characters as they are).
///
/// - `&`, `<`, `>`, `"` and `'` become `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&apos;`.
/// - Scalars XML 1.0 does not allow in a document (U+0000–U+0008, U+000B, U+000C,
///   U+000E–U+001F, U+FFFE and U+FFFF; its `Char` production) become U+FFFD, the
///   replacement character: no character reference can carry them either.
/// - Carriage return becomes `&#13;` (a parser turns a raw one into a line feed), and in
///   an attribute tab and line feed become `&#9;` and `&#10;` (a parser turns raw ones
///   into spaces), so what a reader gets back is the text as it was.
///
/// - Complexity: O(*n*) in the scalars of `text`.
func escapeXML(_ text: String, inAttribute: Bool) -> String {
    var result = ""
    result.unicodeScalars.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x26: result += "&amp;"
        case 0x3C: result += "&lt;"
        case 0x3E: result += "&gt;"
        case 0x22: result += "&quot;"
        case 0x27: result += "&apos;"
        case 0x0D: result += "&#13;"
        case 0x09 where inAttribute: result += "&#9;"
        case 0x0A where inAttribute: result += "&#10;"
        case 0x09, 0x0A: result.unicodeScalars.append(scalar)
        case 0x00...0x1F, 0xFFFE, 0xFFFF: result.unicodeScalars.append("\u{FFFD}")
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}
