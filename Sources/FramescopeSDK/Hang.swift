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
    /// The watched thread's stack, sampled while the hang lasted, or `nil` when the watchdog
    /// samples no stacks or took none (set in ``HangEvent/ended(_:_:)`` only).
    public var stack: HangStack?
    /// Whether every sample found the watched thread parked in its run loop's wait: the
    /// thread was idle, not working (a nested run loop in a mode that does not serve the
    /// queue), so the time is no hang of the app's. Set in ``HangEvent/ended(_:_:)`` only.
    public var isIdle: Bool

    /// Creates a hang (`start` in nanoseconds of the watchdog's clock, `duration` in seconds).
    public init(start: UInt64, duration: Double, stack: HangStack? = nil, isIdle: Bool = false) {
        self.start = start
        self.duration = duration
        self.stack = stack
        self.isIdle = isIdle
    }

    /// The middle of the hang, in nanoseconds of the watchdog's clock: what decides which
    /// screen visit it belongs to.
    public var midpoint: UInt64 {
        start &+ nanoseconds(duration) / 2
    }

    /// This hang as the wire format records it, for a screen visit that began at
    /// `visitStart` (nanoseconds of the same clock). A hang that began before the visit
    /// gets offset 0 and only the part inside the visit as its duration (seconds). The stack
    /// and the idle verdict go with it (`idle` is absent unless true).
    public func record(visitStart: UInt64) -> HangRecord {
        guard start < visitStart else {
            return HangRecord(offset: seconds(start - visitStart), duration: duration, idle: isIdle ? true : nil,
                              stack: stack)
        }
        let before = seconds(visitStart - start)
        let inside = Swift.max(0, duration - before)
        return HangRecord(offset: 0, duration: inside, idle: isIdle ? true : nil,
                          stack: stack?.window(from: before, duration: inside))
    }
}

extension HangStack {
    /// The samples taken from `from` seconds after the hang's start for `duration` seconds,
    /// with times counted from `from`; `nil` when none is left. Images and frames stay as they
    /// are (a frame no sample names is harmless). For a hang cut to the part inside a visit.
    func window(from: Double, duration: Double) -> HangStack? {
        let kept = samples.compactMap { sample -> Sample? in
            let at = sample.at - from
            return at >= 0 && at <= duration ? Sample(at: at, frames: sample.frames) : nil
        }
        return kept.isEmpty ? nil : HangStack(images: images, frames: frames, samples: kept)
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
