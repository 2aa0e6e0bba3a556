import ArgumentParser
import Foundation
import FramescopeCore

/// `framescope compare`: a candidate against a baseline, one recording a side or several
/// runs a side with a statistical verdict.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare a candidate with a baseline: one recording a side, or several runs a side with a verdict.",
        discussion: """
            Several runs a side (--baseline FILE… --candidate FILE…, shell globs welcome; a \
            folder stands for the files in it, by name, so thousands of runs need no long \
            command line): per \
            figure, each run's value, the shift's estimate (Hodges–Lehmann) with its confidence \
            interval (Mann–Whitney, Bonferroni-corrected over the gating figures), the minimum \
            change that matters, the noise floor of the baseline's runs and a verdict: regressed, \
            improved, noSignificantChange or inconclusive (too few runs, or an interval that \
            cannot rule out a change that matters). Exits 1 when a gating figure (--figures, \
            default motionHitchRatio,dropEvents) regressed, or with --fail-on-inconclusive is \
            inconclusive; 0 otherwise. docs/metrics.md says how to read it.

            One recording a side (two files): each metric's baseline and candidate value, the \
            change, the relative change and the verdict by the change's sign alone (no interval); \
            exits 0.
            """
    )

    @Argument(help: ArgumentHelp("The baseline and the candidate (one recording a side).", valueName: "file"))
    var files: [String] = []

    @Option(name: .customLong("baseline"), parsing: .upToNextOption,
            help: ArgumentHelp("The baseline's runs: traces or reports, or folders of them.", valueName: "file"))
    var baselineRuns: [String] = []

    @Option(name: .customLong("candidate"), parsing: .upToNextOption,
            help: ArgumentHelp("The candidate's runs: traces or reports, or folders of them.", valueName: "file"))
    var candidateRuns: [String] = []

    @Option(help: "One recording a side: compare the whole recordings or only their motion (segments).")
    var scope: ComparisonScope = .recording

    @Option(help: "Output format (junit and github: several runs a side).")
    var format: CheckFormat = .table

    @Option(help: ArgumentHelp("The gating figures, comma-separated (default motionHitchRatio,dropEvents; hitchRatio,dropEvents when no run has motion): \(RunFigure.allCases.map(\.rawValue).joined(separator: ", ")).",
                               valueName: "figures"))
    var figures: String?

    @Option(name: .customLong("min-change"),
            help: ArgumentHelp("A figure's smallest change that matters: FIGURE=10%, FIGURE=2 (its unit) or FIGURE=10%,2; repeatable.",
                               valueName: "figure=value"))
    var minimumChanges: [String] = []

    @Option(help: "The confidence over the gating figures together, 0.5–0.999.")
    var confidence: Double = 0.95

    @Flag(help: "Exit 1 also when a gating figure is inconclusive.")
    var failOnInconclusive = false

    @OptionGroup var options: AnalysisOptions

    /// Whether this is the runs form.
    var comparesRuns: Bool { !baselineRuns.isEmpty || !candidateRuns.isEmpty }

    mutating func validate() throws {
        if comparesRuns {
            guard !baselineRuns.isEmpty, !candidateRuns.isEmpty else {
                throw ValidationError("Give runs for both sides: --baseline FILE… --candidate FILE….")
            }
            guard files.isEmpty else {
                throw ValidationError("Give either two files (one recording a side) or --baseline and --candidate, not both.")
            }
            guard confidence.isFinite, (0.5...0.999).contains(confidence) else { throw ValidationError("--confidence must be 0.5–0.999") }
            if let figures { _ = try CompareRuns.figures(figures) }
            for text in minimumChanges { _ = try CompareRuns.minimumChange(text) }
            try standardInputOnce(baselineRuns + candidateRuns)
            return
        }
        guard files.count == 2 else {
            throw ValidationError("Give a baseline and a candidate file, or several runs a side with --baseline FILE… --candidate FILE….")
        }
        guard format == .table || format == .json else {
            throw ValidationError("--format \(format.rawValue) needs several runs a side (--baseline FILE… --candidate FILE…)")
        }
        try standardInputOnce(files)
    }

    func run() throws {
        let loader = ReportLoader(options: options)
        if comparesRuns {
            let baseline = try Self.runFiles(baselineRuns).map { (path: $0, report: try loader.load($0)) }
            let candidate = try Self.runFiles(candidateRuns).map { (path: $0, report: try loader.load($0)) }
            var gating = try figures.map(CompareRuns.figures) ?? RunFigure.defaultGating
            if figures == nil, !(baseline + candidate).contains(where: { $0.report.motion != nil }) {
                // Recordings without segments (a Chrome trace, a plain CSV) have no motion to judge.
                gating = gating.map { $0 == .motionHitchRatio ? .hitchRatio : $0 }
                writeToStandardError("framescope: no run has motion (segments): hitchRatio gates in place of motionHitchRatio\n")
            }
            let minimums = Dictionary(try minimumChanges.map(CompareRuns.minimumChange), uniquingKeysWith: { $1 })
            let comparison = RunsComparison(baseline: baseline.map(\.report), candidate: candidate.map(\.report), gating: gating,
                                            confidence: confidence, minimumChanges: minimums)
            let runs = CompareRuns(baseline: baseline, candidate: candidate, comparison: comparison, failOnInconclusive: failOnInconclusive)
            switch format {
            case .table: print(runs.table(), terminator: "")
            case .json: print(try runs.json())
            case .junit: print(runs.junit(), terminator: "")
            case .github: print(runs.github(), terminator: "")
            }
            if runs.failed { throw ExitCode(CLIFailure.budgetFailed) }
            return
        }
        let (baseline, candidate) = (files[0], files[1])
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
        case .json, .junit, .github:
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

extension CompareCommand {
    /// The runs `paths` name: a file as it is, a folder as its files (not hidden, by name).
    /// A folder holding none is an error (exit 65) naming it.
    static func runFiles(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
                files.append(path)
                continue
            }
            let folder = URL(fileURLWithPath: path, isDirectory: true)
            let entries: [URL]
            do {
                entries = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.isRegularFileKey],
                                                                      options: [.skipsHiddenFiles])
            } catch {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): the folder cannot be read (\(error.localizedDescription))")
            }
            let runs = entries.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
                .map { folder.appendingPathComponent($0.lastPathComponent).path }
                .sorted()
            guard !runs.isEmpty else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(path): a folder with no runs in it")
            }
            files += runs
        }
        return files
    }
}
