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
            see docs/metrics.md.
            """
    )

    @Option(help: ArgumentHelp("The budget file (JSON); '-' for standard input.", valueName: "budget.json"))
    var budget: String

    @Argument(help: ArgumentHelp("Trace files or reports to check; '-' for standard input; gzip is read through.", valueName: "file"))
    var files: [String] = []

    @Option(help: "Output format.")
    var format: OutputFormat = .table

    @OptionGroup var options: AnalysisOptions

    mutating func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one trace file to check.") }
        try standardInputOnce(files + [budget])
    }

    func run() throws {
        let limits = try loadBudget(budget)
        let loader = ReportLoader(options: options)
        var results: [CheckResult] = []
        for file in files {
            let violations = limits.violations(of: try loader.load(file))
            results.append(CheckResult(file: displayName(file), violations: violations.map(ViolationRecord.init)))
        }
        let passed = results.allSatisfy { $0.violations.isEmpty }
        switch format {
        case .json:
            print(try encodeJSON(CheckOutput(passed: passed, files: results)))
        case .table:
            for result in results {
                if result.violations.isEmpty {
                    print("\(result.file): meets the budget")
                } else {
                    print("\(result.file): \(result.violations.count) limit\(result.violations.count == 1 ? "" : "s") broken")
                    for violation in result.violations { print("  \(violation.message)") }
                }
            }
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

struct CheckOutput: Encodable {
    var passed: Bool
    var files: [CheckResult]
}

struct CheckResult: Encodable {
    var file: String
    var violations: [ViolationRecord]
}

/// A broken limit as `check --format json` prints it.
struct ViolationRecord: Encodable {
    var scope: String
    var segmentIndex: Int?
    var metric: String
    var bound: String
    var limit: Double
    var actual: Double?
    var message: String

    init(_ violation: BudgetViolation) {
        scope = violation.scope.name
        if case let .segment(index, _) = violation.scope { segmentIndex = index }
        metric = violation.limit.metric.rawValue
        bound = violation.limit.bound.rawValue
        limit = violation.limit.value
        actual = violation.actual
        message = violation.description
    }
}
