import ArgumentParser
import FramescopeTraces

/// The `framescope` command: measure how smooth a UI is, from traces and reports.
@main
struct Framescope: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framescope",
        abstract: "Measure how smooth a UI is: dropped frames, hitches, hangs and frame rate.",
        discussion: """
            Exit codes: 0 success or budget met, 1 budget or comparison failed, \
            64 bad usage, 65 unusable input data, 74 I/O failure.
            """,
        version: "0.1.0",
        subcommands: [ServeCommand.self, AppsCommand.self, AnalyzeCommand.self, CheckCommand.self, CompareCommand.self, SimulateCommand.self, DatasetCommand.self, RecordCommand.self, ExportCommand.self, SymbolsCommand.self, BenchCommand.self, LoadtestCommand.self]
    )

    /// Parses the arguments, runs the chosen command and ends the process with its exit
    /// code: usage errors as ArgumentParser reports them (64), every error a command's
    /// `run` throws through ``CLIFailure/exitError(for:)``.
    static func main() async {
        let parsed: any ParsableCommand
        do {
            parsed = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var command = parsed as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = parsed
                try command.run()
            }
        } catch {
            // `--help`, `help` and `--version` arrive here: ArgumentParser parses them into a
            // command whose `run` throws its own error. ArgumentParser ends those as it says
            // (help on stdout, exit 0); every other error goes through the one mapping.
            if !(error is CLIFailure), !(error is TraceError), !(error is ExitCode), exitCode(for: error) != .failure {
                exit(withError: error)
            }
            exit(withError: CLIFailure.exitError(for: error))
        }
    }
}
