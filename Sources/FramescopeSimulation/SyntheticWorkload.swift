import FramescopeCore

/// A generic app workload: idle spells and scroll gestures in turn, per-frame work drawn
/// from log-normal distributions, occasional expensive frames, and main-thread stalls.
///
/// Used by `framescope simulate` without `--scenario`, by tests across refresh modes,
/// and by the fleet simulation.
public struct SyntheticWorkload: Workload, Sendable {
    /// The cost of frames, in seconds.
    public struct Profile: Sendable, Hashable {
        /// Median main-thread time of an idle frame.
        public var idleMain: Double
        /// Median main-thread time of a frame in motion.
        public var motionMain: Double
        /// Median render time of a frame.
        public var render: Double
        /// Spread of the log-normal distributions (σ of the logarithm).
        public var sigma: Double
        /// Probability that a frame in motion is expensive (a new cell, an image decode).
        public var spikeProbability: Double
        /// Main-thread time of an expensive frame: uniform in this range.
        public var spikeMain: ClosedRange<Double>

        /// Creates a profile.
        public init(idleMain: Double, motionMain: Double, render: Double, sigma: Double, spikeProbability: Double, spikeMain: ClosedRange<Double>) {
            self.idleMain = idleMain
            self.motionMain = motionMain
            self.render = render
            self.sigma = sigma
            self.spikeProbability = spikeProbability
            self.spikeMain = spikeMain
        }

        /// Almost nothing to do: smooth at any rate.
        public static let light = Profile(idleMain: 0.0008, motionMain: 0.002, render: 0.002, sigma: 0.25, spikeProbability: 0.002, spikeMain: 0.010...0.020)
        /// A typical list: occasional drops while scrolling.
        public static let moderate = Profile(idleMain: 0.001, motionMain: 0.005, render: 0.004, sigma: 0.35, spikeProbability: 0.03, spikeMain: 0.018...0.045)
        /// A struggling list: frequent drops while scrolling.
        public static let heavy = Profile(idleMain: 0.002, motionMain: 0.011, render: 0.007, sigma: 0.45, spikeProbability: 0.10, spikeMain: 0.025...0.080)
    }

    /// Per-frame costs.
    public var profile: Profile
    /// Total length of the workload, in seconds.
    public var duration: Double
    /// Seconds of idle before each scroll.
    public var idleLength: Double
    /// Seconds each scroll gesture lasts.
    public var scrollLength: Double
    /// Mean time between main-thread stalls, in seconds; `nil` for none.
    public var stallInterval: Double?
    /// How long each stall blocks the main thread, in seconds.
    public var stallLength: Double

    private var random: SeededGenerator
    private var startTime: Double?
    private var nextStall: Double = .infinity

    /// Creates a workload.
    /// - Parameters:
    ///   - profile: Per-frame costs.
    ///   - duration: Length in seconds.
    ///   - idleLength: Idle seconds before each scroll.
    ///   - scrollLength: Seconds per scroll gesture.
    ///   - stallInterval: Mean seconds between main-thread stalls, or `nil`.
    ///   - stallLength: Seconds each stall lasts.
    ///   - seed: Seeds every random draw.
    public init(profile: Profile = .moderate, duration: Double = 30, idleLength: Double = 1, scrollLength: Double = 2,
                stallInterval: Double? = nil, stallLength: Double = 0.4, seed: UInt64 = 1) {
        self.profile = profile
        self.duration = duration
        self.idleLength = idleLength
        self.scrollLength = scrollLength
        self.stallInterval = stallInterval
        self.stallLength = stallLength
        random = SeededGenerator(seed: seed).fork(0x5717)
    }

    /// The scroll gesture in progress `elapsed` seconds after the start, as "scroll N", or `nil`.
    public func segment(atElapsed elapsed: Double) -> String? {
        let cycle = idleLength + scrollLength
        guard cycle > 0, scrollLength > 0 else { return nil }
        let position = elapsed - (elapsed / cycle).rounded(.down) * cycle
        guard position >= idleLength else { return nil }
        return "scroll \(Int((elapsed / cycle).rounded(.down)) + 1)"
    }

    /// Draws the frame's main-thread and render time for the current spell (idle or scroll),
    /// adding an occasional expensive frame in motion and any stall that is due.
    public mutating func frame(startingAt time: Double, refreshInterval: Double) -> FrameWork {
        if startTime == nil {
            startTime = time
            if let stallInterval { nextStall = time + random.exponential(mean: stallInterval) }
        }
        let elapsed = time - (startTime ?? time)
        let segment = segment(atElapsed: elapsed)
        var main = random.logNormal(median: segment == nil ? profile.idleMain : profile.motionMain, sigma: profile.sigma)
        let render = random.logNormal(median: profile.render, sigma: profile.sigma)
        if segment != nil, random.chance(profile.spikeProbability) {
            main += profile.spikeMain.lowerBound + random.unit() * (profile.spikeMain.upperBound - profile.spikeMain.lowerBound)
        }
        if time >= nextStall, let stallInterval {
            main += stallLength
            nextStall = time + stallLength + random.exponential(mean: stallInterval)
        }
        return FrameWork(main: main, render: render, segment: segment)
    }

    /// Whether `duration` seconds have passed since the first frame.
    public func isFinished(at time: Double) -> Bool {
        guard let startTime else { return false }
        return time - startTime >= duration
    }
}
