/// The analyzer's working state for one span (the whole recording or one segment):
/// the counters of a ``FrameReport`` plus dense histograms and the open FPS window.
///
/// Every array is allocated once, in `init`, so ``record(_:endingAt:)`` never allocates.
struct FrameAccumulator: Sendable {
    private(set) var counters: FrameReport
    private var durations = DenseDurationHistogram()
    private var windowFrameCounts = DenseTally()
    private var rates = DenseTally()
    private var shortestFrame = Double.infinity
    private var longestFrame = 0.0

    private let hangThreshold: Double
    private let frozenThreshold: Double
    private let windowLength: Double

    private var windowOpen = false
    private var windowOrigin = 0.0
    private var windowIndex = 0
    private var windowEnd = 0.0
    private var framesInWindow = 0

    init(configuration: AnalyzerConfiguration) {
        counters = FrameReport(stabilityBand: configuration.stabilityBand)
        hangThreshold = configuration.hangThreshold
        frozenThreshold = configuration.frozenThreshold
        windowLength = configuration.windowLength
    }

    /// Counts one measured interval that ends at `timestamp` (seconds).
    @inline(__always)
    mutating func record(_ frame: FrameInterval, endingAt timestamp: Double) {
        let durationNanoseconds = FrameReport.nanoseconds(frame.duration)
        counters.frames &+= 1
        counters.durationNanoseconds &+= durationNanoseconds
        if frame.duration < shortestFrame { shortestFrame = frame.duration }
        if frame.duration > longestFrame { longestFrame = frame.duration }
        let dropped = frame.elapsedRefreshes &- 1
        if dropped > 0 {
            counters.droppedFrames &+= dropped
            counters.dropEvents &+= 1
            if dropped > counters.maxDroppedFrames { counters.maxDroppedFrames = dropped }
            counters.hitchTimeNanoseconds &+= FrameReport.nanoseconds(frame.lateness)
        }
        if frame.duration >= hangThreshold {
            counters.hangs &+= 1
            counters.hangTimeNanoseconds &+= durationNanoseconds
        }
        if frame.duration >= frozenThreshold {
            counters.frozenFrames &+= 1
        } else if dropped > 0 {
            counters.slowFrames &+= 1
        }
        durations.record(seconds: frame.duration)
        rates.add(frame.refreshRate)

        if !windowOpen {
            windowOpen = true
            windowOrigin = timestamp - frame.interval
            windowIndex = 0
            windowEnd = windowOrigin + windowLength
            framesInWindow = 0
        }
        if timestamp > windowEnd { closeWindows(before: timestamp) }
        framesInWindow &+= 1
    }

    /// Counts the first interval after a start: kept apart from every other figure.
    mutating func recordFirst(_ frame: FrameInterval) {
        counters.firstFrames &+= 1
        counters.firstDurationNanoseconds &+= FrameReport.nanoseconds(frame.duration)
    }

    /// Counts a refused tick.
    mutating func recordRejected() {
        counters.rejectedTicks &+= 1
    }

    /// Closes the open window and every empty window before the one holding
    /// `timestamp`. A window covers (start, end]: a frame ending exactly on a window's
    /// end belongs to it.
    private mutating func closeWindows(before timestamp: Double) {
        windowFrameCounts.add(framesInWindow)
        framesInWindow = 0
        let holding = max(windowIndex + 1, Int(((timestamp - windowOrigin) / windowLength).rounded(.up)) - 1)
        let emptyWindows = holding - windowIndex - 1
        if emptyWindows > 0 { windowFrameCounts.add(0, count: emptyWindows) }
        windowIndex = holding
        windowEnd = windowOrigin + windowLength * Double(windowIndex + 1)
        while timestamp > windowEnd {  // guards against rounding at a window's edge
            windowFrameCounts.add(0)
            windowIndex += 1
            windowEnd = windowOrigin + windowLength * Double(windowIndex + 1)
        }
    }

    /// Forgets the open, incomplete window (at a pause or the end of a segment).
    mutating func discardOpenWindow() {
        windowOpen = false
        framesInWindow = 0
    }

    /// Returns to the empty state without giving up the allocated arrays' capacity.
    mutating func reset(configuration: AnalyzerConfiguration) {
        self = FrameAccumulator(configuration: configuration)
    }

    /// The report of everything recorded so far; the open window is left out.
    func report() -> FrameReport {
        var report = counters
        if report.frames > 0 {
            report.minFrameDuration = shortestFrame
            report.maxFrameDuration = longestFrame
        }
        report.frameDurations = durations.compacted()
        let length = windowLength
        report.windowFPS = windowFrameCounts.compacted { Int((Double($0) / length * 100).rounded()) }
        report.refreshRates = rates.compacted()
        return report
    }
}
