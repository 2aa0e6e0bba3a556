/// The analyzer's working state for one span of intervals: the counters of a
/// ``FrameReport`` plus dense histograms, and optionally the span's FPS windows.
///
/// Every array is allocated once, in `init`, so ``record(_:endingAt:)`` never allocates.
package struct FrameAccumulator: Sendable {
    private(set) var counters: FrameReport
    private var durations = DenseDurationHistogram()
    private var rates = DenseTally()
    private var shortestFrame = Double.infinity
    private var longestFrame = 0.0
    private let tracksWindows: Bool
    private var windows: WindowCounter

    private let hangThreshold: Double
    private let frozenThreshold: Double

    /// - Parameter tracksWindows: whether this span keeps its own FPS windows (a
    ///   segment does; the part of a recording outside segments does not, because the
    ///   recording's windows run across segment boundaries).
    package init(configuration: AnalyzerConfiguration, tracksWindows: Bool) {
        counters = FrameReport(stabilityBand: configuration.stabilityBand)
        hangThreshold = configuration.hangThreshold
        frozenThreshold = configuration.frozenThreshold
        self.tracksWindows = tracksWindows
        windows = WindowCounter(windowLength: configuration.windowLength)
    }

    /// Counts one measured interval that ends at `timestamp` (seconds).
    @inline(__always)
    package mutating func record(_ frame: FrameSample, endingAt timestamp: Double) {
        counters.frames &+= 1
        counters.durationNanoseconds.add(frame.durationNanoseconds)
        if frame.duration < shortestFrame { shortestFrame = frame.duration }
        if frame.duration > longestFrame { longestFrame = frame.duration }
        let dropped = frame.droppedFrames
        if dropped > 0 {
            counters.droppedFrames &+= dropped
            counters.dropEvents &+= 1
            if dropped > counters.maxDroppedFrames { counters.maxDroppedFrames = dropped }
            counters.hitchTimeNanoseconds.add(frame.latenessNanoseconds)
        }
        if frame.duration >= hangThreshold {
            counters.hangs &+= 1
            counters.hangTimeNanoseconds.add(frame.durationNanoseconds)
        }
        if frame.duration >= frozenThreshold {
            counters.frozenFrames &+= 1
        } else if dropped > 0 {
            counters.slowFrames &+= 1
        }
        durations.record(bucket: frame.durationBucket)
        rates.add(frame.refreshRate)
        if tracksWindows { windows.count(frame, endingAt: timestamp) }
    }

    /// Counts `count` intervals like `frame`, whose times are unknown (another tool's
    /// histogram bucket): every counter as ``record(_:endingAt:)`` would make it, saturating,
    /// and no FPS window.
    package mutating func record(_ frame: FrameSample, count: Int) {
        guard count > 0 else { return }
        counters.frames = counters.frames.addingSaturated(count)
        counters.durationNanoseconds.add(frame.durationNanoseconds, times: count)
        if frame.duration < shortestFrame { shortestFrame = frame.duration }
        if frame.duration > longestFrame { longestFrame = frame.duration }
        let dropped = frame.droppedFrames
        if dropped > 0 {
            counters.droppedFrames = counters.droppedFrames.addingSaturated(dropped.multipliedSaturated(by: count))
            counters.dropEvents = counters.dropEvents.addingSaturated(count)
            if dropped > counters.maxDroppedFrames { counters.maxDroppedFrames = dropped }
            counters.hitchTimeNanoseconds.add(frame.latenessNanoseconds, times: count)
        }
        if frame.duration >= hangThreshold {
            counters.hangs = counters.hangs.addingSaturated(count)
            counters.hangTimeNanoseconds.add(frame.durationNanoseconds, times: count)
        }
        if frame.duration >= frozenThreshold {
            counters.frozenFrames = counters.frozenFrames.addingSaturated(count)
        } else if dropped > 0 {
            counters.slowFrames = counters.slowFrames.addingSaturated(count)
        }
        durations.record(bucket: frame.durationBucket, count: count)
        rates.add(frame.refreshRate, count: count)
    }

    /// Counts the first interval after a start: kept apart from every other figure.
    mutating func recordFirst(_ frame: FrameSample) {
        counters.firstFrames &+= 1
        counters.firstDurationNanoseconds.add(frame.durationNanoseconds)
    }

    /// Counts a refused tick.
    mutating func recordRejected() {
        counters.rejectedTicks &+= 1
    }

    /// Forgets the open, incomplete window (at a pause or the end of a segment).
    mutating func discardOpenWindow() {
        windows.discardOpenWindow()
    }

    /// The report of everything recorded so far; the open window is left out.
    package func report() -> FrameReport {
        var report = counters
        if report.frames > 0 {
            report.minFrameDuration = shortestFrame
            report.maxFrameDuration = longestFrame
        }
        report.frameDurations = durations.compacted()
        report.refreshRates = rates.compacted()
        if tracksWindows { report.windowFPS = windows.compacted() }
        return report
    }
}

/// Counts frames per FPS window. A window covers (start, start + length]; the first
/// starts where the first counted interval starts, and a stall longer than a window
/// leaves windows with 0 frames. The open window is never part of the result.
struct WindowCounter: Sendable {
    private let windowLength: Double
    private var frameCounts = DenseTally()
    private var open = false
    private var origin = 0.0
    private var index = 0
    private var end = 0.0
    private var framesInWindow = 0

    init(windowLength: Double) {
        self.windowLength = windowLength
    }

    @inline(__always)
    mutating func count(_ frame: FrameSample, endingAt timestamp: Double) {
        if !open {
            open = true
            origin = frame.start
            index = 0
            end = origin + windowLength
            framesInWindow = 0
        }
        if timestamp > end { closeWindows(before: timestamp) }
        framesInWindow &+= 1
    }

    /// Closes the open window and every empty window before the one holding `timestamp`.
    private mutating func closeWindows(before timestamp: Double) {
        frameCounts.add(framesInWindow)
        framesInWindow = 0
        let holding = max(index + 1, Int(((timestamp - origin) / windowLength).rounded(.up)) - 1)
        let emptyWindows = holding - index - 1
        if emptyWindows > 0 { frameCounts.add(0, count: emptyWindows) }
        index = holding
        end = origin + windowLength * Double(index + 1)
        while timestamp > end {  // guards against rounding at a window's edge
            frameCounts.add(0)
            index += 1
            end = origin + windowLength * Double(index + 1)
        }
    }

    mutating func discardOpenWindow() {
        open = false
        framesInWindow = 0
    }

    /// Completed windows per window FPS, keys in hundredths of FPS.
    func compacted() -> Tally {
        let length = windowLength
        return frameCounts.compacted { Int((Double($0) / length * 100).rounded()) }
    }
}

/// One interval's figures in the form the accumulators add, computed once per tick.
package struct FrameSample {
    var start: Double
    var duration: Double
    var durationNanoseconds: Int64
    var droppedFrames: Int
    var latenessNanoseconds: Int64
    var durationBucket: Int
    var refreshRate: Int

    @inline(__always)
    package init(_ frame: FrameInterval, start: Double, refreshRate: Int) {
        self.start = start
        duration = frame.duration
        durationNanoseconds = FrameReport.nanoseconds(frame.duration)
        droppedFrames = frame.elapsedRefreshes &- 1
        latenessNanoseconds = droppedFrames > 0 ? FrameReport.nanoseconds(frame.lateness) : 0
        durationBucket = DurationHistogram.bucketIndex(forSeconds: frame.duration)
        self.refreshRate = refreshRate
    }
}
