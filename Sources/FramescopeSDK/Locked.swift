import Foundation

/// A value guarded by a lock and reached only through a closure, so the lock cannot be
/// left held and the value cannot be touched without it.
///
/// It has the shape of `Mutex.withLock` from the standard library's `Synchronization`
/// module, which needs macOS 15 and iOS 18; the package supports macOS 14 and iOS 17, so
/// this box wraps `NSLock` (a pthread mutex). Locking and unlocking allocate nothing.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only between `lock.lock()` and
    // `lock.unlock()`, in `withLock`.
    private let lock = NSLock()
    private var value: Value

    /// Creates a box holding `value`.
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    ///
    /// Keep `body` short: it must not block, and it must not call `withLock` on the same
    /// box (the lock is not recursive).
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
