import ArgumentParser
import Foundation
import FramescopeCore
import FramescopeTraces

/// Turns the recordings named on the command line into reports: traces are analyzed as
/// they stream in; JSON reports written by `framescope analyze --format json` are read
/// back as they are.
///
/// Each input is opened once and read once (``TraceInput``), so `-` (standard input), a
/// FIFO and a process substitution work like a file, and gzip is read through.
struct ReportLoader {
    var options: AnalysisOptions
    /// Whether an input cut short (a gzip stream without its end) still gives the report of
    /// what came before the cut, with ``RecordingReport`` and the error both returned;
    /// otherwise the error is thrown.
    var keepsPartialReports = false

    /// What was made of one input.
    struct Loaded {
        /// The name reports and tables use: the path, or `stdin`.
        var name: String
        var report: RecordingReport
        /// Set when the input was cut short and `report` covers what came before the cut.
        var truncation: TraceError?
    }

    /// The largest report JSON read back whole, in bytes.
    static let maximumReportBytes = 256 << 20

    func load(_ path: String) throws -> RecordingReport {
        try loadInput(path).report
    }

    func loadInput(_ path: String) throws -> Loaded {
        let input = try TraceInput(file: try openAnnouncingTerminal(path, reading: "a recording"))
        let head = try input.peek(64 << 10)
        if head.isEmpty {
            throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(input.name): is empty; expected a trace (CSV or JSON) or a report")
        }
        if options.inputFormat == nil, ExportLoader.isExport(head) {
            let name = input.name
            return Loaded(name: name, report: try ExportLoader.report(from: input) { writeToStandardError("framescope: \(name): \($0)\n") })
        }
        if options.inputFormat == nil, Self.isReportJSON(head) { return Loaded(name: input.name, report: try decodeReport(input)) }
        var source = input
        let progress = ProgressLine(input: input)
        defer { progress.finish() }
        let outcome = analyze(&source, progress: progress)
        let report: RecordingReport
        switch outcome {
        case let .success(value):
            report = value
        case let .failure(error):
            guard error.truncated, keepsPartialReports, let partial = error.partialReport else { throw error }
            progress.finish()
            return Loaded(name: input.name, report: partial, truncation: error)
        }
        return Loaded(name: input.name, report: report)
    }

    private func analyze(_ source: inout TraceInput, progress: ProgressLine) -> Result<RecordingReport, TraceError> {
        let name = source.name
        do throws(TraceError) {
            return .success(try TraceReader(file: name).analyze(
                from: &source,
                format: options.inputFormat,
                configuration: options.configuration,
                refreshRateOverride: options.refreshRate,
                process: options.process,
                progress: { _ in progress.update() },
                note: { message in
                    progress.finish()
                    writeToStandardError("framescope: \(name): \(message)\n")
                }
            ))
        } catch {
            return .failure(error)
        }
    }

    /// Whether the content is a report from `analyze --format json` rather than a trace: a
    /// JSON object whose first 64 KiB hold a `"frames"` key and no `"ticks"` key.
    private static func isReportJSON(_ head: [UInt8]) -> Bool {
        guard TraceFormat.detect(prefix: head) == .json else { return false }
        let text = String(decoding: head, as: UTF8.self)
        return text.contains("\"frames\"") && !text.contains("\"ticks\"")
    }

    private func decodeReport(_ input: TraceInput) throws -> RecordingReport {
        let bytes = try input.readAll(limit: Self.maximumReportBytes)
        do {
            return try JSONDecoder().decode(RecordingReport.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(input.name): not a Framescope trace or report: \(describe(error))")
        }
    }
}

/// Opens `path` (`-`: standard input) and, when standard input is a terminal, says on
/// stderr what the command waits for, before the first read could block.
/// - Parameter what: what is read, for the message ("a recording", "a budget").
func openAnnouncingTerminal(_ path: String, reading what: String) throws(TraceError) -> FileByteSource {
    let file = try FileByteSource(path: path)
    if file.isInteractive {
        writeToStandardError("framescope: reading \(what) from standard input; pipe one in or name a file\n")
    }
    return file
}

/// The usage error when more than one of `paths` is `-`: standard input can be read once.
func standardInputOnce(_ paths: [String]) throws {
    if paths.filter({ $0 == "-" }).count > 1 {
        throw ValidationError("'-' (standard input) can be given once per command: it can be read only once.")
    }
}

/// How a path is named in reports and tables: `stdin` for `-`.
func displayName(_ path: String) -> String {
    path == "-" ? "stdin" : path
}

/// A decoding error in words: the field path and what is wrong with it.
func describe(_ error: DecodingError) -> String {
    let path = error.fieldPath
    return "\(path.isEmpty ? "top level" : path): \(error.reason)"
}

/// A progress line on stderr, shown only when both stdout and stderr are terminals and the
/// input is large (over 8 MB) or of unknown size (a pipe): a bar and the share of the file
/// when its size is known, the megabytes read and the rate, and for gzip the uncompressed
/// bytes too.
final class ProgressLine {
    private let input: TraceInput
    private let enabled: Bool
    private let started = ContinuousClock.now
    private var shown = false
    private var lastPrinted = 0

    init(input: TraceInput) {
        self.input = input
        enabled = isTerminal(1) && isTerminal(2) && (input.file.size.map { $0 > 8 << 20 } ?? true)
    }

    func update() {
        let read = input.fileBytesRead
        guard enabled, read - lastPrinted >= 4 << 20 || read == input.file.size else { return }
        lastPrinted = read
        shown = true
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var line = "\r" + Self.render(name: input.name, read: read, total: input.file.size, seconds: seconds)
        if input.isCompressed { line += ", \(input.contentBytesRead >> 20) MB uncompressed" }
        writeToStandardError(line + "\u{1B}[K")
    }

    /// The line without its carriage return: a bar of 20 cells and the share when the size
    /// is known, the megabytes read, and the rate.
    /// `trace.csv [██████░░░░░░░░░░░░░░] 30 % 120 of 400 MB, 210 MB/s`
    static func render(name: String, read: Int, total: Int?, seconds: Double) -> String {
        let rate = seconds > 0 ? Int(Double(read) / 1_048_576 / seconds) : 0
        guard let total, total > 0 else { return "\(name): \(read >> 20) MB read, \(rate) MB/s" }
        let share = min(100, 100 * read / total)
        let filled = share / 5
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: 20 - filled)
        return "\(name) [\(bar)] \(share) % \(read >> 20) of \(total >> 20) MB, \(rate) MB/s"
    }

    func finish() {
        if shown { writeToStandardError("\r\u{1B}[K") }
        shown = false
    }
}

/// JSON as the CLI prints it: indented, keys sorted so output is stable.
func encodeJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    return String(decoding: data, as: UTF8.self)
}

/// Writes `text` to the file at `path`, or to stdout when `path` is `nil`; a file that
/// cannot be written is an I/O failure (exit 74).
func writeOutput(_ text: String, to path: String?) throws {
    guard let path else {
        FileHandle.standardOutput.write(Data(text.utf8))
        return
    }
    do {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): cannot write: \(error.localizedDescription)")
    }
}
