/// How a candidate fares against a baseline on one figure: the one vocabulary of the
/// collector's `compare` route, the dashboard's compare page and `framescope compare`.
public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
    /// Worse in the candidate (significantly so, where an interval is known).
    case regressed
    /// Better in the candidate (significantly so, where an interval is known).
    case improved
    /// Unchanged; or the interval includes no change, the change is under the minimum, the
    /// data is too thin, or the figure has no good direction (frames, duration).
    case noSignificantChange
    /// `framescope compare` over runs: too few runs for an interval, or an interval that
    /// includes no change but reaches past the minimum change (a change that matters cannot
    /// be ruled out). The collector's comparisons call thin data `noSignificantChange`.
    case inconclusive
}

extension Metric.Direction {
    /// Whether a larger value is worse: `true` when lower is better, `false` when higher is
    /// better, `nil` for a figure without a good direction.
    public var higherIsWorse: Bool? {
        switch self {
        case .higherIsBetter: false
        case .lowerIsBetter: true
        case .neutral: nil
        }
    }

    /// The verdict on a change of `change` (candidate − baseline, in the figure's unit) that
    /// is known to be real: regressed or improved by its sign; no significant change for 0,
    /// or for a figure without a good direction.
    public func verdict(change: Double) -> Verdict {
        guard change != 0, let higherIsWorse else { return .noSignificantChange }
        return (change > 0) == higherIsWorse ? .regressed : .improved
    }
}
