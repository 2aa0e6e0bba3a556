import Dispatch

/// Where ingest decodes, validates and summarizes a large body: off Swift's cooperative
/// pool, one body at a time.
///
/// A body of 16 MiB of hang stacks costs hundreds of milliseconds of CPU to decode and
/// validate even on the fast path. Done on the cooperative pool (two threads on two cores),
/// four such bodies stalled every other request, `/health` included, for up to 18 s (issue
/// 43, item 1). A body from ``heavyBytes`` up is therefore worked on by one serial
/// dispatch queue: heavy bodies wait for each other, never for small batches, and leave
/// the cooperative pool and the other core to everything else. Smaller bodies, every SDK
/// batch among them, are worked on where they are.
enum IngestWork {
    /// The size, in bytes of (inflated) body, from which a body is heavy: 256 KiB, about
    /// four maximal hang stacks; an SDK's batch of binary reports is a few KiB a visit.
    static let heavyBytes = 256 << 10

    /// What a body's decoded form holds in memory, per byte of its JSON, at most: a hang
    /// stack's frame indices are 8-byte integers where the JSON spends 2–5 characters, and
    /// its frames 16 bytes where it spends 8–14; reports and text hold less.
    static let decodedBytesPerByte = 2

    /// The serial queue heavy bodies are worked on.
    private static let queue = DispatchQueue(label: "framescope.ingest.heavy", qos: .utility)

    /// `work`'s result: run where the caller is when `bytes` is below ``heavyBytes``, on
    /// the serial queue otherwise.
    static func run<Value: Sendable>(bytes: Int, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        guard bytes >= heavyBytes else { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
