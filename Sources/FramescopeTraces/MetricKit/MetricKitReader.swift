import FramescopeCore

/// Maps MetricKit payloads (``MetricKitParser``) to the parts of a report they can fill.
///
/// MetricKit has no frame times. Each hang diagnostic is one frame as long as its
/// `hangDuration` (``TraceEvent/frames(duration:count:)``), so the report's hang figures
/// are Apple's hangs measured by Framescope's threshold; Apple's own figures — the count
/// and longest of the hang diagnostics, the scroll hitch time ratio and the hang-time
/// histogram — are kept beside them (``ToolFigure``). Who sent each payload and for what
/// period, the diagnostics that are not about frames (crashes, CPU and disk exceptions)
/// and every value skipped are said in notes. Field by field: `docs/traces.md`.
struct MetricKitReader {
    let file: String

    /// The tool's name in ``ToolFigure/tool``.
    static let tool = "MetricKit"

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        note: (String) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var payloads = 0
        var figures: [(ToolFigure, Int)] = []
        var hangs = 0
        var longest = 0.0
        var hangLine = 0
        var ratios: [(Double, String, Int)] = []
        var histogram: [MetricKitBucket] = []
        var histogramLine = 0
        var other: [MetricKitDiagnosticCount] = []
        try MetricKitParser(file: file).read(from: &source, progress: progress) { (payload, line) throws(TraceError) in
            payloads += 1
            note("payload \(payloads): \(Self.describe(payload))")
            for issue in payload.issues {
                note("line \(issue.line): \(issue.field): \(issue.message); skipped")
            }
            for duration in payload.hangDurations {
                try handle(.frames(duration: duration, count: 1), line)
            }
            if !payload.hangDurations.isEmpty, hangLine == 0 { hangLine = line }
            hangs += payload.hangDurations.count
            longest = max(longest, payload.hangDurations.max() ?? 0)
            if let ratio = payload.scrollHitchTimeRatio { ratios.append((ratio, Self.period(payload), line)) }
            for bucket in payload.hangTimeHistogram {
                if histogramLine == 0 { histogramLine = line }
                if let index = histogram.firstIndex(where: { $0.start == bucket.start && $0.end == bucket.end }) {
                    histogram[index].count = histogram[index].count.addingReportingOverflow(bucket.count).overflow ? Int.max : histogram[index].count + bucket.count
                } else if histogram.count < MetricKitParser.maximumBuckets {
                    histogram.append(bucket)
                }
            }
            for diagnostics in payload.otherDiagnostics {
                if let index = other.firstIndex(where: { $0.kind == diagnostics.kind }) { other[index].count += diagnostics.count } else { other.append(diagnostics) }
            }
        }
        guard payloads > 0 else { throw TraceError(kind: .data, file: file, message: "an empty list: no MetricKit payload in it") }
        if hangs > 0 || ratios.isEmpty && histogram.isEmpty {
            figures.append((ToolFigure(tool: Self.tool, label: "Hang diagnostics", value: Double(hangs), unit: "count", metrics: [.hangs]), hangLine))
            if hangs > 0 {
                figures.append((ToolFigure(tool: Self.tool, label: "Longest hang diagnostic", value: longest * 1000, unit: "ms", metrics: [.frameDurationMax]), hangLine))
            }
        }
        for (ratio, period, line) in ratios {
            let label = ratios.count == 1 ? "Scroll hitch time ratio" : "Scroll hitch time ratio, \(period)"
            figures.append((ToolFigure(tool: Self.tool, label: label, value: ratio, unit: "ms/s"), line))
        }
        for bucket in histogram {
            let label = "App hang time \(Self.milliseconds(bucket.start))–\(Self.milliseconds(bucket.end)) ms"
            figures.append((ToolFigure(tool: Self.tool, label: label, value: Double(bucket.count), unit: "count"), histogramLine))
        }
        for (figure, line) in figures { try handle(.toolFigure(figure), max(line, 1)) }
        if !other.isEmpty {
            note("not about frames, so not read: " + other.map { "\($0.count) \(Self.kindName($0.kind))\($0.count == 1 ? "" : "s")" }.joined(separator: ", "))
        }
        if hangs == 0, ratios.isEmpty, histogram.isEmpty {
            note("no hang diagnostics, scroll hitch ratio or hang-time histogram in the payload: the report has no frames")
        }
    }

    /// "2020-10-10 04:00 – 2020-10-11 03:59 UTC, iPhone OS 14.0.1 (18A393), iPhone10,2, app 1.0 (1)".
    static func describe(_ payload: MetricKitPayload) -> String {
        var parts = [period(payload)]
        if let os = payload.osVersion { parts.append(os.printable()) }
        if let device = payload.deviceType { parts.append(device.printable()) }
        var app = [payload.bundleIdentifier, payload.appVersion].compactMap { $0?.printable() }
        if let build = payload.appBuildVersion { app.append("(\(build.printable()))") }
        if !app.isEmpty { parts.append("app " + app.joined(separator: " ")) }
        return parts.joined(separator: ", ")
    }

    /// The payload's period in UTC, or "no period".
    static func period(_ payload: MetricKitPayload) -> String {
        guard let begin = payload.begin else { return payload.end.map { "until \(utc($0))" } ?? "no period" }
        guard let end = payload.end, end != begin else { return utc(begin) }
        return "\(utc(begin)) – \(utc(end))"
    }

    /// "2020-10-10 04:00 UTC" for Unix seconds.
    static func utc(_ time: Double) -> String {
        let seconds = Int(time.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (year, month, day) = ISO8601.civilDate(daysSinceEpoch: Int64(days))
        func two(_ value: Int64) -> String { zeroPadded(value, width: 2) }
        return "\(year)-\(two(month))-\(two(day)) \(two(Int64(rest / 3600))):\(two(Int64(rest % 3600 / 60))) UTC"
    }

    static func milliseconds(_ seconds: Double) -> String {
        let value = seconds * 1000
        return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// "crash diagnostic" for `crashDiagnostics`.
    static func kindName(_ kind: String) -> String {
        var words = ""
        for character in kind.dropLast("Diagnostics".count) {
            if character.isUppercase { words += " " + character.lowercased() } else { words.append(character) }
        }
        return words + " diagnostic"
    }
}
