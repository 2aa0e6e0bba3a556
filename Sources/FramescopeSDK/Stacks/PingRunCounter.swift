import Atomics

/// How many times the watched queue's ping has run: the ping bumps it on the watched queue,
/// the stack sampler reads it around each sample. While it stands still the queue is still
/// stuck; once it moves, the hang is over (``HangSamplingSchedule``).
final class PingRunCounter: Sendable {
    private let runs = ManagedAtomic<UInt64>(0)

    /// A counter at 0.
    init() {}

    /// Records one run of the ping (one atomic add; allocates nothing).
    func bump() {
        runs.wrappingIncrement(ordering: .releasing)
    }

    /// The runs so far.
    var value: UInt64 {
        runs.load(ordering: .acquiring)
    }
}
