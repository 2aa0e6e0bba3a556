import ArgumentParser
import FramescopeCore

/// How `framescope check` prints its verdict.
///
/// `check` has its own formats, apart from the other commands' ``OutputFormat``: besides
/// the table and JSON it speaks the two report formats CI systems read. Every format
/// goes to stdout and leaves the exit code alone (0 met, 1 a limit broken).
enum CheckFormat: String, ExpressibleByArgument, CaseIterable {
    /// One line per file, then each broken limit indented (for people).
    case table
    /// One object: `passed` and each file's broken limits (``CheckOutput``).
    case json
    /// JUnit XML: one `<testsuite>` per file, one `<testcase>` per budget scope and
    /// segment (``junitReport(_:)``), for Jenkins, GitLab and other test-report readers.
    case junit
    /// GitHub Actions workflow commands: an `::error` per broken limit and a `::notice`
    /// per file that meets the budget (``githubAnnotations(_:)``).
    case github
}

/// One file checked against a budget: what every ``CheckFormat`` prints from.
struct CheckedFile {
    /// The path as given on the command line (`-` for standard input).
    var path: String
    /// The file as reports name it (``displayName(_:)``: `stdin` for `-`).
    var name: String
    /// The scopes the budget limits in this file's report, in the order
    /// ``Budget/violations(of:)`` checks them (``budgetScopes(of:in:)``).
    var scopes: [BudgetViolation.Scope]
    /// Every limit the file's report broke, recording first, then motion, then segments.
    var violations: [BudgetViolation]

    /// Checks `report`, read from `path`, against `budget`.
    init(path: String, report: RecordingReport, budget: Budget) {
        self.path = path
        name = displayName(path)
        scopes = budgetScopes(of: budget, in: report)
        violations = budget.violations(of: report)
    }

    /// Whether the file meets the budget: no limit broken.
    var passed: Bool { violations.isEmpty }

    /// Each scope the budget limits with the limits broken there (none when it passed),
    /// in ``scopes`` order. A violation whose scope is not among ``scopes`` (which
    /// ``budgetScopes(of:in:)`` rules out) still gets a scope of its own, after the
    /// others, so a broken limit is never dropped from a report.
    var scopeResults: [(scope: BudgetViolation.Scope, violations: [BudgetViolation])] {
        var results = scopes.map { (scope: $0, violations: [BudgetViolation]()) }
        for violation in violations {
            if let index = results.firstIndex(where: { $0.scope == violation.scope }) {
                results[index].violations.append(violation)
            } else {
                results.append((scope: violation.scope, violations: [violation]))
            }
        }
        return results
    }
}

/// The scopes `budget` limits in `report`, as ``Budget/violations(of:)`` names them:
/// `recording` when the budget has `recording` limits (or `eachSegment` limits and the
/// report has no segments, which then apply to the whole recording), `motion` when it has
/// `motion` limits, and each of the report's segments when it has `eachSegment` limits.
///
/// A segment is named by its label, or `label #n` (its 1-based position) when another
/// segment has the same label, as ``BudgetViolation/Scope/segment(index:name:)`` is.
func budgetScopes(of budget: Budget, in report: RecordingReport) -> [BudgetViolation.Scope] {
    var scopes: [BudgetViolation.Scope] = []
    let eachSegmentOnWhole = !budget.eachSegment.isEmpty && report.segments.isEmpty
    if !budget.recording.isEmpty || eachSegmentOnWhole { scopes.append(.recording) }
    if !budget.motion.isEmpty { scopes.append(.motion) }
    if !budget.eachSegment.isEmpty {
        var labelCounts: [String: Int] = [:]
        for segment in report.segments { labelCounts[segment.label, default: 0] += 1 }
        for (index, segment) in report.segments.enumerated() {
            let name = labelCounts[segment.label] == 1 ? segment.label : "\(segment.label) #\(index + 1)"
            scopes.append(.segment(index: index, name: name))
        }
    }
    return scopes
}
