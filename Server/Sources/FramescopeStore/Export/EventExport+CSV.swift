import Foundation
import FramescopeCore

/// The export as CSV (`Accept: text/csv`): one row per visit with its context and headline
/// figures, for a spreadsheet. A column per dimension, named and valued as the registry
/// (``QueryDimension``) and the store have it (what `GET …/events` filters match); figures
/// use the metrics' names and units (docs/metrics.md).
extension EventExport {
    /// The headline figures, as columns, of the whole visit.
    public static let csvMetrics: [Metric] = [
        .frames, .averageFPS, .droppedFrames, .dropEvents, .hitchTime, .hitchRatio, .hangs, .hangTime,
        .frozenFrames, .frameDurationP95,
    ]

    /// The header row.
    public static var csvHeader: String {
        let columns = ["cursor", "startedAt", "receivedAt"] + QueryDimension.all.map(\.queryName) + ["tags", "duration"]
            + csvMetrics.map(\.rawValue) + ["motion.hitchRatio"]
        return columns.joined(separator: ",") + "\r\n"
    }

    /// One row (RFC 4180, CRLF). A payload that no longer decodes keeps its dimension
    /// columns (the store's) and leaves the rest empty.
    public static func csvRow(_ event: StoredEvent, decoder: JSONDecoder) -> String {
        let visit = try? decoder.decode(ScreenVisitEvent.self, from: Data(event.payload.utf8))
        let startedAt: String = visit?.startedAt ?? ISO8601.format(unixSeconds: event.key.startedAt)
        let tags: String = visit.map { visit in
            visit.context.tags.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ";")
        } ?? ""
        let duration: String = visit.map { number($0.duration) } ?? ""
        var cells: [String] = [event.key.cursor, startedAt, ISO8601.format(unixSeconds: event.receivedAt)] + event.values + [tags, duration]
        for metric in csvMetrics {
            cells.append(visit.flatMap { metric.value(in: $0.report) }.map(number) ?? "")
        }
        cells.append(visit?.motion.flatMap(\.hitchRatio).map(number) ?? "")
        return cells.map(csvCell).joined(separator: ",") + "\r\n"
    }

    /// A number as CSV text: the shortest form that reads back exactly.
    static func number(_ value: Double) -> String {
        value.isFinite ? (value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)) : ""
    }

    /// One cell per RFC 4180, quoted when it holds a comma, quote or line break; a cell
    /// that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or
    /// a carriage return) gets a leading `'` first (text from devices is hostile). Numbers
    /// written by ``number(_:)`` never start that way except as negatives, which no figure is.
    static func csvCell(_ text: String) -> String {
        var cell = text
        if let first = cell.unicodeScalars.first, ["=", "+", "-", "@", "\t", "\r"].contains(first) {
            cell = "'" + cell
        }
        guard cell.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in cell.unicodeScalars {
            quoted.append(scalar)
            if scalar == "\"" { quoted.append("\"") }
        }
        quoted.append("\"")
        return String(quoted)
    }
}
