/// `check --format github`: the files' verdicts as GitHub Actions workflow commands, one
/// a line, which a workflow step's log turns into annotations:
///
/// ```
/// ::error file=Examples/traces/feed-scroll.csv,title=Framescope budget::motion: hitch ratio 40.0 ms/s, budget allows 5.0 ms/s
/// ::notice file=good.csv,title=Framescope budget::good.csv: meets the budget
/// ```
///
/// Each broken limit is an `::error` whose message is the table format's line for it
/// (`scope: what was measured, what the budget allows`); each file that meets the budget
/// is one `::notice`. Standard input (`-`) has no file to point at, so its commands carry
/// only the title. Property values go through ``escapeWorkflowProperty(_:)`` and
/// messages through ``escapeWorkflowData(_:)``, so a file name or segment label cannot end
/// a command early or start another.
func githubAnnotations(_ files: [CheckedFile]) -> String {
    var lines: [String] = []
    for file in files {
        var properties: [String] = []
        if file.path != "-" { properties.append("file=" + escapeWorkflowProperty(file.name)) }
        properties.append("title=" + escapeWorkflowProperty("Framescope budget"))
        let head = properties.joined(separator: ",")
        if file.passed {
            lines.append("::notice \(head)::" + escapeWorkflowData("\(file.name): meets the budget"))
        }
        for violation in file.violations {
            lines.append("::error \(head)::" + escapeWorkflowData(violation.description))
        }
    }
    return lines.map { $0 + "\n" }.joined()
}

/// `text` escaped for the message (data) part of a workflow command, after its `::`:
/// `%` → `%25`, carriage return → `%0D`, line feed → `%0A`, as the runner's parser and
/// `@actions/core`'s `escapeData` have it.
func escapeWorkflowData(_ text: String) -> String {
    var result = ""
    result.unicodeScalars.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "%": result += "%25"
        case "\r": result += "%0D"
        case "\n": result += "%0A"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// `text` escaped for a property value of a workflow command (`file=…`, `title=…`):
/// ``escapeWorkflowData(_:)``'s escapes, and also `:` → `%3A` and `,` → `%2C`, which
/// would otherwise end the properties or the value (`@actions/core`'s `escapeProperty`).
func escapeWorkflowProperty(_ text: String) -> String {
    var result = ""
    for scalar in escapeWorkflowData(text).unicodeScalars {
        switch scalar {
        case ":": result += "%3A"
        case ",": result += "%2C"
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}
