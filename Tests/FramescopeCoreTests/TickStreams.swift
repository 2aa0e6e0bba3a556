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

/// A small, fast, seedable generator (SplitMix64), so every random test names its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func isClose(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance * max(1, abs(b))
}
