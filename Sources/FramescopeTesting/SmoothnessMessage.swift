import FramescopeCore

/// The failure message for a report that breaks `budget`, or `nil` when it is met.
///
/// One line per broken limit, in words a developer reads at a glance:
///
/// ```
/// not smooth enough: 2 limits broken
///   scroll 3: 4 drop events, budget allows 3
///   motion: hitch ratio 12.3 ms/s, budget allows 5.0 ms/s
/// ```
public func smoothnessFailureMessage(_ report: RecordingReport, within budget: Budget) -> String? {
    let violations = budget.violations(of: report)
    guard !violations.isEmpty else { return nil }
    let heading = "not smooth enough: \(violations.count) limit\(violations.count == 1 ? "" : "s") broken"
    return ([heading] + violations.map { "  " + $0.description }).joined(separator: "\n")
}
