import Foundation

/// A value shared between threads, reached only through ``withLock(_:)``, so the lock
/// cannot be left held. (`Synchronization.Mutex` needs macOS 15; the package supports 14.)
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A box holding `value`.
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value while holding the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
