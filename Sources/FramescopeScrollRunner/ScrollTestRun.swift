import FramescopeCore
import FramescopeScroll

/// One scroll performance test, platform-neutral: feed it every display tick, set the
/// offset it answers on the scroll view, and read the report when it finishes. Each
/// segment of the script (a pass, a fling) becomes a segment of the report, so a budget's
/// `eachSegment` limits apply per pass, as the detector article reset its counts after
/// each scroll.
///
/// The UIKit driver (`ScrollTestDriver`) only reads `CADisplayLink`'s times and sets
/// `contentOffset`; this type makes every decision, and the same run is tested on Linux
/// with simulated ticks.
///
/// ```swift
/// var run = ScrollTestRun(script: .accelerating(.thesis),
///                         geometry: ScrollGeometry(contentHeight: 2_000, viewportHeight: 504))
/// // on each display-link callback:
/// if let offset = run.step(timestamp: link.timestamp, targetTimestamp: link.targetTimestamp, refreshInterval: link.duration) {
///     scrollView.contentOffset.y = offset - scrollView.adjustedContentInset.top
/// } else {
///     link.invalidate()
///     expectSmooth(run.report(), within: budget)
/// }
/// ```
public struct ScrollTestRun: Sendable {
    /// The script.
    public var script: ScrollScript { player.script }
    private var player: ScrollPlayer
    private var analyzer: FrameAnalyzer
    /// The frames the script has asked for so far.
    public private(set) var steps = 0

    /// A run of `script` over `geometry`, measured with `analyzer`'s definitions.
    public init(script: ScrollScript, geometry: ScrollGeometry, analyzer: AnalyzerConfiguration = AnalyzerConfiguration()) {
        player = ScrollPlayer(script: script, geometry: geometry)
        self.analyzer = FrameAnalyzer(configuration: analyzer)
    }

    /// Whether the script has finished.
    public var isFinished: Bool { player.isFinished }

    /// Records one display tick and answers the content offset to set now (points from
    /// the top of the content), or `nil` once the script has finished.
    ///
    /// - Parameters:
    ///   - timestamp: `CADisplayLink.timestamp`, in seconds.
    ///   - targetTimestamp: `CADisplayLink.targetTimestamp`, in seconds.
    ///   - refreshInterval: `CADisplayLink.duration`, in seconds.
    public mutating func step(timestamp: Double, targetTimestamp: Double?, refreshInterval: Double?) -> Double? {
        guard !player.isFinished else { return nil }
        // The interval that just ended showed the previous step: it belongs to the
        // segment that step was in.
        analyzer.recordTick(timestamp: timestamp, targetTimestamp: targetTimestamp, refreshInterval: refreshInterval)
        let frame = player.frame(at: timestamp)
        steps += 1
        if frame.segmentEnds != nil { analyzer.endSegment() }
        if let label = frame.segmentBegins { analyzer.beginSegment(label) }
        return frame.isFinished ? nil : frame.offset
    }

    /// The report so far: the whole run, motion (every segment together) and one segment
    /// per pass or fling.
    public func report() -> RecordingReport {
        analyzer.report()
    }
}
