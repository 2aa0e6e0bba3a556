/// One display-refresh callback, as `CADisplayLink` delivers it.
///
/// All times are in seconds on one monotonic clock (on Apple platforms the
/// `CACurrentMediaTime()` timebase that `CADisplayLink.timestamp` uses).
///
/// - `timestamp` is when the last frame was shown.
/// - `targetTimestamp` is when the next frame is due. Where it is missing the
///   analyzer uses `timestamp + refreshInterval`, and where that is missing too,
///   the analyzer's configured ``AnalyzerConfiguration/refreshInterval``.
public struct FrameTick: Sendable, Hashable {
    /// When the last frame was shown, in seconds.
    public var timestamp: Double
    /// When the next frame is due, in seconds, if the source knows it.
    public var targetTimestamp: Double?
    /// The display's nominal refresh interval at this tick, in seconds (1/60 for 60 Hz), if known.
    public var refreshInterval: Double?

    /// Creates a tick.
    /// - Parameters:
    ///   - timestamp: When the last frame was shown, in seconds.
    ///   - targetTimestamp: When the next frame is due, in seconds.
    ///   - refreshInterval: Nominal refresh interval in seconds, used where `targetTimestamp` is missing.
    @inlinable
    public init(timestamp: Double, targetTimestamp: Double? = nil, refreshInterval: Double? = nil) {
        self.timestamp = timestamp
        self.targetTimestamp = targetTimestamp
        self.refreshInterval = refreshInterval
    }
}
