import ArgumentParser
import Foundation
import FramescopeCore

/// `compare --baseline FILE… --candidate FILE…`: several runs a side judged figure by figure
/// (``RunsComparison``), printed as a table, JSON, JUnit XML or GitHub annotations.
struct CompareRuns {
    /// The runs as given on the command line, and their reports.
    var baseline: [(path: String, report: RecordingReport)]
    var candidate: [(path: String, report: RecordingReport)]
    var comparison: RunsComparison
    var failOnInconclusive: Bool

    /// Whether the comparison fails: a gating figure regressed, or (when asked) is inconclusive.
    var failed: Bool {
        comparison.regressed || (failOnInconclusive && comparison.inconclusive)
    }

    /// `--min-change FIGURE=VALUE` as a figure and its minimum: `10%` (of the baseline's
    /// median), `2` (in the figure's unit) or both, `10%,2`.
    static func minimumChange(_ text: String) throws -> (RunFigure, MinimumChange) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let figure = RunFigure(rawValue: parts[0]) else {
            throw ValidationError("--min-change takes FIGURE=VALUE, FIGURE one of \(RunFigure.allCases.map(\.rawValue).joined(separator: ", ")); got '\(text)'")
        }
        var change = MinimumChange(relative: 0, absolute: 0)
        for value in parts[1].split(separator: ",") {
            if value.hasSuffix("%"), let percent = Double(value.dropLast()), percent.isFinite, percent >= 0 {
                change.relative = percent / 100
            } else if let amount = Double(value), amount.isFinite, amount >= 0 {
                change.absolute = amount
            } else {
                throw ValidationError("--min-change \(figure.rawValue): '\(value)' is neither a percentage like 10% nor an amount like 2")
            }
        }
        return (figure, change)
    }

    /// `--figures a,b` as gating figures.
    static func figures(_ text: String) throws -> [RunFigure] {
        let figures = try text.split(separator: ",").map { name in
            guard let figure = RunFigure(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--figures: '\(name)' is not a figure; figures: \(RunFigure.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return figure
        }
        guard !figures.isEmpty else { throw ValidationError("--figures names no figure") }
        return figures
    }

    /// `value` in `figure`'s unit, for people: ms/s and per-second rates to one decimal,
    /// counts whole, p95 durations in ms.
    static func format(_ value: Double, _ figure: RunFigure, signed: Bool = false) -> String {
        let sign = signed && value > 0 ? "+" : ""
        switch figure.unit {
        case .count: return sign + Metric.decimal(value, digits: value == value.rounded() ? 0 : 1)
        case .seconds: return sign + Metric.decimal(value * 1000, digits: 1) + " ms"
        default: return sign + Metric.decimal(value, digits: 1)
        }
    }

    /// The lowest to the highest of `values`, `—` for none.
    static func spread(_ values: [Double], _ figure: RunFigure) -> String {
        guard let low = values.min(), let high = values.max() else { return "—" }
        return low == high ? format(low, figure) : "\(format(low, figure))–\(format(high, figure))"
    }

    func table() -> String {
        let gating = comparison.rows.filter(\.gating).count
        let level = 1 - (1 - comparison.confidence) / Double(max(1, gating))
        var out = "baseline:  \(baseline.count) run\(baseline.count == 1 ? "" : "s"): \(baseline.map { displayName($0.path) }.joined(separator: " "))\n"
        out += "candidate: \(candidate.count) run\(candidate.count == 1 ? "" : "s"): \(candidate.map { displayName($0.path) }.joined(separator: " "))\n"
        out += "confidence: \(percent(comparison.confidence)) over \(gating) gating figure\(gating == 1 ? "" : "s") (each interval at \(percent(level))); * gates\n"
        if comparison.rows.contains(where: { $0.shift?.exact == false }) {
            out += "intervals: past the exact range (docs/metrics.md), ranks from the normal approximation\n"
        }
        out += "\n"
        var table = TextTable(header: ["figure", "baseline runs", "candidate runs", "change", "interval", "min change", "base spread",
                                       "noise floor", "verdict"])
        for row in comparison.rows {
            let f = row.figure
            table.rows.append([
                f.rawValue + (row.gating ? " *" : ""),
                row.baseline.map { Self.format($0, f) }.joined(separator: " "),
                row.candidate.map { Self.format($0, f) }.joined(separator: " "),
                row.shift.map { Self.format($0.estimate, f, signed: true) } ?? "—",
                row.shift.map { "[\(Self.format($0.lower, f, signed: true)), \(Self.format($0.upper, f, signed: true))]" } ?? "—",
                row.minimumChange.map { Self.format($0, f) } ?? "—",
                Self.spread(row.baseline, f),
                row.detectableChange.map { "±" + Self.format($0, f) } ?? "—",
                row.verdict.rawValue,
            ])
        }
        out += table.render()
        let verdict = failed ? (comparison.regressed ? "REGRESSED" : "INCONCLUSIVE (--fail-on-inconclusive)")
            : comparison.inconclusive ? "not regressed (inconclusive: more runs would tell)" : "not regressed"
        out += "\nverdict: \(verdict)\n"
        return out
    }

    func json() throws -> String {
        try encodeJSON(Output(comparison: comparison, baseline: baseline.map { displayName($0.path) },
                              candidate: candidate.map { displayName($0.path) }, failed: failed))
    }

    func junit() -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let cases = comparison.rows.filter(\.gating)
        let failures = cases.filter { fails($0) }.count
        xml += #"<testsuites name="framescope compare" tests="\#(cases.count)" failures="\#(failures)" errors="0">"# + "\n"
        xml += #"  <testsuite name="framescope compare" tests="\#(cases.count)" failures="\#(failures)" errors="0">"# + "\n"
        for row in cases {
            let name = escapeXML(row.figure.rawValue, inAttribute: true)
            xml += #"    <testcase name="\#(name)" classname="framescope.compare">"# + "\n"
            if fails(row) {
                let message = escapeXML(line(row), inAttribute: true)
                xml += #"      <failure message="\#(message)" type="\#(row.verdict.rawValue)">"# + escapeXML(line(row), inAttribute: false) + "</failure>\n"
            } else {
                xml += "      <system-out>" + escapeXML(line(row), inAttribute: false) + "</system-out>\n"
            }
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    func github() -> String {
        var lines: [String] = []
        for row in comparison.rows where row.gating {
            let title = "title=" + escapeWorkflowProperty("Framescope compare: \(row.figure.rawValue)")
            let kind = fails(row) ? "error" : row.verdict == .inconclusive ? "warning" : "notice"
            lines.append("::\(kind) \(title)::" + escapeWorkflowData(line(row)))
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Whether `row` fails the comparison.
    private func fails(_ row: RunsComparison.Row) -> Bool {
        row.gating && (row.verdict == .regressed || (failOnInconclusive && row.verdict == .inconclusive))
    }

    /// One row in words: the verdict, the change and interval, the runs.
    private func line(_ row: RunsComparison.Row) -> String {
        let f = row.figure
        var text = "\(f.rawValue): \(row.verdict.rawValue)"
        if let shift = row.shift {
            text += ", change \(Self.format(shift.estimate, f, signed: true)) [\(Self.format(shift.lower, f, signed: true)), "
                + "\(Self.format(shift.upper, f, signed: true))] at \(percent(shift.confidence))"
        }
        if let minimum = row.minimumChange { text += ", minimum change \(Self.format(minimum, f))" }
        text += " (\(row.reason)); baseline " + row.baseline.map { Self.format($0, f) }.joined(separator: " ")
            + "; candidate " + row.candidate.map { Self.format($0, f) }.joined(separator: " ")
        return text
    }

    private func percent(_ fraction: Double) -> String {
        Metric.decimal(fraction * 100, digits: fraction * 100 == (fraction * 100).rounded() ? 0 : 1) + " %"
    }

    /// The JSON form.
    struct Output: Encodable {
        var comparison: RunsComparison
        var baseline: [String]
        var candidate: [String]
        var failed: Bool

        struct Figure: Encodable {
            var figure: String
            var unit: String
            var gating: Bool
            var baseline: [Double]
            var candidate: [Double]
            var baselineMedian: Double?
            var candidateMedian: Double?
            var change: Double?
            var lower: Double?
            var upper: Double?
            var intervalConfidence: Double?
            /// Whether the interval's rank was counted exactly (false: the normal approximation).
            var intervalExact: Bool?
            var minimumChange: Double?
            var baselineMin: Double?
            var baselineMax: Double?
            var noiseFloor: Double?
            var verdict: String
            var reason: String

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(figure, forKey: .figure)
                try container.encode(unit, forKey: .unit)
                try container.encode(gating, forKey: .gating)
                try container.encode(baseline, forKey: .baseline)
                try container.encode(candidate, forKey: .candidate)
                try container.encode(baselineMedian, forKey: .baselineMedian)
                try container.encode(candidateMedian, forKey: .candidateMedian)
                try container.encode(change, forKey: .change)
                try container.encode(lower, forKey: .lower)
                try container.encode(upper, forKey: .upper)
                try container.encode(intervalConfidence, forKey: .intervalConfidence)
                try container.encode(intervalExact, forKey: .intervalExact)
                try container.encode(minimumChange, forKey: .minimumChange)
                try container.encode(baselineMin, forKey: .baselineMin)
                try container.encode(baselineMax, forKey: .baselineMax)
                try container.encode(noiseFloor, forKey: .noiseFloor)
                try container.encode(verdict, forKey: .verdict)
                try container.encode(reason, forKey: .reason)
            }

            enum CodingKeys: String, CodingKey {
                case figure, unit, gating, baseline, candidate, baselineMedian, candidateMedian, change, lower, upper,
                     intervalConfidence, intervalExact, minimumChange, baselineMin, baselineMax, noiseFloor, verdict, reason
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(baseline, forKey: .baseline)
            try container.encode(candidate, forKey: .candidate)
            try container.encode(comparison.confidence, forKey: .confidence)
            try container.encode(comparison.regressed, forKey: .regressed)
            try container.encode(failed, forKey: .failed)
            try container.encode(comparison.rows.map { row in
                Figure(figure: row.figure.rawValue, unit: row.figure.unit.symbol, gating: row.gating, baseline: row.baseline,
                       candidate: row.candidate, baselineMedian: row.baselineMedian, candidateMedian: row.candidateMedian,
                       change: row.shift?.estimate, lower: row.shift?.lower, upper: row.shift?.upper,
                       intervalConfidence: row.shift?.confidence, intervalExact: row.shift?.exact, minimumChange: row.minimumChange,
                       baselineMin: row.baseline.min(), baselineMax: row.baseline.max(), noiseFloor: row.detectableChange,
                       verdict: row.verdict.rawValue, reason: row.reason)
            }, forKey: .figures)
        }

        enum CodingKeys: String, CodingKey { case baseline, candidate, confidence, regressed, failed, figures }
    }
}
