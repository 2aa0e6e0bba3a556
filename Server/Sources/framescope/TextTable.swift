import FramescopeCore

/// A plain-text table: a header row, then rows, columns padded to their widest
/// cell; the first column left-aligned, the others right-aligned.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    func render() -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// The rows `analyze` shows: every metric except the ones that only count data.
let tableMetrics: [Metric] = Metric.allCases

/// A metric's value for a table cell: formatted with its unit, "—" without data.
func cell(_ metric: Metric, _ report: FrameReport?) -> String {
    guard let report, let value = metric.value(in: report) else { return "—" }
    return metric.format(value)
}

/// The table `analyze` prints for one recording: whole and motion, then one line per segment.
func renderReport(_ report: RecordingReport) -> String {
    var table = TextTable(header: report.motion == nil ? ["metric", "recording"] : ["metric", "recording", "motion"])
    for metric in tableMetrics {
        var row = [metric.rawValue, report.coverage?.withholding(metric) == nil ? cell(metric, report.whole) : "— (withheld)"]
        if report.motion != nil { row.append(cell(metric, report.motion)) }
        table.rows.append(row)
    }
    table.rows.append(["refreshRates", refreshRatesText(report.whole)] + (report.motion.map { [refreshRatesText($0)] } ?? []))
    if let coverage = report.coverage {
        table.rows.append(["measured", "\(formatToolValue(coverage.measuredSeconds)) s of \(formatToolValue(coverage.traceSeconds)) s"] + (report.motion == nil ? [] : ["—"]))
    }
    var text = table.render()
    if !report.toolFigures.isEmpty { text += "\n\n" + renderToolFigures(report) }
    if !report.metadata.isEmpty {
        // What the recording's tool wrote about the capture (CapFrameX: the game, GPU, CPU).
        var metadata = TextTable(header: ["recording", "as the tool wrote it"])
        metadata.rows = report.metadata.map { [$0.key, $0.value.isEmpty ? "—" : $0.value] }
        text += "\n\n" + metadata.render()
    }
    if !report.segments.isEmpty {
        var segments = TextTable(header: ["segment", "frames", "dropEvents", "maxDroppedFrames", "hitchRatio", "averageFPS", "frameDuration.p95"])
        for segment in report.segments {
            segments.rows.append([
                segment.label,
                cell(.frames, segment.report), cell(.dropEvents, segment.report), cell(.maxDroppedFrames, segment.report),
                cell(.hitchRatio, segment.report), cell(.averageFPS, segment.report), cell(.frameDurationP95, segment.report),
            ])
        }
        text += "\n\n" + segments.render()
    }
    return text
}

/// "60 Hz: 1200, 120 Hz: 30" — frames per nominal refresh rate.
func refreshRatesText(_ report: FrameReport) -> String {
    report.refreshRates.entries.isEmpty ? "—" : report.refreshRates.entries.map { "\($0.key) Hz: \($0.count)" }.joined(separator: ", ")
}

/// The recording's own tool's figures beside Framescope's: the figure's value as the tool
/// printed it, then Framescope's exact figure for the same thing, or its metrics for the
/// nearest things in the same report.
func renderToolFigures(_ report: RecordingReport) -> String {
    let tools = report.toolFigures.reduce(into: [String]()) { if !$0.contains($1.tool) { $0.append($1.tool) } }
    return tools.map { tool in
        var table = TextTable(header: ["\(tool)\(tool.hasSuffix("s") ? "'" : "'s") figure", tool, "Framescope"])
        for figure in report.toolFigures where figure.tool == tool {
            let ours: String
            if let own = figure.framescope {
                let names = figure.metrics.map(\.rawValue).joined(separator: ", ")
                ours = "\(formatToolValue(own)) \(figure.unit)" + (names.isEmpty ? "" : " (\(names) by Framescope's rule)")
            } else if figure.metrics.isEmpty {
                ours = "—"
            } else {
                ours = figure.metrics.map { "\($0.rawValue) \(cell($0, report.whole))" }.joined(separator: ", ")
            }
            table.rows.append([figure.label, "\(formatToolValue(figure.value)) \(figure.unit)", ours])
        }
        return table.render()
    }.joined(separator: "\n\n")
}

/// A tool's figure: whole numbers as they are, others rounded to two decimals.
func formatToolValue(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String((value * 100).rounded() / 100)
}
