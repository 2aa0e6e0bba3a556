/// The thresholds a ``FrameAnalyzer`` measures with.
///
/// The defaults are the ones `docs/metrics.md` documents: Apple's 250 ms hang
/// threshold, the 700 ms frozen-frame threshold of Android vitals, Firebase and
/// Sentry, one-second FPS windows and a ±20 % stability band.
public struct AnalyzerConfiguration: Sendable, Hashable, Codable {
    /// A frame whose duration is at least this long is a hang, in seconds. Default 0.25.
    public var hangThreshold: Double
    /// A frame whose duration is at least this long is frozen, in seconds. Default 0.7.
    public var frozenThreshold: Double
    /// Length of one FPS window, in seconds. Default 1.
    public var windowLength: Double
    /// Half-width of the stability band, as a fraction of average FPS. Default 0.2 (±20 %).
    public var stabilityBand: Double
    /// Nominal refresh interval in seconds for ticks that carry neither a target
    /// timestamp nor their own refresh interval (1/60 for a 60 Hz trace). Default `nil`:
    /// such ticks are rejected.
    public var refreshInterval: Double?

    /// Creates a configuration; every parameter defaults to the documented value.
    public init(
        hangThreshold: Double = 0.25,
        frozenThreshold: Double = 0.7,
        windowLength: Double = 1.0,
        stabilityBand: Double = 0.2,
        refreshInterval: Double? = nil
    ) {
        self.hangThreshold = hangThreshold
        self.frozenThreshold = frozenThreshold
        self.windowLength = windowLength
        self.stabilityBand = stabilityBand
        self.refreshInterval = refreshInterval
    }

    /// What is wrong with this configuration, or `nil` when every threshold is usable.
    ///
    /// Thresholds must be finite and positive; the stability band lies in (0, 1).
    public var problem: String? {
        if !(hangThreshold.isFinite && hangThreshold > 0) { return "hangThreshold must be a positive number of seconds, not \(hangThreshold)" }
        if !(frozenThreshold.isFinite && frozenThreshold > 0) { return "frozenThreshold must be a positive number of seconds, not \(frozenThreshold)" }
        if !(windowLength.isFinite && windowLength > 0) { return "windowLength must be a positive number of seconds, not \(windowLength)" }
        if !(stabilityBand.isFinite && stabilityBand > 0 && stabilityBand < 1) { return "stabilityBand must lie between 0 and 1, not \(stabilityBand)" }
        if let refreshInterval, !(refreshInterval.isFinite && refreshInterval > 0) {
            return "refreshInterval must be a positive number of seconds, not \(refreshInterval)"
        }
        return nil
    }
}
