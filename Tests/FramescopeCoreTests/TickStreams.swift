import FramescopeCore

/// Ticks at the given timestamps, each targeting the next refresh of a display at `hz`.
func ticks(_ timestamps: [Double], hz: Double) -> [FrameTick] {
    timestamps.map { FrameTick(timestamp: $0, targetTimestamp: $0 + 1 / hz) }
}

/// `count + 1` ticks of a steady display at `hz`, starting at `start`.
func steadyTimestamps(hz: Double, count: Int, start: Double = 0) -> [Double] {
    (0...count).map { start + Double($0) / hz }
}

/// The report of `ticks` fed to a fresh analyzer.
func analyze(_ ticks: [FrameTick], configuration: AnalyzerConfiguration = AnalyzerConfiguration()) -> RecordingReport {
    var analyzer = FrameAnalyzer(configuration: configuration)
    for tick in ticks { analyzer.record(tick) }
    return analyzer.report()
}

func isClose(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance * max(1, abs(b))
}
