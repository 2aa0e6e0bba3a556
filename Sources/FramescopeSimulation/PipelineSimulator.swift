import FramescopeCore

/// The work one frame costs, as a ``Workload`` hands it to the ``PipelineSimulator``.
public struct FrameWork: Sendable, Hashable {
    /// Main-thread time, in seconds: event handling, layout, the display-link callback.
    public var main: Double
    /// Render time after the main thread commits, in seconds (render server and GPU).
    public var render: Double
    /// The segment (scroll gesture or animation) this frame belongs to, or `nil` when idle.
    public var segment: String?

    /// Creates a frame's work.
    public init(main: Double, render: Double, segment: String?) {
        self.main = main
        self.render = render
        self.segment = segment
    }
}

/// What an app does frame after frame, for the ``PipelineSimulator``.
public protocol Workload {
    /// The work of the frame whose display-link callback runs at `time` (seconds), on a
    /// display refreshing every `refreshInterval` seconds. Called once per frame, in
    /// time order, so a workload can advance its own state (a scroll animation, a timer).
    mutating func frame(startingAt time: Double, refreshInterval: Double) -> FrameWork
    /// Whether no more frames start at or after `time`.
    func isFinished(at time: Double) -> Bool
}

/// One tick of a simulated recording, as a display link would deliver it.
public struct SimulatedTick: Sendable, Hashable {
    /// When the frame was shown, in seconds (a vsync, plus timestamp jitter).
    public var timestamp: Double
    /// When the next frame is due, in seconds.
    public var targetTimestamp: Double
    /// The segment the frame belongs to, or `nil`.
    public var segment: String?
}

/// A simulated recording: the ticks and the truth about what the simulator caused.
public struct SimulatedRecording: Sendable {
    /// The tick stream, one tick per frame shown.
    public var ticks: [SimulatedTick]
    /// What the simulator knows happened, computed from whole vsyncs (not from the ticks).
    public var groundTruth: GroundTruth

    /// Feeds the ticks (with their segments) to an analyzer and returns its report.
    public func analyze(configuration: AnalyzerConfiguration = AnalyzerConfiguration()) -> RecordingReport {
        var analyzer = FrameAnalyzer(configuration: configuration)
        var current: String?
        for tick in ticks {
            if tick.segment != current {
                if let label = tick.segment { analyzer.beginSegment(label) } else { analyzer.endSegment() }
                current = tick.segment
            }
            analyzer.record(FrameTick(timestamp: tick.timestamp, targetTimestamp: tick.targetTimestamp))
        }
        analyzer.endSegment()
        return analyzer.report()
    }
}

/// A render loop driven by a display's vsync, pipelined as Core Animation does it.
///
/// A frame starts at a vsync when the main thread is free and fewer than two frames
/// are in flight. Its main-thread work ends with a commit. The render server starts on
/// the commit at the next vsync (or when it has finished the previous frame, if later),
/// and the frame is shown at the first vsync after its render ends, at the earliest two
/// vsyncs after it started. Main-thread and render work thus each have one refresh.
/// A frame that misses its deadline is shown at a later vsync, and the refreshes in
/// between are dropped. The refresh rate changes only at a vsync that shows a frame, so
/// every gap between two frames lies on one vsync grid.
///
/// The output ticks are the frames shown. `timestamp` is the vsync plus uniform jitter
/// of ±`timestampJitter` of a refresh, as real display-link timestamps wobble.
/// `targetTimestamp` is `timestamp` plus the refresh interval that follows. The
/// ``GroundTruth`` is counted from whole vsyncs, independently of the jittered times.
public struct PipelineSimulator: Sendable {
    /// How the display refreshes.
    public var display: DisplayMode
    /// Low-power mode: caps the refresh rate at 60 Hz.
    public var lowPower: Bool
    /// Timestamp jitter as a fraction of the refresh interval (0.02 = ±2 %); at most 0.2.
    public var timestampJitter: Double
    /// The hang threshold the ground truth counts with, in seconds.
    public var hangThreshold: Double
    /// The frozen-frame threshold the ground truth counts with, in seconds.
    public var frozenThreshold: Double
    /// Seeds the jitter.
    public var seed: UInt64

