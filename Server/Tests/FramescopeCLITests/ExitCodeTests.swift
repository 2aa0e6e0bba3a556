import Foundation
import Testing

/// Every command, synchronous or asynchronous, ends an I/O failure with exit 74 and a
/// message on stderr: one path from error to exit code (DESIGN §3), never ArgumentParser's
/// generic exit 1, which the README keeps for a failed budget.
@Suite("Exit codes on I/O failure", .serialized)
struct ExitCodeTests {
    /// A command line, with `DIR` standing for a fresh temporary directory holding
    /// `trace.csv` (a valid trace) and `existing.sqlite` (a file that exists).
    struct Case: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var stderrMentions: String
        var testDescription: String { "framescope " + arguments.joined(separator: " ") }
    }

    static let missing = "/nonexistent-framescope-dir/x"

    static let cases: [Case] = [
        Case(arguments: ["analyze", "\(missing).csv"], stderrMentions: "cannot open"),
        Case(arguments: ["check", "--budget", "\(missing).json", "DIR/trace.csv"], stderrMentions: "cannot read the budget"),
        Case(arguments: ["compare", "\(missing)-a.csv", "DIR/trace.csv"], stderrMentions: "cannot open"),
        Case(arguments: ["simulate", "--scenario", "best-case", "--output", "\(missing).csv"], stderrMentions: "nonexistent-framescope-dir"),
        Case(arguments: ["dataset", "messages", "--count", "3", "--output", "\(missing).json"], stderrMentions: "nonexistent-framescope-dir"),
        Case(arguments: ["bench", "--ticks", "100", "--output", "\(missing).csv"], stderrMentions: "nonexistent-framescope-dir"),
        Case(arguments: ["bench", "queries", "--events", "2400", "--days", "1", "--keys-per-hour", "100", "--db", "DIR/existing.sqlite"], stderrMentions: "exists; name a new file"),
        Case(arguments: ["serve", "--db", "\(missing).sqlite", "--port", "0"], stderrMentions: "cannot open the database"),
        Case(arguments: ["apps", "create", "Shop", "--db", "\(missing).sqlite"], stderrMentions: "cannot open the database"),
        Case(arguments: ["apps", "list", "--db", "\(missing).sqlite"], stderrMentions: "cannot open the database"),
        Case(arguments: ["apps", "rotate", "shop", "--key", "read", "--db", "\(missing).sqlite"], stderrMentions: "cannot open the database"),
        Case(arguments: ["apps", "revoke", "shop", "--db", "\(missing).sqlite"], stderrMentions: "cannot open the database"),
        // Port 1 on loopback: nothing listens, every connection is refused.
        Case(arguments: ["loadtest", "--url", "http://127.0.0.1:1", "--key", "fsi_k", "--rate", "20", "--duration", "1", "--batch-size", "10"], stderrMentions: "no batch was acknowledged"),
    ]

    @Test("An unreachable URL or an unwritable path exits 74 with a message", arguments: cases)
    func ioFailureExits74(_ testCase: Case) throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("trace.csv", csvTrace([1, 1, 1, 1, 1]))
        _ = try directory.file("existing.sqlite", "")
        let arguments = testCase.arguments.map { $0.replacingOccurrences(of: "DIR", with: directory.url.path) }
        let result = try CLI.run(arguments)
        #expect(result.exitCode == 74, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("framescope: "), "\(result.stderr)")
        #expect(result.stderr.contains(testCase.stderrMentions), "\(result.stderr)")
        #expect(!result.stderr.contains("CLIFailure("), "an error printed as a Swift value: \(result.stderr)")
    }
}

/// Help and version are ArgumentParser's to print: on stdout, exit 0, for the root command
/// and every subcommand, nested ones included.
@Suite("Help and version", .serialized)
struct HelpTests {
    @Test("--help prints the usage and exits 0", arguments: [
        [], ["analyze"], ["check"], ["compare"], ["serve"], ["apps"], ["apps", "create"], ["bench"], ["bench", "queries"],
        ["simulate"], ["dataset", "messages"], ["loadtest"],
    ])
    func help(_ command: [String]) throws {
        let result = try CLI.run(command + ["--help"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("USAGE: framescope"), "\(result.stdout)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test("help SUBCOMMAND and --version exit 0")
    func helpCommandAndVersion() throws {
        let help = try CLI.run(["help", "analyze"])
        #expect(help.exitCode == 0 && help.stdout.contains("USAGE: framescope analyze"), "\(help.stdout)\(help.stderr)")
        let version = try CLI.run(["--version"])
        #expect(version.exitCode == 0 && version.stdout.contains("0.1.0"), "\(version.stdout)\(version.stderr)")
    }
}
