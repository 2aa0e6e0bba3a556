import FramescopeCore

/// How a simulated display refreshes.
public enum DisplayMode: Sendable, Hashable {
    /// A fixed rate, in Hz (60, 120, 50).
    case fixed(hz: Double)
    /// Variable refresh (ProMotion): `idleHz` while nothing moves, `motionHz` while
    /// scrolling or animating.
    case variable(idleHz: Double, motionHz: Double)

    /// The refresh rate in Hz for the given state; low-power mode caps it at 60 Hz.
    public func refreshRate(inMotion: Bool, lowPower: Bool) -> Double {
        let rate: Double
        switch self {
        case let .fixed(hz): rate = hz
        case let .variable(idleHz, motionHz): rate = inMotion ? motionHz : idleHz
        }
        return lowPower ? min(rate, 60) : rate
    }

    /// The highest rate this display reaches, in Hz.
    public var maximumRefreshRate: Double {
        switch self {
        case let .fixed(hz): return hz
        case let .variable(idleHz, motionHz): return max(idleHz, motionHz)
        }
    }
}
