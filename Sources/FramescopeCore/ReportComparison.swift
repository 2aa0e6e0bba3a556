/// Two reports side by side, metric by metric: the baseline, the candidate, the
/// change and the change in percent, as the thesis compares its worst case, best
/// case and end result.
public struct ReportComparison: Sendable, Hashable {
    /// One metric's row.
    public struct Row: Sendable, Hashable {
        /// The metric compared.
        public var metric: Metric
        /// Its value in the baseline, in the metric's unit.
        public var baseline: Double?
        /// Its value in the candidate.
        public var candidate: Double?

        /// candidate − baseline; `nil` when either is missing.
        public var change: Double? {
            guard let baseline, let candidate else { return nil }
            return candidate - baseline
        }

        /// 100 · change / |baseline|; `nil` when either is missing or the baseline is 0.
        public var changePercent: Double? {
            guard let change, let baseline, baseline != 0 else { return nil }
            return 100 * change / abs(baseline)
        }

        /// Whether the candidate is better, worse, or neither on this metric.
        public var verdict: Verdict {
            guard let change, change != 0 else { return .same }
            switch metric.direction {
            case .neutral: return .same
            case .higherIsBetter: return change > 0 ? .better : .worse
            case .lowerIsBetter: return change < 0 ? .better : .worse
            }
        }
    }

    /// How the candidate fares on one metric.
    public enum Verdict: String, Sendable, Hashable {
        /// Moved in the good direction.
        case better
        /// Moved in the bad direction.
        case worse
        /// Unchanged, not comparable, or a metric without a good direction.
        case same
    }

    /// One row per metric in ``Metric`` order.
    public var rows: [Row]

    /// Compares `candidate` with `baseline` on `metrics`.
    public init(baseline: FrameReport, candidate: FrameReport, metrics: [Metric] = Metric.allCases) {
        rows = metrics.map { Row(metric: $0, baseline: $0.value(in: baseline), candidate: $0.value(in: candidate)) }
    }
}
