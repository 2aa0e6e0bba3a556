/// The report of one recording: the whole, its segments, and `motion`, their merge.
///
/// `whole.hitchRatio` is hitch time per second over the recording; `motion?.hitchRatio`
/// is hitch time per second while in motion (scrolling or animating), comparable with
/// Apple's scroll hitch rate.
public struct RecordingReport: Sendable, Hashable {
    /// Every measured interval of the recording.
    public var whole: FrameReport
    /// The merge of all segments, or `nil` when the recording has none.
    public var motion: FrameReport?
    /// One report per segment, in recording order.
    public var segments: [SegmentReport]
    /// The refresh rate in Hz inferred from the ticks, when the recording gave neither
    /// target timestamps nor a rate (``RefreshRateInference``); `nil` otherwise.
    public var inferredRefreshRate: Double?
    /// Figures the recording's own tool printed, beside which Framescope's are shown
    /// (another tool's recording only; empty otherwise).
    public var toolFigures: [ToolFigure] = []
    /// What the recording's tool wrote about the capture, in file order (CapFrameX's
    /// `//GameName=re2.exe` lines: the game, GPU, CPU and driver); empty otherwise.
    public var metadata: [RecordingMetadata] = []
    /// How much of the recording was measured, for a recording in which the source paused
    /// (a web page idle between gestures); `nil` otherwise.
    public var coverage: RecordingCoverage?

    /// Creates a report; `motion` is the merge of `segments`.
    public init(whole: FrameReport, segments: [SegmentReport] = []) {
        self.whole = whole
        self.segments = segments
        self.motion = segments.isEmpty ? nil : FrameReport.merged(segments.map(\.report))
    }

    /// Creates a report with a given motion report and no segment list, as a screen
    /// visit sends it over the wire.
    public init(whole: FrameReport, motion: FrameReport?) {
        self.whole = whole
        self.motion = motion
        self.segments = []
    }

    /// Adds `other`: wholes and motions merge, segment lists are concatenated.
    public mutating func merge(_ other: RecordingReport) {
        whole.merge(other.whole)
        switch (motion, other.motion) {
        case (var mine?, let theirs?):
            mine.merge(theirs)
            motion = mine
        case (nil, let theirs?):
            motion = theirs
        default:
            break
        }
        segments.append(contentsOf: other.segments)
        toolFigures.append(contentsOf: other.toolFigures)
        metadata.append(contentsOf: other.metadata)
    }

    /// The report of both recordings.
    public func merging(_ other: RecordingReport) -> RecordingReport {
        var result = self
        result.merge(other)
        return result
    }
}

/// How much of a recording its report measured: a Chrome trace's renderer is measured only
/// while it draws, and a ratio over a few tenths of a second says little.
///
/// Encoded `{"traceSeconds": 2.233, "measuredSeconds": 0.25}`.
public struct RecordingCoverage: Sendable, Hashable, Codable {
    /// The source's part of the recording, first to last vsync, in seconds.
    public var traceSeconds: Double
    /// The time the report's frames cover (``FrameReport/duration`` plus
    /// ``FrameReport/firstDuration``), in seconds.
    public var measuredSeconds: Double

    /// Below this many measured seconds a ratio (``Metric/hitchRatio``, ``Metric/hangRate``)
    /// is withheld: one hitch over a quarter of a second reads as hundreds of ms per s.
    public static let minimumSecondsForRatios = 1.0

    /// Creates a coverage.
    public init(traceSeconds: Double, measuredSeconds: Double) {
        self.traceSeconds = traceSeconds
        self.measuredSeconds = measuredSeconds
    }

    /// The figures per unit of time, withheld over a short measured span.
    public static let ratios: [Metric] = [.hitchRatio, .hangRate]

    /// Whether so little was measured that ratios are withheld.
    public var withholdsRatios: Bool { measuredSeconds < Self.minimumSecondsForRatios }

    /// Why `metric` is withheld (`only 0.25 s of 2.27 s measured; a ratio needs 1 s`), or
    /// `nil` when it is not.
    public func withholding(_ metric: Metric) -> String? {
        guard withholdsRatios, Self.ratios.contains(metric) else { return nil }
        return "only \(Self.seconds(measuredSeconds)) of \(Self.seconds(traceSeconds)) measured; a ratio needs \(Self.seconds(Self.minimumSecondsForRatios))"
    }

    /// Seconds with two decimals, or none when whole (`0.25 s`, `1 s`).
    static func seconds(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        guard hundredths.isFinite, abs(hundredths) < 1e15 else { return "\(value) s" }
        let whole = Int(hundredths) / 100
        let fraction = abs(Int(hundredths)) % 100
        return fraction == 0 ? "\(whole) s" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction) s"
    }
}

/// One thing a recording's tool wrote about the capture (`GPU` = `NVIDIA GeForce RTX 2080`),
/// as text; encoded `{"key": "GPU", "value": "NVIDIA GeForce RTX 2080"}`.
public struct RecordingMetadata: Sendable, Hashable, Codable {
    /// The name the tool gave it, as written.
    public var key: String
    /// Its value, as written (may be empty).
    public var value: String

    /// Creates an entry.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// The report of one segment: a scroll gesture or an animation.
public struct SegmentReport: Sendable, Hashable, Codable {
    /// The segment's name as the recording gave it ("scroll 3").
    public var label: String
    /// Its measured intervals.
    public var report: FrameReport

    /// Creates a segment report.
    public init(label: String, report: FrameReport) {
        self.label = label
        self.report = report
    }
}
