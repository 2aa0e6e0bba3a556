import ArgumentParser
import FramescopeCore

/// `framescope analyze`: the metrics of recorded traces.
struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Compute smoothness metrics for recorded frame traces.",
        discussion: """
            Reads Framescope CSV or JSON traces (the format is detected from the content) \
            as a stream, in constant memory. With --format json, one file prints one JSON \
            object with the keys of docs/metrics.md; several files print a list of \
            {"file", "report"} objects.
            """
    )

    @Argument(help: ArgumentHelp("Trace files (CSV or JSON, gzip read through) or reports from 'analyze --format json'; '-' for standard input.", valueName: "file"))
    var files: [String] = []

    @Option(help: "Output format.")
    var format: OutputFormat = .table

    @OptionGroup var options: AnalysisOptions

    mutating func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one trace file.") }
        try standardInputOnce(files)
    }

    func run() throws {
        var loader = ReportLoader(options: options)
        loader.keepsPartialReports = true
        let loaded = try files.map { try loader.loadInput($0) }
        let reports = loaded.map { ($0.name, $0.report) }
        switch format {
        case .json:
            if reports.count == 1 {
                print(try encodeJSON(reports[0].1))
            } else {
                print(try encodeJSON(reports.map { FileReport(file: $0.0, report: $0.1) }))
            }
        case .table:
            print(reports.map { "\($0.0)\n\n\(renderReport($0.1))" }.joined(separator: "\n\n"))
        }
        // An input cut short still printed the report of what came before the cut; the
        // command fails with the first such error.
        if let cut = loaded.compactMap(\.truncation).first {
            throw CLIFailure(exitCode: CLIFailure.dataError,
                             message: "\(cut.description) (the report above covers what was read before it)")
        }
    }
}

/// A report with the file it came from, for multi-file JSON output.
struct FileReport: Encodable {
    var file: String
    var report: RecordingReport
}
