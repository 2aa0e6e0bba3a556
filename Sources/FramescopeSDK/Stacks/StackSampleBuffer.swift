/// Room for one hang's raw stack samples, allocated once and reused: writing a sample
/// allocates nothing.
///
/// A sample is up to ``depth`` return addresses (innermost first) and the time it was taken
/// (nanoseconds of the ``MonotonicClock``). The stack sampler writes a sample straight into
/// its slot from the signal handler's copy (or, on Apple platforms, from the walk of a
/// suspended thread), so the window in which a thread is interrupted touches no allocator.
///
/// ```swift
/// var buffer = StackSampleBuffer(capacity: 20, depth: 128)
/// buffer.write(at: now) { slot in fillSlot(slot) }   // returns the addresses written
/// buffer.addresses(ofSample: 0)                      // what was written
/// buffer.removeAll()                                 // for the next hang; keeps the storage
/// ```
///
/// Value semantics: a copy shares the storage until either side writes, and the write then
/// copies it (an allocation). The sampler keeps one buffer and never copies it while sampling.
struct StackSampleBuffer: Sendable {
    /// The default number of samples (20, the bound per hang).
    static let defaultCapacity = 20
    /// The default number of addresses per sample (128).
    static let defaultDepth = 128

    /// The most samples it holds.
    let capacity: Int
    /// The most addresses per sample.
    let depth: Int
    /// The samples written since the last ``removeAll()``.
    private(set) var count = 0

    private var addresses: [UInt64]
    private var depths: [Int]
    private var times: [UInt64]

    /// Allocates room for `capacity` samples of at most `depth` addresses each
    /// (`capacity × depth × 8` bytes, 20 KiB with the defaults).
    init(capacity: Int = defaultCapacity, depth: Int = defaultDepth) {
        precondition(capacity > 0 && depth > 0, "StackSampleBuffer: capacity and depth must be positive")
        self.capacity = capacity
        self.depth = depth
        addresses = Array(repeating: 0, count: capacity * depth)
        depths = Array(repeating: 0, count: capacity)
        times = Array(repeating: 0, count: capacity)
    }

    /// Whether every slot holds a sample.
    var isFull: Bool { count == capacity }

    /// Writes the next sample, taken at `time` (ns): `body` fills the slot (``depth``
    /// addresses) and returns how many it wrote. A result of 0 or less (the sample failed), or
    /// a full buffer, keeps nothing. Returns whether the sample was kept.
    ///
    /// Nothing is allocated as long as the buffer's storage is not shared with a copy.
    @discardableResult
    mutating func write(at time: UInt64, _ body: (UnsafeMutableBufferPointer<UInt64>) -> Int) -> Bool {
        guard count < capacity else { return false }
        let start = count * depth
        let depth = depth
        let written = addresses.withUnsafeMutableBufferPointer { storage in
            // The slot is `depth` addresses from `start`; `storage` has capacity × depth.
            body(UnsafeMutableBufferPointer(rebasing: storage[start..<start + depth]))
        }
        guard written > 0 else { return false }
        depths[count] = Swift.min(written, depth)
        times[count] = time
        count += 1
        return true
    }

    /// Forgets the latest sample (one taken after its hang ended).
    mutating func removeLast() {
        precondition(count > 0, "StackSampleBuffer: no sample to remove")
        count -= 1
    }

    /// Forgets every sample and keeps the storage.
    mutating func removeAll() {
        count = 0
    }

    /// The addresses of sample `index` (`0..<count`), innermost first.
    func addresses(ofSample index: Int) -> ArraySlice<UInt64> {
        precondition(index >= 0 && index < count, "StackSampleBuffer: sample \(index) out of 0..<\(count)")
        let start = index * depth
        return addresses[start..<start + depths[index]]
    }

    /// When sample `index` was taken, in nanoseconds of the sampler's clock.
    func time(ofSample index: Int) -> UInt64 {
        precondition(index >= 0 && index < count, "StackSampleBuffer: sample \(index) out of 0..<\(count)")
        return times[index]
    }
}
