/// What Framescope reads of one MetricKit payload (`MXMetricPayload` or
/// `MXDiagnosticPayload`, as their `jsonRepresentation()` writes them): the period, who
/// sent it, Apple's scroll hitch ratio and hang-time histogram, and the durations of its
/// hang diagnostics with their call-stack trees. Everything else (CPU, memory, launch) is skipped;
/// other diagnostics are only counted. Field by field: `docs/traces.md`.
public struct MetricKitPayload: Sendable, Hashable {
    /// `timeStampBegin`, Unix seconds (a time without a zone is read as UTC).
    public var begin: Double?
    /// `timeStampEnd`, Unix seconds.
    public var end: Double?
    /// The app's version: `metaData`'s or a diagnostic's `appVersion`, else
    /// `latestApplicationVersion`.
    public var appVersion: String?
    /// `appBuildVersion`.
    public var appBuildVersion: String?
    /// `osVersion` as Apple writes it ("iPhone OS 14.0.1 (18A393)").
    public var osVersion: String?
    /// `deviceType`, the model identifier ("iPhone10,2").
    public var deviceType: String?
    /// `bundleIdentifier`, where the payload has one (macOS).
    public var bundleIdentifier: String?
    /// `animationMetrics.scrollHitchTimeRatio`, in ms of hitch per s of scrolling.
    public var scrollHitchTimeRatio: Double?
    /// `applicationResponsivenessMetrics.histogrammedAppHangTime`'s buckets, in the
    /// payload's order.
    public var hangTimeHistogram: [MetricKitBucket] = []
    /// `hangDiagnostics[].diagnosticMetaData.hangDuration`, in seconds, in order.
    public var hangDurations: [Double] = []
    /// The call-stack trees of the first ``MetricKitParser/maximumHangCallStacks`` hang
    /// diagnostics that have one (the thread-attributed stack: the thread that hung).
    public var hangCallStacks: [MetricKitHangCallStack] = []
    /// How many diagnostics of each other kind the payload has ("crashDiagnostics": 2),
    /// in the payload's order.
    public var otherDiagnostics: [MetricKitDiagnosticCount] = []
    /// Values that were present but not readable or not physical, each skipped.
    public var issues: [MetricKitIssue] = []
    /// The first problem with the period, or `nil`: a `timeStampBegin` or `timeStampEnd`
    /// present but not a time (not a string, or not a date), or an end before the begin. Kept
    /// apart from ``issues``, whose number is capped, so that a reader that dates the payload
    /// by its period (the collector) can refuse it rather than date it some other way.
    public var periodIssue: MetricKitIssue?

    /// An empty payload.
    public init() {}

    /// Whether it says anything Framescope measures: a hitch ratio, a hang histogram or a
    /// hang diagnostic.
    public var hasFigures: Bool {
        scrollHitchTimeRatio != nil || !hangTimeHistogram.isEmpty || !hangDurations.isEmpty
    }

    /// The hangs the histogram counts, all buckets together.
    public var histogramHangs: Int {
        hangTimeHistogram.reduce(0) { $0.addingReportingOverflow($1.count).overflow ? Int.max : $0 + $1.count }
    }
}

/// How many diagnostics of one kind a payload has, other than hangs.
public struct MetricKitDiagnosticCount: Sendable, Hashable {
    /// The payload's key: `crashDiagnostics`, `cpuExceptionDiagnostics`, …
    public var kind: String
    /// How many diagnostics the list holds.
    public var count: Int

    /// `count` diagnostics of `kind`.
    public init(kind: String, count: Int) {
        self.kind = kind
        self.count = count
    }
}

/// One bucket of MetricKit's hang-time histogram: `bucketCount` hangs that lasted from
/// `bucketStart` to `bucketEnd`.
public struct MetricKitBucket: Sendable, Hashable, Codable {
    /// The bucket's lower bound, in seconds.
    public var start: Double
    /// The bucket's upper bound, in seconds.
    public var end: Double
    /// Hangs in the bucket.
    public var count: Int

    /// A bucket of `count` hangs from `start` to `end` seconds.
    public init(start: Double, end: Double, count: Int) {
        self.start = start
        self.end = end
        self.count = count
    }
}

/// A value in a payload that was skipped: where it is (its JSON path, from the payload),
/// the line it is on, and why.
public struct MetricKitIssue: Sendable, Hashable, CustomStringConvertible {
    /// The JSON path of the value: `hangDiagnostics[0].diagnosticMetaData.hangDuration`,
    /// prefixed with `[N].` for the N-th payload of a list.
    public var field: String
    /// The 1-based line of the value.
    public var line: Int
    /// What is wrong with it.
    public var message: String

    /// Creates an issue.
    public init(field: String, line: Int, message: String) {
        self.field = field
        self.line = line
        self.message = message
    }

    /// `field: message`.
    public var description: String { "\(field): \(message)" }
}

/// The call stack of one hang diagnostic: the roots (innermost frames) of its
/// thread-attributed call-stack tree.
public struct MetricKitHangCallStack: Sendable, Hashable {
    /// Which of ``MetricKitPayload/hangDurations`` it belongs to.
    public var diagnostic: Int
    /// The tree's roots.
    public var roots: [MetricKitCallStackFrame]

    /// The stack of hang diagnostic `diagnostic`.
    public init(diagnostic: Int, roots: [MetricKitCallStackFrame]) {
        self.diagnostic = diagnostic
        self.roots = roots
    }
}
