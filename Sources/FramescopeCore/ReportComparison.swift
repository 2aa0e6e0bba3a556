/// Two reports side by side, metric by metric: the baseline, the candidate, the
/// change and the relative change, as the thesis compares its worst case, best
/// case and end result; in the words of the collector's `compare` route.
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

        /// change / baseline (0.5 = 50 % more), as the collector's ``relativeChange`` is;
        /// `nil` when either is missing or the baseline is 0.
        public var relativeChange: Double? {
            guard let change, let baseline, baseline != 0 else { return nil }
            return change / baseline
        }

        /// Whether the candidate regressed or improved on this metric, by the sign of the
        /// change and the metric's ``Metric/direction`` (two recordings give no interval, so
        /// any change counts); ``Verdict/noSignificantChange`` when unchanged, missing, or
        /// for a metric without a good direction.
        public var verdict: Verdict {
            guard let change else { return .noSignificantChange }
            return metric.direction.verdict(change: change)
        }
    }

    /// One row per metric in ``Metric`` order.
    public var rows: [Row]

    /// Compares `candidate` with `baseline` on `metrics`.
    public init(baseline: FrameReport, candidate: FrameReport, metrics: [Metric] = Metric.allCases) {
        rows = metrics.map { Row(metric: $0, baseline: $0.value(in: baseline), candidate: $0.value(in: candidate)) }
    }
}
