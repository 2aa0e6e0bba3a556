/// Turns the platform's scrolling callbacks into one `beginMotion`/`endMotion` pair per
/// stretch of motion, however many sources overlap.
///
/// Sources are counted, so two scroll views moving at once, or the main run loop's
/// tracking mode inside a drag, give one stretch. When the last source ends, motion ends
/// only after ``debounce`` seconds without a new begin, so a fling that ends in a bounce
/// (drag ends → deceleration ends → the bounce's own end), or a second drag right after
/// the first, stays one stretch.
///
/// ```swift
/// var motion = MotionSignal()
/// motion.began(.scrollView(id), at: now)        // .begin
/// motion.ended(.scrollView(id), at: now)        // nil: waiting out the debounce
/// motion.tick(at: now + 0.2)                    // .end
/// ```
///
/// ``tick(at:)`` is called on every display frame; it compares two numbers and allocates nothing.
public struct MotionSignal: Sendable {
    /// Where a begin or an end came from.
    public enum Source: Sendable, Hashable {
        /// The main run loop entered (began) or left (ended) its tracking mode
        /// (`UITrackingRunLoopMode`: a finger is dragging something).
        case trackingMode
        /// A scroll view, by an identity the caller keeps stable (`ObjectIdentifier`'s hash):
        /// began with `scrollViewWillBeginDragging`, ended with `scrollViewDidEndDragging(_:willDecelerate: false)`
        /// or `scrollViewDidEndDecelerating`.
        case scrollView(Int)
        /// Anything else the app marks as motion (an animation), by a name.
        case custom(String)
    }

    /// A change to hand to the SDK.
    public enum Change: Sendable, Hashable {
        /// Call `beginMotion()`.
        case begin
        /// Call `endMotion()`.
        case end
    }

    /// Seconds motion must stay still before it ends.
    public var debounce: Double
    private var active: [Source: Int] = [:]
    private var isMoving = false
    private var endDue = Double.infinity

    /// A signal that waits `debounce` seconds (0.1 by default: six frames at 60 Hz) before it ends motion.
    public init(debounce: Double = 0.1) {
        self.debounce = debounce.isFinite && debounce >= 0 ? debounce : 0.1
    }

    /// Whether motion is under way (a pending end not yet due counts as motion).
    public var isInMotion: Bool { isMoving }

    /// `source` began moving at `time` (seconds, monotonic). A source may begin again
    /// before it ends; it then needs as many ends.
    public mutating func began(_ source: Source, at time: Double) -> Change? {
        active[source, default: 0] += 1
        endDue = .infinity
        guard !isMoving else { return nil }
        isMoving = true
        return .begin
    }

    /// `source` stopped at `time`. An end without a begin is ignored (UIKit sends a
    /// `scrollViewDidEndDecelerating` after a programmatic scroll nobody began).
    public mutating func ended(_ source: Source, at time: Double) -> Change? {
        guard let count = active[source] else { return nil }
        active[source] = count > 1 ? count - 1 : nil
        if active.isEmpty, isMoving { endDue = time + debounce }
        return tick(at: time)
    }

    /// Called on every display frame: ends motion once the debounce has passed.
    public mutating func tick(at time: Double) -> Change? {
        guard time >= endDue else { return nil }
        endDue = .infinity
        isMoving = false
        return .end
    }

    /// Forgets every source and ends motion now if it was under way (the app left the
    /// foreground: no callback may be coming).
    public mutating func reset() -> Change? {
        active = [:]
        endDue = .infinity
        guard isMoving else { return nil }
        isMoving = false
        return .end
    }
}
