import FramescopeCore

/// A fling: the content leaves the start at ``velocity`` and slows down as a scroll view
/// decelerates, by ``decelerationRate`` per millisecond, until it is slower than
/// ``stopVelocity`` or reaches an end of the content. One segment, `"fling"`.
///
/// After `t` seconds the velocity is `v₀ · r^(1000 t)` and the distance travelled is
/// `v₀ · (r^(1000 t) − 1) / (1000 ln r)`, so a fling covers `v₀ / (1000 · −ln r)` points in
/// all: with `UIScrollView.DecelerationRate.normal` (r = 0.998) a 2,000 point/s fling
/// travels 999 points and lasts 2.65 s before it drops below 10 points per second.
public struct FlingScroll: Sendable, Hashable, Codable {
    /// The velocity at release, in points per second; positive scrolls towards the bottom.
    public var velocity: Double
    /// The share of its velocity the content keeps each millisecond (0.998 is
    /// `UIScrollView.DecelerationRate.normal`, 0.99 is `.fast`).
    public var decelerationRate: Double
    /// The speed below which the fling is over, in points per second.
    public var stopVelocity: Double

    /// A fling at `velocity` points per second.
    ///
    /// - Parameters:
    ///   - velocity: Points per second at release; positive scrolls towards the bottom.
    ///   - decelerationRate: Velocity kept per millisecond (`UIScrollView`'s normal rate, 0.998).
    ///   - stopVelocity: Points per second below which the fling ends (10).
    public init(velocity: Double, decelerationRate: Double = FlingScroll.normalDecelerationRate, stopVelocity: Double = 10) {
        self.velocity = velocity
        self.decelerationRate = decelerationRate
        self.stopVelocity = stopVelocity
    }

    /// `UIScrollView.DecelerationRate.normal`: 0.998 per millisecond.
    public static let normalDecelerationRate = 0.998
    /// `UIScrollView.DecelerationRate.fast`: 0.99 per millisecond.
    public static let fastDecelerationRate = 0.99

    /// What is wrong with these values, naming the field; `nil` when they are usable.
    public var problem: String? {
        if !(velocity.isFinite && velocity != 0 && abs(velocity) <= 1_000_000) {
            return "velocity must be non-zero and at most 1000000 points per second either way"
        }
        if !(decelerationRate > 0.5 && decelerationRate < 1) { return "decelerationRate must be above 0.5 and below 1 (per millisecond)" }
        if !(stopVelocity > 0 && stopVelocity <= 10_000) { return "stopVelocity must be above 0 and at most 10000 points per second" }
        return nil
    }

    /// The velocity `time` seconds after release, in points per second.
    public func velocity(at time: Double) -> Double {
        velocity * Elementary.exp(1000 * max(0, time) * Elementary.log(decelerationRate))
    }

    /// Points travelled `time` seconds after release, with no end of the content in the way
    /// (negative for a fling upwards).
    public func distance(at time: Double) -> Double {
        let logRate = Elementary.log(decelerationRate)
        return velocity * (Elementary.exp(1000 * max(0, time) * logRate) - 1) / (1000 * logRate)
    }

    /// Seconds until the velocity falls below ``stopVelocity``.
    public var duration: Double {
        guard abs(velocity) > stopVelocity else { return 0 }
        return Elementary.log(stopVelocity / abs(velocity)) / (1000 * Elementary.log(decelerationRate))
    }
}
