import FramescopeCore

/// A hang: a span in which the watched queue made no progress for at least the
/// watchdog's threshold.
public struct Hang: Sendable, Hashable {
    /// When the hang began: the last moment the queue was known to make progress (when
    /// the watchdog posted the ping that did not run), in nanoseconds of the watchdog's
    /// ``MonotonicClock``.
    public var start: UInt64
    /// How long the hang has lasted, in seconds: so far in ``HangEvent/began(_:)``, in
    /// total in ``HangEvent/ended(_:_:)``.
    public var duration: Double

    /// Creates a hang.
    public init(start: UInt64, duration: Double) {
        self.start = start
        self.duration = duration
    }

    /// The middle of the hang, in nanoseconds of the watchdog's clock: what decides which
    /// screen visit it belongs to.
    public var midpoint: UInt64 {
        start &+ nanoseconds(duration) / 2
    }

    /// This hang as the wire format records it, for a screen visit that began at
    /// `visitStart` (nanoseconds of the same clock). A hang that began before the visit
    /// gets offset 0 and only the part inside the visit as its duration (seconds).
    public func record(visitStart: UInt64) -> HangRecord {
        guard start < visitStart else {
            return HangRecord(offset: seconds(start - visitStart), duration: duration)
        }
        let before = seconds(visitStart - start)
        return HangRecord(offset: 0, duration: Swift.max(0, duration - before))
    }
}

/// Why a hang's report ended.
public enum HangEnding: Sendable, Hashable, CaseIterable {
    /// The queue made progress again: the duration is the hang's whole length.
    case recovered
    /// ``HangWatchdog/pause()`` was called while the hang went on: the duration runs to
    /// the pause, and the paused time is not counted.
    case paused
    /// ``HangWatchdog/stop()`` was called while the hang went on: the duration runs to
    /// the stop.
    case stopped
    /// The watchdog itself was not scheduled for longer than its suspension tolerance (the
    /// process was stopped or suspended): the duration runs to the watchdog's last check
    /// before the gap, since what happened in the gap is unknown.
    case suspended

    /// Whether the hang was cut short by the monitoring rather than seen to end: its
    /// duration is a lower bound.
    public var isInterrupted: Bool { self != .recovered }
}

/// What the ``HangWatchdog`` reports to its handler.
public enum HangEvent: Sendable, Hashable {
    /// A hang has begun: the queue has made no progress for at least the threshold. The
    /// hang's duration is how long it has lasted so far, in seconds.
    case began(Hang)
    /// A hang that was reported as begun is over. The duration is its length in seconds,
    /// measured to the end the ``HangEnding`` names.
    case ended(Hang, HangEnding)
}
