import Foundation
import FramescopeCore
import FramescopeTraces

/// Reads a `framescope export` file (NDJSON) back into a report: each line's visit report
/// merged into the whole, its motion into motion, and one segment per screen that moved
/// (the merge of that screen's motion: a report's segments are its motion, split), so
/// `analyze` prints per-screen figures in motion and a budget's `eachSegment` limits apply
/// per screen.
///
/// A line that is not an export line (not JSON, or a report that does not decode) is
/// skipped with a note naming the file and line; the other lines still count.
struct ExportLoader {
    /// The longest line read, in bytes (a visit's JSON is a few kilobytes).
    static let maximumLineBytes = 4 << 20

    /// One line of the export: the visit, whose reports are JSON objects or the compact
    /// binary form, as the device sent them.
    struct Line: Decodable {
        var event: ScreenVisitEvent
    }

    /// Whether the content starts as an export does: `{"cursor":"`.
    static func isExport(_ head: [UInt8]) -> Bool {
        head.starts(with: Array(#"{"cursor":""#.utf8))
    }

    /// The merged report of every line of `input`.
    /// - Throws: ``CLIFailure`` (74) when reading fails, (65) when no line is an export line
    ///   or a line is longer than ``maximumLineBytes``.
    static func report(from input: TraceInput, note: (String) -> Void) throws -> RecordingReport {
        let decoder = JSONDecoder()
        var whole = FrameReport()
        var motion = FrameReport()
        var screens: [String: FrameReport] = [:]
        var lineNumber = 0
        var visits = 0
        var skipped = 0
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        func take(_ bytes: ArraySlice<UInt8>) {
            lineNumber += 1
            guard !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) else { return }
            do {
                let parsed = try decoder.decode(Line.self, from: Data(bytes))
                whole.merge(parsed.event.report)
                if let visitMotion = parsed.event.motion { motion.merge(visitMotion) }
                if let visitMotion = parsed.event.motion { screens[parsed.event.screen, default: FrameReport()].merge(visitMotion) }
                visits += 1
            } catch let error as DecodingError {
                skipped += 1
                if skipped <= 10 { note("line \(lineNumber): skipped, not an export line: \(describe(error))") }
            } catch {
                skipped += 1
                if skipped <= 10 { note("line \(lineNumber): skipped: \(error)") }
            }
        }
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try input.read(into: $0) }
            } catch let error as TraceError {
                throw CLIFailure(exitCode: error.kind == .io ? CLIFailure.ioError : CLIFailure.dataError, message: "\(input.name): \(error.message)")
            }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where chunk[index] == 0x0A {
                line.append(contentsOf: chunk[start..<index])
                take(line[...])
                line.removeAll(keepingCapacity: true)
                start = index + 1
            }
            line.append(contentsOf: chunk[start..<count])
            if line.count > maximumLineBytes {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(input.name):\(lineNumber + 1): a line longer than \(maximumLineBytes >> 20) MiB is not an export line")
            }
        }
        if !line.isEmpty { take(line[...]) }
        if skipped > 10 { note("\(skipped) lines skipped in all") }
        guard visits > 0 else {
            throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(input.name): no line is a visit from `framescope export`")
        }
        var report = RecordingReport(whole: whole, motion: motion.frames > 0 ? motion : nil)
        report.segments = screens.sorted { $0.key < $1.key }.map { SegmentReport(label: $0.key, report: $0.value) }
        return report
    }
}
