import ArgumentParser

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
        subcommands: [ServeCommand.self, AppsCommand.self, AnalyzeCommand.self, CheckCommand.self, CompareCommand.self, SimulateCommand.self, DatasetCommand.self, BenchCommand.self, LoadtestCommand.self]
    )
}
