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

    @Argument(help: ArgumentHelp("Trace files (CSV or JSON) or reports from 'analyze --format json'.", valueName: "file"))
    var files: [String] = []

    @Option(help: "Output format.")
    var format: OutputFormat = .table

    @OptionGroup var options: AnalysisOptions

    mutating func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one trace file.") }
    }

    func run() throws {
        let loader = ReportLoader(options: options)
        let reports = try files.map { ($0, try loader.load($0)) }
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
    }
}

/// A report with the file it came from, for multi-file JSON output.
struct FileReport: Encodable {
    var file: String
    var report: RecordingReport
}
