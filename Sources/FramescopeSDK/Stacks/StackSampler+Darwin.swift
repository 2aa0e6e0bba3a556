#if canImport(Darwin)
import CFramescopeStack
import Darwin

/// A thread the stack sampler can suspend: its Mach thread port and its stack's bounds, read
/// once on the thread itself (``current()``), outside any sampling window.
struct SampledThread: Sendable, Hashable {
    /// The thread's Mach port in this task (`pthread_mach_thread_np`). The name belongs to the
    /// thread's pthread and stays valid while the thread lives: the sampler holds no right of
    /// its own and gives none back.
    let port: mach_port_t
    /// The thread's stack, as addresses, from `pthread_get_stackaddr_np` (the high end) and
    /// `pthread_get_stacksize_np` (bytes).
    let stack: Range<UInt64>

    /// The calling thread, made ready to be sampled, or `nil` when it has no Mach port or its
    /// stack bounds are empty. Call it on the thread to be sampled (for the main thread, on the
    /// main thread), outside any hang. It allocates nothing and sets nothing up: suspension
    /// needs no handler. (`pthread_mach_thread_np`, `pthread_get_stackaddr_np` and
    /// `pthread_get_stacksize_np`: iOS 2.0.)
    static func current() -> SampledThread? {
        let thread = pthread_self()
        let port = pthread_mach_thread_np(thread)
        let high = UInt64(UInt(bitPattern: pthread_get_stackaddr_np(thread)))
        let size = UInt64(pthread_get_stacksize_np(thread))
        guard port != mach_port_t(MACH_PORT_NULL), size > 0, size <= high else { return nil }
        return SampledThread(port: port, stack: (high - size)..<high)
    }
}

/// Why an Apple sample brought no stack back (`fs_darwin_sample`'s codes).
enum StackSampleFailure: Int32, Error, Sendable, Hashable {
    /// The thread to sample is the calling thread, which cannot suspend itself.
    case ownThread = -1
    /// `thread_suspend` failed: the thread has exited (or the port is no thread).
    case suspendFailed = -2
    /// `thread_get_state` failed; the thread was resumed.
    case stateFailed = -3
    /// `thread_resume` failed after the walk: the thread is gone.
    case resumeFailed = -4
}

extension SampledThread {
    /// The `timeout` default of ``sample(into:text:timeout:)`` (0.02 s), the Linux figure: on
    /// Apple platforms a sample waits for nobody, so it is not used.
    static let defaultTimeout: Double = 0.02

    /// Suspends the thread, reads its registers, writes its stack into `slot` (instruction
    /// pointer first, then return addresses) and resumes it: returns how many addresses, or
    /// why none. `text` are the code ranges the walk consults (``ImageTable/textRanges``).
    ///
    /// Allocates nothing: the window from suspension to resumption is C only
    /// (`fs_darwin_sample`), as the suspended thread may hold the malloc or dyld lock. The
    /// thread is stopped for the walk only (microseconds). Never call it for the calling thread
    /// (``StackSampleFailure/ownThread``). `timeout` (seconds) is not used on Apple platforms:
    /// a suspended thread needs no answer; it is there so that callers are the same as on Linux.
    func sample(into slot: UnsafeMutableBufferPointer<UInt64>, text: UnsafeBufferPointer<fs_text_range>,
                timeout: Double = defaultTimeout) -> Result<Int, StackSampleFailure> {
        _ = timeout
        guard let out = slot.baseAddress, !slot.isEmpty else { return .success(0) }
        let count = fs_darwin_sample(port, UInt(stack.lowerBound), UInt(stack.upperBound), text.baseAddress,
                                     text.count, out, slot.count)
        if count > 0 { return .success(Int(count)) }
        return .failure(StackSampleFailure(rawValue: count) ?? .stateFailed)
    }

    /// The thread's identity, equal to ``currentIdentity()`` on that thread: its Mach port
    /// name, as a number.
    var identity: UInt64 {
        UInt64(port)
    }

    /// The calling thread's identity, as ``identity`` gives it for a ``SampledThread`` of that
    /// thread: `pthread_mach_thread_np(pthread_self())`, the port libpthread keeps for the
    /// calling thread (no allocation, no lock, and no port right to give back, unlike
    /// `mach_thread_self`). Any thread may call it.
    static func currentIdentity() -> UInt64 {
        UInt64(pthread_mach_thread_np(pthread_self()))
    }
}

extension StackSource {
    /// Samples `thread` by suspending it; `timeout` (seconds) is not used on Apple platforms.
    static func thread(_ thread: SampledThread, timeout: Double = SampledThread.defaultTimeout) -> StackSource {
        StackSource { slot, text in
            switch thread.sample(into: slot, text: text, timeout: timeout) {
            case let .success(count): count
            case .failure: 0
            }
        }
    }
}
#endif
