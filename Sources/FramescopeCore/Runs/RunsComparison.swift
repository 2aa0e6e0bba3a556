/// Several runs a side of one scroll script, figure by figure: per figure, the values of
/// each run, the shift's estimate with its interval (``ShiftInterval``) and a verdict, and
/// whether the figure gates.
///
/// - **regressed / improved**: the interval excludes no change and the estimate is at least
///   the figure's minimum change, worse / better.
/// - **noSignificantChange**: the interval includes no change and lies within ± the minimum
///   change (no change that matters is left), or it excludes no change but the estimate is
///   under the minimum (real, too small to matter).
/// - **inconclusive**: too few runs for an interval at the level, or the interval includes
///   no change but reaches past the minimum change (a change that matters cannot be ruled out).
///
/// The intervals are Bonferroni-corrected for the gating figures: each is at
/// `1 − (1 − confidence) / gating.count`, so with no change anywhere the chance that any
/// gating figure is called regressed is at most `(1 − confidence) / 2`.
public struct RunsComparison: Sendable, Hashable {
    /// One figure's judgement.
    public struct Row: Sendable, Hashable {
        /// The figure.
        public var figure: RunFigure
        /// Its value in each baseline run that has it, in run order.
        public var baseline: [Double]
        /// Its value in each candidate run that has it, in run order.
        public var candidate: [Double]
        /// The baseline's median.
        public var baselineMedian: Double?
        /// The candidate's median.
        public var candidateMedian: Double?
        /// The shift and its interval, nil when the runs are too few.
        public var shift: ShiftInterval?
        /// The minimum change that matters for this baseline, in the figure's unit.
        public var minimumChange: Double?
        /// The smallest change these runs could detect: the half-width of the interval the
        /// baseline's runs would give against themselves (their noise floor), nil with too few.
        public var detectableChange: Double?
        /// The verdict.
        public var verdict: Verdict
        /// Why, in a few words (for the table and the JUnit message).
        public var reason: String
        /// Whether the figure gates (its regression fails the comparison).
        public var gating: Bool
    }

    /// The figures, in ``RunFigure`` order.
    public var rows: [Row]
    /// The confidence of the comparison as a whole (family-wise over the gating figures).
    public var confidence: Double

    /// Whether a gating figure regressed.
    public var regressed: Bool { rows.contains { $0.gating && $0.verdict == .regressed } }
    /// Whether a gating figure is inconclusive.
    public var inconclusive: Bool { rows.contains { $0.gating && $0.verdict == .inconclusive } }

    /// Judges `candidate` runs against `baseline` runs (reports of the same script) on
    /// `figures`, the `gating` ones gating, at `confidence` (family-wise over the gating
    /// figures), with each figure's minimum change from `minimumChanges` or its default.
    public init(baseline: [RecordingReport], candidate: [RecordingReport], figures: [RunFigure] = RunFigure.allCases,
                gating: [RunFigure] = RunFigure.defaultGating, confidence: Double = 0.95,
                minimumChanges: [RunFigure: MinimumChange] = [:]) {
        self.confidence = confidence
        // Exact: `confidence` as the decimal it prints as, α a fraction (SignificanceLevel).
        let alpha = SignificanceLevel(confidence: confidence, comparisons: max(1, gating.count))
        var ranks = CriticalRanks()
        rows = figures.map { figure in
            Self.judge(figure, baseline: baseline.compactMap(figure.value(in:)), candidate: candidate.compactMap(figure.value(in:)),
                       alpha: alpha, minimum: minimumChanges[figure] ?? figure.defaultMinimumChange, gating: gating.contains(figure),
                       ranks: &ranks)
        }
    }

    /// One figure's row from its values per run.
    /// `alpha` is each interval's level (nil when the confidence asked for is not one: no interval).
    public static func judge(_ figure: RunFigure, baseline: [Double], candidate: [Double], alpha: SignificanceLevel?,
                             minimum: MinimumChange, gating: Bool) -> Row {
        var ranks = CriticalRanks()
        return judge(figure, baseline: baseline, candidate: candidate, alpha: alpha, minimum: minimum, gating: gating, ranks: &ranks)
    }

    /// As ``judge(_:baseline:candidate:alpha:minimum:gating:)``, with the ranks already counted.
    static func judge(_ figure: RunFigure, baseline: [Double], candidate: [Double], alpha: SignificanceLevel?,
                      minimum: MinimumChange, gating: Bool, ranks: inout CriticalRanks) -> Row {
        let baselineMedian = median(baseline)
        let candidateMedian = median(candidate)
        var row = Row(figure: figure, baseline: baseline, candidate: candidate, baselineMedian: baselineMedian,
                      candidateMedian: candidateMedian, shift: nil, minimumChange: nil, detectableChange: nil,
                      verdict: .inconclusive, reason: "", gating: gating)
        guard let alpha else {
            row.reason = "no interval: the confidence is not a level between 0 and 1"
            return row
        }
        row.detectableChange = noiseFloor(baseline, alpha: alpha, ranks: &ranks)
        guard let baselineMedian, let shift = ShiftInterval(baseline: baseline, candidate: candidate, level: alpha, ranks: &ranks) else {
            row.reason = "too few runs: \(baseline.count) and \(candidate.count) give no interval at \(percent(alpha.confidence))"
            return row
        }
        let needed = minimum.amount(baselineMedian: baselineMedian)
        row.shift = shift
        row.minimumChange = needed
        if shift.excludesZero {
            if abs(shift.estimate) >= needed {
                row.verdict = figure.direction.verdict(change: shift.estimate)
                row.reason = "the interval excludes no change and the change reaches the minimum"
            } else {
                row.verdict = .noSignificantChange
                row.reason = "a real change, under the minimum that matters"
            }
        } else if max(abs(shift.lower), abs(shift.upper)) > needed {
            row.verdict = .inconclusive
            row.reason = "the interval includes no change but reaches past the minimum: more runs would tell"
        } else {
            row.verdict = .noSignificantChange
            row.reason = "the interval lies within ± the minimum change"
        }
        return row
    }

    /// The half-width of the interval a sample gives against itself shifted by nothing: the
    /// smallest change runs this noisy could detect. Nil with too few runs.
    static func noiseFloor(_ values: [Double], alpha: SignificanceLevel, ranks: inout CriticalRanks) -> Double? {
        guard let interval = ShiftInterval(baseline: values, candidate: values, level: alpha, ranks: &ranks) else { return nil }
        return (interval.upper - interval.lower) / 2
    }

    /// The median of `values`, nil for none.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private static func percent(_ fraction: Double) -> String {
        let tenths = (fraction * 1000).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) %" : "\(tenths) %"
    }
}
