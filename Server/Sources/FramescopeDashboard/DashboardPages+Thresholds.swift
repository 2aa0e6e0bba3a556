import FramescopeCollector
import FramescopeCore

/// How the pages judge a figure: by the app's bands (``AppThresholds``), read once per
/// page with the chrome, and the words that say where the bands come from.
extension DashboardPages {
    /// A figure's value and its band under the app's thresholds (`nil` for a figure
    /// without bands, such as average FPS, or one the app left without).
    static func figure(_ metric: VisitMetric, _ rollup: RollupValue, thresholds: AppThresholds) -> (value: Double?, band: Band?) {
        let value = QueryFigure(metric).value(of: rollup)
        return (value, ThresholdFigure(metric).flatMap { thresholds.band(of: value, figure: $0) })
    }

    /// Where the bands of `figure` come from, for the small note beside a judged figure:
    /// "bands: app settings", "bands: Apple's guidance (default)"; `nil` without bands.
    static func bandSource(_ figure: ThresholdFigure, thresholds: AppThresholds) -> String? {
        switch thresholds.source(of: figure) {
        case .app: "bands: app settings"
        case .default: "bands: \(defaultName(figure)) (default)"
        case .none: nil
        }
    }

    /// Whose defaults a figure's default bands are: Apple's for the hitch ratio.
    static func defaultName(_ figure: ThresholdFigure) -> String {
        figure == .hitchRatio || figure == .motionHitchRatio ? "Apple's guidance" : "Framescope's"
    }

    /// One sentence per figure with bands for the page's footer: "Hitch ratio: good below
    /// 5 ms/s, warning to 10, critical above (Apple's guidance, the default)."; then the
    /// figures without bands, if any.
    static func bandNotes(_ thresholds: AppThresholds) -> [String] {
        var notes: [String] = []
        var without: [String] = []
        for figure in ThresholdFigure.allCases {
            guard let limits = thresholds.bandLimits(for: figure) else {
                without.append(figure.label.prefix(1).lowercased() + figure.label.dropFirst())
                continue
            }
            let (scale, unit) = displayUnit(figure)
            let source = thresholds.source(of: figure) == .app ? "the app's settings" : "\(defaultName(figure)), the default"
            notes.append("\(figure.label): good below \(limitText(limits.goodBelow * scale)) \(unit), warning to \(limitText(limits.criticalAbove * scale)), "
                         + "critical above (\(source)).")
        }
        if !without.isEmpty {
            notes.append("No bands for \(without.joined(separator: ", ")) (an app sets them with framescope apps thresholds).")
        }
        return notes
    }

    /// A limit as set, without padding: `5`, `17.5`, `0.0175` (four significant digits at most).
    static func limitText(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e12 ? String(Int(value)) : String(format: "%.4g", value)
    }

    /// How a figure's limits are shown: the p95 frame duration in milliseconds, as the pages show it; the rest in their unit.
    static func displayUnit(_ figure: ThresholdFigure) -> (scale: Double, unit: String) {
        figure == .frameDurationP95 ? (1000, "ms") : (1, figure.unit)
    }

    /// The chart's reference lines for `figure`'s bands in effect, scaled as the chart's values are.
    static func referenceLines(_ figure: ThresholdFigure?, scale: Double, thresholds: AppThresholds) -> [LineChart.Threshold] {
        guard let figure, let limits = thresholds.bandLimits(for: figure) else { return [] }
        return [.init(value: limits.goodBelow * scale, label: Band.warning.rawValue), .init(value: limits.criticalAbove * scale, label: Band.critical.rawValue)]
    }

    /// The rule a verdict on the compare page follows, in words, with where its minimums come from.
    static func verdictRule(_ thresholds: AppThresholds) -> String {
        let rules = thresholds.verdictRules
        let change = limitText(rules.minimumChange * 100) + " %"
        let source = thresholds.minimumChange == nil && thresholds.minimumVisits == nil ? "Framescope's defaults" : "the app's settings"
        return "a verdict needs the interval to exclude zero, a change of at least \(change) of the baseline "
            + "and at least \(groupThousands(rules.minimumVisits)) visits of the figure on each side (\(source))"
    }
}
