/// Limits a recording must stay within: "never more than 3 frames dropped at once,
/// at most 3 drop events per scroll, hitch ratio under 5 ms/s".
///
/// A budget has three scopes. `recording` limits the whole recording, `motion` the
/// merge of its segments, and `eachSegment` every segment on its own. A recording
/// without segments is taken as one segment, so `motion` and `eachSegment` limits
/// then apply to the whole recording.
///
/// In JSON each scope maps metric names (``Metric``) to `{"max": …}` and/or
/// `{"min": …}`, in the metric's JSON unit:
///
/// ```json
/// {
///   "recording":   {"hitchRatio": {"max": 5}, "averageFPS": {"min": 55}, "hangs": {"max": 0}},
///   "motion":      {"hitchRatio": {"max": 5}},
///   "eachSegment": {"dropEvents": {"max": 3}, "maxDroppedFrames": {"max": 3}}
/// }
/// ```
public struct Budget: Sendable, Hashable {
    /// Limits on the whole recording.
    public var recording: [Limit]
    /// Limits on the merge of all segments.
    public var motion: [Limit]
    /// Limits on every segment.
    public var eachSegment: [Limit]

    /// Creates a budget.
    public init(recording: [Limit] = [], motion: [Limit] = [], eachSegment: [Limit] = []) {
        self.recording = recording
        self.motion = motion
        self.eachSegment = eachSegment
    }

    /// One bound on one metric.
    public struct Limit: Sendable, Hashable {
        /// Whether the bound is an upper or a lower one.
        public enum Bound: String, Sendable, Hashable, CaseIterable {
            /// The metric must be at most ``Limit/value``.
            case max
            /// The metric must be at least ``Limit/value``.
            case min
        }
        /// The metric limited.
        public var metric: Metric
        /// Upper or lower bound.
        public var bound: Bound
        /// The bound, in the metric's unit.
        public var value: Double

        /// Creates a limit.
        public init(metric: Metric, bound: Bound, value: Double) {
            self.metric = metric
            self.bound = bound
            self.value = value
        }

        /// `metric` must be at most `value`.
        public static func max(_ metric: Metric, _ value: Double) -> Limit { Limit(metric: metric, bound: .max, value: value) }
        /// `metric` must be at least `value`.
        public static func min(_ metric: Metric, _ value: Double) -> Limit { Limit(metric: metric, bound: .min, value: value) }

        /// Whether `actual` meets the limit; a missing value (no data) never does.
        public func isMet(by actual: Double?) -> Bool {
            guard let actual else { return false }
            switch bound {
            case .max: return actual <= value
            case .min: return actual >= value
            }
        }
    }

    /// Whether the budget has no limit at all.
    public var isEmpty: Bool { recording.isEmpty && motion.isEmpty && eachSegment.isEmpty }

    /// Every limit `report` breaks, recording first, then motion, then segments in order.
    public func violations(of report: RecordingReport) -> [BudgetViolation] {
        var found: [BudgetViolation] = []
        func check(_ limits: [Limit], _ scope: BudgetViolation.Scope, _ frames: FrameReport, whole: Bool = false) {
            for limit in limits {
                // A ratio over a few tenths of a second of a trace is withheld, and a limit
                // on it is not met: a budget passed on nothing is the failure to prevent.
                if whole, let reason = report.coverage?.withholding(limit.metric) {
                    found.append(BudgetViolation(scope: scope, limit: limit, actual: nil, withheld: reason))
                    continue
                }
                let actual = limit.metric.value(in: frames)
                if !limit.isMet(by: actual) { found.append(BudgetViolation(scope: scope, limit: limit, actual: actual)) }
            }
        }
        check(recording, .recording, report.whole, whole: true)
        check(motion, .motion, report.motion ?? report.whole, whole: report.motion == nil)
        if report.segments.isEmpty {
            check(eachSegment, .recording, report.whole, whole: true)
        } else {
            let labels = report.segments.map(\.label)
            for (index, segment) in report.segments.enumerated() {
                let unique = labels.filter { $0 == segment.label }.count == 1
                let name = unique ? segment.label : "\(segment.label) #\(index + 1)"
                check(eachSegment, .segment(index: index, name: name), segment.report)
            }
        }
        return found
    }
}

/// A limit a report broke.
public struct BudgetViolation: Sendable, Hashable, CustomStringConvertible {
    /// Where the limit was broken.
    public enum Scope: Sendable, Hashable {
        /// The whole recording.
        case recording
        /// The merge of all segments.
        case motion
        /// One segment: its position and its name for people.
        case segment(index: Int, name: String)

        /// "recording", "motion", or the segment's name.
        public var name: String {
            switch self {
            case .recording: return "recording"
            case .motion: return "motion"
            case let .segment(_, name): return name
            }
        }
    }

    /// Where.
    public var scope: Scope
    /// The limit broken.
    public var limit: Budget.Limit
    /// The value measured; `nil` when there was no data to measure it or it was withheld.
    public var actual: Double?
    /// Why the value was withheld (``RecordingCoverage/withholding(_:)``), or `nil`.
    public var withheld: String?

    /// Creates a violation.
    public init(scope: Scope, limit: Budget.Limit, actual: Double?, withheld: String? = nil) {
        self.scope = scope
        self.limit = limit
        self.actual = actual
        self.withheld = withheld
    }

    /// "scroll 3: 4 drop events, budget allows 3".
    public var description: String {
        let metric = limit.metric
        let allowance: String
        switch limit.bound {
        case .max: allowance = "budget allows \(metric.format(limit.value))"
        case .min: allowance = "budget requires at least \(metric.format(limit.value))"
        }
        if let withheld {
            return "\(scope.name): \(metric.displayName) withheld (\(withheld)), \(allowance)"
        }
        guard let actual else {
            return "\(scope.name): no data for \(metric.displayName), \(allowance)"
        }
        return "\(scope.name): \(metric.describe(actual)), \(allowance)"
    }
}