    /// Creates a simulator.
    public init(display: DisplayMode, lowPower: Bool = false, timestampJitter: Double = 0.02,
                hangThreshold: Double = 0.25, frozenThreshold: Double = 0.7, seed: UInt64 = 1) {
        self.display = display
        self.lowPower = lowPower
        self.timestampJitter = min(max(timestampJitter, 0), 0.2)
        self.hangThreshold = hangThreshold
        self.frozenThreshold = frozenThreshold
        self.seed = seed
    }

    private struct InFlight {
        var startIndex: Int
        var readyTime: Double
        var segment: String?
    }

    /// Runs `workload` from `startTime` (seconds) until it is finished and every frame
    /// in flight has been shown.
    public func run<W: Workload>(_ workload: inout W, startTime: Double = 0) -> SimulatedRecording {
        var random = SeededGenerator(seed: seed).fork(0x6A17)
        var vsyncTime = startTime
        var vsyncIndex = 0
        var interval = 1 / display.refreshRate(inMotion: false, lowPower: lowPower)
        var mainFreeAt = startTime
        var renderFreeAt = startTime
        var inFlight: [InFlight] = []
        var latestSegment: String?
        var shown: [GroundTruth.ShownFrame] = []
        var ticks: [SimulatedTick] = []

        while true {
            let finished = workload.isFinished(at: vsyncTime)
            if finished && inFlight.isEmpty { break }

            // Show the oldest finished frame that started before this vsync.
            var showedFrame = false
            if let oldest = inFlight.first, oldest.startIndex + 2 <= vsyncIndex, oldest.readyTime <= vsyncTime {
                inFlight.removeFirst()
                showedFrame = true
                let inMotion = latestSegment != nil  // the state of the newest frame started
                let nextInterval = 1 / display.refreshRate(inMotion: inMotion, lowPower: lowPower)
                let jitter = (random.unit() * 2 - 1) * timestampJitter * interval
                let timestamp = vsyncTime + jitter
                ticks.append(SimulatedTick(timestamp: timestamp, targetTimestamp: timestamp + nextInterval, segment: oldest.segment))
                shown.append(GroundTruth.ShownFrame(vsyncIndex: vsyncIndex, time: vsyncTime, segment: oldest.segment))
                interval = nextInterval
            }

            // Start a frame if the main thread is free and a buffer is available.
            if !finished, mainFreeAt <= vsyncTime, inFlight.count < 2 {
                let work = workload.frame(startingAt: vsyncTime, refreshInterval: interval)
                let mainEnd = vsyncTime + max(0, work.main)
                // The render server takes the commit at the next vsync boundary.
                let commitBoundary = vsyncTime + max(1, (max(0, work.main) / interval).rounded(.up)) * interval
                let renderStart = max(commitBoundary, renderFreeAt)
                renderFreeAt = renderStart + max(0, work.render)
                mainFreeAt = mainEnd
                latestSegment = work.segment
                inFlight.append(InFlight(startIndex: vsyncIndex, readyTime: renderFreeAt, segment: work.segment))
                if !showedFrame, inFlight.count == 1, shown.isEmpty {
                    // The very first frame: nothing to show yet; the rate follows its state.
                    interval = 1 / display.refreshRate(inMotion: work.segment != nil, lowPower: lowPower)
                }
            }

            vsyncTime += interval
            vsyncIndex += 1
        }
        return SimulatedRecording(
            ticks: ticks,
            groundTruth: GroundTruth(shown: shown, hangThreshold: hangThreshold, frozenThreshold: frozenThreshold)
        )
    }
}
