/// The measurement of one interval between two accepted ticks: the per-frame
/// definitions of `docs/metrics.md` in one place.
///
/// With `p` the earlier tick and `i` the later one:
/// - interval Δ = tᵢ − tₚ
/// - expected E = Tₚ − tₚ (follows variable refresh frame by frame)
/// - elapsed refreshes n = max(1, round(Δ / E)); dropped frames k = n − 1
/// - lateness L = tᵢ − Tₚ when n ≥ 2, else 0 (display-link jitter is not a hitch)
/// - duration D = max(tᵢ, Tₚ) − tₚ (a frame shown early counts as on time), or Δ for display
///   times another tool recorded (``TickTiming/recordedDisplayTimes``)
public struct FrameInterval: Sendable, Hashable {
    /// Seconds between the two timestamps (Δ).
    public var interval: Double
    /// Seconds the display expected the frame to take (E = Tₚ − tₚ).
    public var expected: Double
    /// Refreshes that elapsed, at least 1 (n).
    public var elapsedRefreshes: Int
    /// Seconds the frame was shown later than it was due; 0 unless a refresh was missed (L).
    public var lateness: Double
    /// Seconds the frame took (D): early frames clamped to their target, unless measured with
    /// `clampsEarly` false.
    public var duration: Double

    /// Frames the display skipped in this interval (k = n − 1).
    @inlinable public var droppedFrames: Int { elapsedRefreshes - 1 }

    /// The frame rate this frame alone stands for, in FPS (1 / D).
    @inlinable public var instantaneousFPS: Double { 1 / duration }

    /// The nominal refresh rate of this interval in whole Hz (1 / E rounded).
    @inlinable public var refreshRate: Int {
        let hz = 1 / expected
        return hz < 1 ? 1 : (hz > 100_000 ? 100_000 : Int(hz + 0.5))
    }

    /// Measures the interval that ends at `timestamp`.
    ///
    /// The division Δ / E is done only when Δ ≥ 1.5 E, where n can exceed 1; and
    /// rounding uses `Int(x + 0.5)` (x is positive), which needs no libm call.
    /// - Parameters:
    ///   - previousTimestamp: tₚ, in seconds.
    ///   - previousTarget: Tₚ, in seconds; must be after `previousTimestamp`.
    ///   - timestamp: tᵢ, in seconds; must be after `previousTimestamp`.
    ///   - clampsEarly: Whether a tick before its target counts as on time (D = max(tᵢ, Tₚ) − tₚ,
    ///     a display link's early frame) or at its own length (D = Δ, a recording's jitter
    ///     around the vsync). Default `true`.
    @inlinable @inline(__always)
    public init(previousTimestamp: Double, previousTarget: Double, timestamp: Double, clampsEarly: Bool = true) {
        let interval = timestamp - previousTimestamp
        let expected = previousTarget - previousTimestamp
        var refreshes = 1
        if interval >= 1.5 * expected {
            let ratio = interval / expected
            refreshes = ratio >= 1e9 ? 1_000_000_000 : Int(ratio + 0.5)
        }
        self.interval = interval
        self.expected = expected
        self.elapsedRefreshes = refreshes
        self.lateness = refreshes >= 2 ? timestamp - previousTarget : 0
        self.duration = (timestamp > previousTarget || !clampsEarly ? timestamp : previousTarget) - previousTimestamp
    }
}
