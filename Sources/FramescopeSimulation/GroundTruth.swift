import FramescopeCore

/// What a simulation caused, counted from whole vsyncs: the answer the engine must find
/// in the simulated ticks.
///
/// As in the engine, the first interval is the recording's `firstFPS` and is left out of
/// every count. An interval belongs to the segment of the frame that ends it.
public struct GroundTruth: Sendable, Hashable, Codable {
    /// A frame the simulated display showed.
    public struct ShownFrame: Sendable, Hashable {
        /// The vsync it was shown at, counted from the start.
        public var vsyncIndex: Int
        /// That vsync's time, in seconds, without jitter.
        public var time: Double
        /// Its segment, or `nil`.
        public var segment: String?
    }

    /// A hang: an interval at least as long as the hang threshold.
    public struct Hang: Sendable, Hashable, Codable {
        /// When the last frame before it was shown, in seconds.
        public var start: Double
        /// How long until the next frame, in seconds.
        public var duration: Double
    }

    /// One segment's counts.
    public struct Segment: Sendable, Hashable, Codable {
        /// The segment's label.
        public var label: String
        /// Measured intervals ending in it.
        public var frames: Int
        /// Σ dropped frames.
        public var droppedFrames: Int
        /// Intervals that dropped frames.
        public var dropEvents: Int
        /// The most frames dropped at once.
        public var maxDroppedFrames: Int
    }

    /// Measured intervals (the first is left out).
    public var frames: Int = 0
    /// Σ refreshes missed between consecutive frames.
    public var droppedFrames: Int = 0
    /// Intervals that missed at least one refresh.
    public var dropEvents: Int = 0
    /// The most refreshes missed at once.
    public var maxDroppedFrames: Int = 0
    /// Σ lateness in seconds: the missed refreshes' time.
    public var hitchTime: Double = 0
    /// Intervals at least as long as the frozen threshold.
    public var frozenFrames: Int = 0
    /// Every hang, in order.
    public var hangs: [Hang] = []
    /// Every segment, in order.
    public var segments: [Segment] = []

    /// Counts the truth from the frames shown.
    init(shown: [ShownFrame], hangThreshold: Double, frozenThreshold: Double) {
        guard shown.count > 2 else { return }
        var previousLabel: String?
        for index in 2..<shown.count {
            let before = shown[index - 1]
            let frame = shown[index]
            let gap = frame.vsyncIndex - before.vsyncIndex
            let dropped = gap - 1
            let duration = frame.time - before.time
            frames += 1
            if dropped > 0 {
                droppedFrames += dropped
                dropEvents += 1
                maxDroppedFrames = max(maxDroppedFrames, dropped)
                hitchTime += duration / Double(gap) * Double(dropped)
            }
            if duration >= hangThreshold { hangs.append(Hang(start: before.time, duration: duration)) }
            if duration >= frozenThreshold { frozenFrames += 1 }
            if let label = frame.segment {
                if label != previousLabel || segments.isEmpty {
                    segments.append(Segment(label: label, frames: 0, droppedFrames: 0, dropEvents: 0, maxDroppedFrames: 0))
                }
                segments[segments.count - 1].frames += 1
                if dropped > 0 {
                    segments[segments.count - 1].droppedFrames += dropped
                    segments[segments.count - 1].dropEvents += 1
                    segments[segments.count - 1].maxDroppedFrames = max(segments[segments.count - 1].maxDroppedFrames, dropped)
                }
            }
            previousLabel = frame.segment
        }
    }
}
