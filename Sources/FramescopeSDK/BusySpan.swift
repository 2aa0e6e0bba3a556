import Atomics

/// A span in which the hang watchdog saw its watched queue (the main thread) busy: a ping
/// posted at ``start`` ran only at ``end``, at least the busy threshold later. Times are
/// nanoseconds of the watchdog's ``MonotonicClock``, to the millisecond.
public struct BusySpan: Sendable, Hashable {
    /// When the queue was last known to keep up (the ping was posted), in nanoseconds.
    public var start: UInt64
    /// When the ping ran, or the latest check while it still waited, in nanoseconds.
    public var end: UInt64

    /// Creates a span.
    public init(start: UInt64, end: UInt64) {
        self.start = start
        self.end = end
    }

    /// Whether the span shares any time with `[from, to]` (nanoseconds).
    @inlinable
    public func overlaps(from: UInt64, to: UInt64) -> Bool {
        start < to && end > from
    }
}

/// The latest ``BusySpan`` in one atomic word, written by the watchdog and its ping and
/// read on the measured thread without a lock.
///
/// The word holds the span's start in milliseconds since the watchdog was created (high 32
/// bits, about 49 days) and its length in milliseconds (low 32 bits, at least 1); 0 is "none
/// yet", and a length of 0 a span withdrawn because the queue was idle (``retract(start:)``).
final class BusySpanReader: Sendable {
    /// The clock reading the start is counted from, in nanoseconds.
    let epoch: UInt64
    /// The word. An `UnsafeAtomic` (a pointer, freed in `deinit`) rather than a
    /// `ManagedAtomic` (a class), so a reader holding ``word`` loads it without retaining
    /// anything: the screen tracker does so on every tick.
    let word: UnsafeAtomic<UInt64>

    init(epoch: UInt64) {
        self.epoch = epoch
        word = .create(0)
    }

    deinit {
        word.destroy()
    }

    /// Publishes `[start, end]` (nanoseconds) as the latest span.
    func publish(start: UInt64, end: UInt64) {
        let startMilliseconds = start.minus(epoch) / 1_000_000
        let lengthMilliseconds = (end.minus(start) + 999_999) / 1_000_000
        guard startMilliseconds <= UInt64(UInt32.max) else { return }
        // At least 1 ms long: a length of 0 is a withdrawn span.
        let packed = startMilliseconds << 32 | min(max(lengthMilliseconds, 1), UInt64(UInt32.max))
        word.store(packed, ordering: .releasing)
    }

    /// Withdraws the span that starts at `start` (ns): the queue was found idle, not busy, in
    /// it (every stack sample showed its thread parked in the run loop's wait). Publishes a
    /// span of that start and no length, which a reader takes as replacing the earlier word of
    /// the same start (``isSameSpan(_:_:)``) and as no span at all.
    func retract(start: UInt64) {
        let startMilliseconds = start.minus(epoch) / 1_000_000
        guard startMilliseconds <= UInt64(UInt32.max) else { return }
        word.store(startMilliseconds << 32, ordering: .releasing)
    }

    /// Whether two words describe the same span (the same start), the later one grown or
    /// withdrawn: a reader replaces rather than shifts.
    @inline(__always)
    static func isSameSpan(_ a: UInt64, _ b: UInt64) -> Bool {
        a >> 32 == b >> 32
    }

    /// Unpacks a word of a reader whose epoch is `epoch` (nanoseconds); a withdrawn span
    /// (length 0, ``retract(start:)``) is none.
    static func span(_ packed: UInt64, epoch: UInt64) -> BusySpan? {
        guard packed & 0xFFFF_FFFF != 0 else { return nil }
        let start = epoch + (packed >> 32) * 1_000_000
        return BusySpan(start: start, end: start + (packed & 0xFFFF_FFFF) * 1_000_000)
    }

    /// The latest span, or nil.
    var latest: BusySpan? {
        Self.span(word.load(ordering: .acquiring), epoch: epoch)
    }
}
