/// A continuous scroll for browser recordings (`framescope record chrome`): the content's
/// offset as a function of time, set on each of the page's animation frames.
///
/// The velocity changes linearly from ``startVelocity`` to ``endVelocity`` over
/// ``duration``; ``steady`` keeps it constant and ``accelerating`` ramps it up, as a flick
/// that a user keeps speeding up. (The device's scroll tests use ``ScrollScript``, whose
/// steps follow the display's frames and a timer rather than a formula of time.)
///
/// ```swift
/// let ramp = ScrollRamp.steady
/// ramp.offset(at: 1)   // 1500 points after one second
/// ```
public struct ScrollRamp: Sendable, Hashable, Codable {
    /// The named scripts.
    public enum Name: String, Sendable, CaseIterable, Codable {
        /// 1,500 points per second for 4 s: 6,000 points.
        case steady
        /// From 500 to 5,000 points per second over 4 s: 11,000 points.
        case accelerating
    }

    /// The velocity at the start, in points (CSS pixels) per second.
    public var startVelocity: Double
    /// The velocity at the end, in points per second.
    public var endVelocity: Double
    /// How long the scroll lasts, in seconds.
    public var duration: Double

    /// A script from `startVelocity` to `endVelocity` points per second over `duration` s.
    public init(startVelocity: Double, endVelocity: Double, duration: Double) {
        self.startVelocity = startVelocity
        self.endVelocity = endVelocity
        self.duration = duration
    }

    /// The script called `name`.
    public init(_ name: Name) {
        switch name {
        case .steady: self.init(startVelocity: 1500, endVelocity: 1500, duration: 4)
        case .accelerating: self.init(startVelocity: 500, endVelocity: 5000, duration: 4)
        }
    }

    /// ``Name/steady``.
    public static let steady = ScrollRamp(.steady)
    /// ``Name/accelerating``.
    public static let accelerating = ScrollRamp(.accelerating)

    /// The velocity `time` seconds after the start, in points per second (the end velocity
    /// after the end, the start velocity before the start).
    public func velocity(at time: Double) -> Double {
        let t = min(max(time, 0), duration)
        return duration > 0 ? startVelocity + (endVelocity - startVelocity) * t / duration : startVelocity
    }

    /// How far the content has moved `time` seconds after the start, in points: the
    /// integral of ``velocity(at:)``, constant after the end.
    public func offset(at time: Double) -> Double {
        let t = min(max(time, 0), duration)
        guard duration > 0 else { return 0 }
        return startVelocity * t + (endVelocity - startVelocity) * t * t / (2 * duration)
    }

    /// The whole distance, in points.
    public var distance: Double { offset(at: duration) }
}
