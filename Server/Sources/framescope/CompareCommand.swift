import ArgumentParser
import FramescopeCore

/// `framescope compare`: two recordings side by side.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare a candidate recording with a baseline, metric by metric.",
        discussion: """
            Shows each metric's baseline and candidate value, the change, the relative change \
            (change / baseline) and the verdict in the collector's words: regressed or improved by \
            the change's sign and the metric's direction (two recordings give no confidence \
            interval, so any change counts), noSignificantChange when unchanged or for a metric \
            without a good direction (frames, duration).
            """
    )

    @Argument(help: ArgumentHelp("The baseline trace or report.", valueName: "baseline"))
    var baseline: String

    @Argument(help: ArgumentHelp("The candidate trace or report.", valueName: "candidate"))
    var candidate: String

    @Option(help: "Compare the whole recordings or only their motion (segments).")
    var scope: ComparisonScope = .recording

    @Option(help: "Output format.")
    var format: OutputFormat = .table

    @OptionGroup var options: AnalysisOptions

    mutating func validate() throws {
        try standardInputOnce([baseline, candidate])
    }

    func run() throws {
        let loader = ReportLoader(options: options)
        let baselineReport = try loader.load(baseline)
        let candidateReport = try loader.load(candidate)
        let pick: (RecordingReport, String) throws -> FrameReport = { report, file in
            switch scope {
            case .recording: return report.whole
            case .motion:
                guard let motion = report.motion else {
                    throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(displayName(file)): has no segments, so no motion to compare")
                }
                return motion
            }
        }
        let comparison = ReportComparison(baseline: try pick(baselineReport, baseline), candidate: try pick(candidateReport, candidate))
        switch format {
        case .json:
            print(try encodeJSON(ComparisonOutput(baseline: displayName(baseline), candidate: displayName(candidate), scope: scope.rawValue, comparison: comparison)))
        case .table:
            var table = TextTable(header: ["metric", "baseline", "candidate", "change", "relativeChange", "verdict"])
            for row in comparison.rows {
                let change = row.change.map { ($0 > 0 ? "+" : "") + row.metric.format($0) } ?? "—"
                let percent = row.relativeChange.map { ($0 > 0 ? "+" : "") + Metric.decimal($0 * 100, digits: 1) + " %" } ?? "—"
                let verdict = row.verdict == .noSignificantChange ? "" : row.verdict.rawValue
                table.rows.append([row.metric.rawValue, row.baseline.map(row.metric.format) ?? "—", row.candidate.map(row.metric.format) ?? "—", change, percent, verdict])
            }
            print("baseline:  \(baseline)\ncandidate: \(candidate)\nscope:     \(scope.rawValue)\n\n" + table.render())
        }
    }
}

/// Which part of two recordings `compare` sets side by side.
enum ComparisonScope: String, ExpressibleByArgument, CaseIterable {
    case recording
    case motion
}

struct ComparisonOutput: Encodable {
    var baseline: String
    var candidate: String
    var scope: String
    var comparison: ReportComparison

    enum CodingKeys: String, CodingKey { case baseline, candidate, scope, changes }

    struct Change: Encodable {
        var metric: String
        var baseline: Double?
        var candidate: Double?
        var change: Double?
        var relativeChange: Double?
        var verdict: String

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(metric, forKey: .metric)
            try container.encode(baseline, forKey: .baseline)
            try container.encode(candidate, forKey: .candidate)
            try container.encode(change, forKey: .change)
            try container.encode(relativeChange, forKey: .relativeChange)
            try container.encode(verdict, forKey: .verdict)
        }

        enum CodingKeys: String, CodingKey { case metric, baseline, candidate, change, relativeChange, verdict }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(candidate, forKey: .candidate)
        try container.encode(scope, forKey: .scope)
        try container.encode(comparison.rows.map {
            Change(metric: $0.metric.rawValue, baseline: $0.baseline, candidate: $0.candidate, change: $0.change, relativeChange: $0.relativeChange, verdict: $0.verdict.rawValue)
        }, forKey: .changes)
    }
}
