import ArgumentParser
import Foundation
import FramescopeCore
import FramescopeTraces

/// `framescope check`: fail a CI step when a recording breaks a budget.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check traces or reports against a smoothness budget.",
        discussion: """
            Exits 0 when every file meets the budget and 1, listing each broken limit, \
            when one does not. The budget is JSON: {"recording": {...}, "motion": {...}, \
            "eachSegment": {...}}, each mapping a metric to {"max": n} or {"min": n}; \
            see docs/metrics.md. --format junit prints a JUnit XML report (a test case \
            per budget scope and segment) and --format github GitHub Actions annotations; \
            the exit code is the same in every format.
            """
    )

    /// The budget's path (`-` for standard input).
    @Option(help: ArgumentHelp("The budget file (JSON); '-' for standard input.", valueName: "budget.json"))
    var budget: String

    /// The traces or reports to check.
    @Argument(help: ArgumentHelp("Trace files or reports to check; '-' for standard input; gzip is read through.", valueName: "file"))
    var files: [String] = []

    /// How the verdict is printed.
    @Option(help: "Output format (junit: JUnit XML; github: GitHub Actions annotations).")
    var format: CheckFormat = .table

    /// How traces are read and analyzed.
    @OptionGroup var options: AnalysisOptions

    /// Refuses a command line without files, or with `-` more than once.
    mutating func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one trace file to check.") }
        try standardInputOnce(files + [budget])
    }

    /// Checks each file, prints the verdict in ``format``, and exits 1 when a limit broke.
    func run() throws {
        let limits = try loadBudget(budget)
        let loader = ReportLoader(options: options)
        var checked: [CheckedFile] = []
        for file in files {
            checked.append(CheckedFile(path: file, report: try loader.load(file), budget: limits))
        }
        let passed = checked.allSatisfy(\.passed)
        switch format {
        case .json:
            let results = checked.map { CheckResult(file: $0.name, violations: $0.violations.map(ViolationRecord.init)) }
            print(try encodeJSON(CheckOutput(passed: passed, files: results)))
        case .table:
            for file in checked {
                if file.passed {
                    print("\(file.name): meets the budget")
                } else {
                    print("\(file.name): \(file.violations.count) limit\(file.violations.count == 1 ? "" : "s") broken")
                    for violation in file.violations { print("  \(violation.description)") }
                }
            }
        case .junit:
            print(junitReport(checked), terminator: "")
        case .github:
            print(githubAnnotations(checked), terminator: "")
        }
        if !passed { throw ExitCode(CLIFailure.budgetFailed) }
    }
}

/// Reads and checks a budget file (`-` for standard input; a FIFO or a process
/// substitution works too: it is read once, to the end, up to 1 MiB).
func loadBudget(_ path: String) throws -> Budget {
    let name = displayName(path)
    let bytes: [UInt8]
    do throws(TraceError) {
        bytes = try TraceInput(file: try openAnnouncingTerminal(path, reading: "a budget")).readAll(limit: 1 << 20)
    } catch {
        throw CLIFailure(exitCode: error.kind == .io ? CLIFailure.ioError : CLIFailure.dataError,
                         message: "\(name): cannot read the budget: \(error.message)")
    }
    do {
        let budget = try JSONDecoder().decode(Budget.self, from: Data(bytes))
        if budget.isEmpty { throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(name): the budget sets no limit") }
        return budget
    } catch let error as DecodingError {
        throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(name): not a budget: \(describe(error))")
    }
}

/// What `check --format json` prints: whether every file met the budget, and each
/// file's broken limits.
struct CheckOutput: Encodable {
    /// Whether every file met the budget.
    var passed: Bool
    /// Each file checked, in the order given.
    var files: [CheckResult]
}

/// One file in `check --format json`: its name and the limits it broke.
struct CheckResult: Encodable {
    /// The file as given (`stdin` for `-`).
    var file: String
    /// Each broken limit; empty when the file meets the budget.
    var violations: [ViolationRecord]
}

/// A broken limit as `check --format json` prints it.
struct ViolationRecord: Encodable {
    /// `recording`, `motion`, or the segment's name.
    var scope: String
    /// The segment's position (from 0) when the scope is a segment.
    var segmentIndex: Int?
    /// The metric's JSON name (`hitchRatio`).
    var metric: String
    /// `max` or `min`.
    var bound: String
    /// The budget's bound, in the metric's JSON unit.
    var limit: Double
    /// The value measured; `null` when there was no data or it was withheld.
    var actual: Double?
    /// Why the value was withheld (too little of a trace measured for a ratio), when it was.
    var withheld: String?
    /// The table format's line for it: `scroll 3: 4 drop events, budget allows 3`.
    var message: String

    /// The record of `violation`.
    init(_ violation: BudgetViolation) {
        scope = violation.scope.name
        if case let .segment(index, _) = violation.scope { segmentIndex = index }
        metric = violation.limit.metric.rawValue
        bound = violation.limit.bound.rawValue
        limit = violation.limit.value
        actual = violation.actual
        withheld = violation.withheld
        message = violation.description
    }
}
