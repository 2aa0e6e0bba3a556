import FramescopeCore

extension VerdictRules {
    /// The verdict on `change` under these rules: ``Verdict/noSignificantChange`` when
    /// either side rests on fewer than ``minimumVisits`` visits of the figure, otherwise the
    /// verdict it carries (its interval and minimum change judged already).
    public func verdict(of change: FigureChange) -> Verdict {
        change.baselineVisits >= minimumVisits && change.candidateVisits >= minimumVisits ? change.verdict : .noSignificantChange
    }

    /// `comparison` with each figure's verdict under these rules' minimum sample, each
    /// screen's verdict made again from its figures (regressed if any regressed, improved
    /// if any improved and none regressed), and the screens in the comparison's order:
    /// regressions first, then improvements, then the rest, by name within each.
    public func applyingMinimumVisits(to comparison: ComparisonResponse) -> ComparisonResponse {
        var result = comparison
        result.screens = comparison.screens.map { screen in
            var judged = screen
            judged.metrics = screen.metrics.map { change in
                var kept = change
                kept.verdict = verdict(of: change)
                return kept
            }
            judged.verdict = judged.metrics.contains { $0.verdict == .regressed } ? .regressed
                : judged.metrics.contains { $0.verdict == .improved } ? .improved : .noSignificantChange
            return judged
        }
        func rank(_ verdict: Verdict) -> Int { verdict == .regressed ? 0 : verdict == .improved ? 1 : 2 }
        result.screens.sort { (rank($0.verdict), $0.screen) < (rank($1.verdict), $1.screen) }
        return result
    }
}

extension CollectorQueries {
    /// Each screen's figures in `candidate` against `baseline`, judged by `rules`: a change
    /// must be at least `rules.minimumChange` of the baseline and each side must rest on at
    /// least `rules.minimumVisits` visits of the figure (besides the interval excluding
    /// zero). With ``VerdictRules/standard`` this is exactly
    /// ``compare(app:query:baseline:candidate:)``. The compare page and regression alerts
    /// judge with the app's rules (``AppThresholds/verdictRules``) through this call.
    public func compare(app: String, query: ScreenQuery, baseline: String, candidate: String, rules: VerdictRules) async throws -> ComparisonResponse {
        var queries = self
        queries.minimumRelativeChange = rules.minimumChange
        let comparison = try await queries.compare(app: app, query: query, baseline: baseline, candidate: candidate)
        return rules.applyingMinimumVisits(to: comparison)
    }
}
