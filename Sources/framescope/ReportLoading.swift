import Foundation
import FramescopeCore
import FramescopeTraces

/// Turns the files named on the command line into reports: traces are analyzed as
/// they stream in; JSON reports written by `framescope analyze --format json` are
/// read back as they are.
struct ReportLoader {
    var options: AnalysisOptions

    func load(_ path: String) throws -> RecordingReport {
        if try isReportJSON(path) { return try decodeReport(path) }
        var source = try FileByteSource(path: path)
        let progress = ProgressLine(label: path, total: source.size)
        defer { progress.finish() }
        let report = try TraceReader(file: path).analyze(
            from: &source,
            configuration: options.configuration,
            refreshRateOverride: options.refreshRate,
            progress: progress.update
        )
        if let hz = report.inferredRefreshRate {
            progress.finish()
            writeToStandardError("framescope: \(path): no refresh rate or targetTimestamp given; inferred \(formatHz(hz)) from 20 steady intervals (pass --refresh-rate to set it)\n")
        }
        return report
    }

    /// Whether the file is a report from `analyze --format json` rather than a trace: a
    /// JSON object whose first 64 KiB hold a `"frames"` key and no `"ticks"` key.
    private func isReportJSON(_ path: String) throws -> Bool {
        let source = try FileByteSource(path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { buffer.deallocate() }
        var count = 0
        while count < buffer.count {
            let read = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
            if read == 0 { break }
            count += read
        }
        let head = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        guard TraceFormat.detect(prefix: head) == .json else { return false }
        let text = String(decoding: head, as: UTF8.self)
        return text.contains("\"frames\"") && !text.contains("\"ticks\"")
    }

    private func decodeReport(_ path: String) throws -> RecordingReport {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): cannot read: \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(RecordingReport.self, from: data)
        } catch let error as DecodingError {
            throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(path): not a Framescope trace or report: \(describe(error))")
        }
    }
}

/// A decoding error in words: the field path and what is wrong with it.
func describe(_ error: DecodingError) -> String {
    let path = error.fieldPath
    return "\(path.isEmpty ? "top level" : path): \(error.reason)"
}

/// A refresh rate for a message: whole Hz when it is one, else one decimal.
func formatHz(_ hz: Double) -> String {
    let rounded = (hz * 10).rounded() / 10
    return rounded == rounded.rounded() ? "\(Int(rounded)) Hz" : "\(rounded) Hz"
}

/// A progress line on stderr, shown only when both stdout and stderr are terminals.
final class ProgressLine {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private var shown = false
    private var lastPrinted = 0

    init(label: String, total: Int) {
        self.label = label
        self.total = total
        enabled = isTerminal(1) && isTerminal(2) && total > 8 << 20
    }

    func update(_ bytesRead: Int) {
        guard enabled, bytesRead - lastPrinted >= 4 << 20 || bytesRead == total else { return }
        lastPrinted = bytesRead
        shown = true
        let percent = total > 0 ? 100 * bytesRead / total : 0
        writeToStandardError("\r\(label): \(bytesRead >> 20) MB of \(total >> 20) MB read (\(percent) %)\u{1B}[K")
    }

    func finish() {
        if shown { writeToStandardError("\r\u{1B}[K") }
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
