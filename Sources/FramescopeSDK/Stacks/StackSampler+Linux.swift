#if os(Linux)
import CFramescopeStack
import Glibc

/// A thread the stack sampler can interrupt: its kernel id and its stack's bounds, read once
/// on the thread itself (``current()``), outside any sampling window.
struct SampledThread: Sendable, Hashable {
    /// The thread's kernel id (`gettid`).
    let tid: Int32
    /// The thread's stack, as addresses (from `pthread_getattr_np`).
    let stack: Range<UInt64>

    /// The calling thread, made ready to be sampled, or `nil` when its stack bounds cannot be
    /// read or no signal is free. Call it on the thread to be sampled (for the main thread, on
    /// the main thread), outside any hang: `pthread_getattr_np` reads `/proc/self/maps` for the
    /// main thread and allocates.
    ///
    /// It installs the sampler's signal handler if that has not happened yet and unblocks the
    /// signal in the calling thread: threads inherit their creator's signal mask, and
    /// libdispatch's worker threads block every signal, so a thread started from one (a
    /// Swift concurrency task, a test) would otherwise never answer.
    static func current() -> SampledThread? {
        var low: UInt = 0
        var high: UInt = 0
        guard let signal = installedSignal,
              fs_thread_stack_bounds(pthread_self(), &low, &high) == 0, low < high else { return nil }
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        guard pthread_sigmask(SIG_UNBLOCK, &set, nil) == 0 else { return nil }
        return SampledThread(tid: fs_current_tid(), stack: UInt64(low)..<UInt64(high))
    }
}

/// Why a Linux sample brought no stack back (`fs_sampler_request`'s codes).
enum StackSampleFailure: Int32, Error, Sendable, Hashable {
    /// The thread did not run the handler within the timeout (it exited, or is stopped).
    case timeout = -1
    /// No such thread in this process.
    case noThread = -2
    /// No free real-time signal: every one of SIGRTMIN+4 … SIGRTMAX has a handler.
    case notInstalled = -3
    /// Another sample was under way (one sampler per process).
    case busy = -4
    /// A handler began and never finished (its thread was stopped mid-walk): sampling is off
    /// for the rest of the process.
    case stuck = -5
}

extension SampledThread {
    /// The default wait for the sampled thread to answer (0.02 s): a running or blocked thread
    /// answers in tens of microseconds; one that does not is stopped or gone.
    static let defaultTimeout: Double = 0.02

    /// Interrupts the thread with the sampler's signal and writes its stack into `slot`
    /// (instruction pointer first, then return addresses): returns how many addresses, or why
    /// none. `text` are the code ranges the walk consults (``ImageTable/textRanges``).
    ///
    /// Allocates nothing. Installs the signal handler on first use (the first real-time
    /// signal from SIGRTMIN+4 without a handler). The signal makes a `nanosleep`, `usleep`,
    /// `epoll_wait` or `poll` under way in the thread return early with `EINTR`. Never call it
    /// for the calling thread. `timeout` is in seconds.
    func sample(into slot: UnsafeMutableBufferPointer<UInt64>, text: UnsafeBufferPointer<fs_text_range>,
                timeout: Double = defaultTimeout) -> Result<Int, StackSampleFailure> {
        guard let out = slot.baseAddress, !slot.isEmpty else { return .success(0) }
        guard Self.signal > 0 else { return .failure(.notInstalled) }
        let count = fs_sampler_request(tid, UInt(stack.lowerBound), UInt(stack.upperBound), text.baseAddress,
                                       text.count, nanoseconds(timeout), out, slot.count)
        if count > 0 { return .success(Int(count)) }
        return .failure(StackSampleFailure(rawValue: count) ?? .timeout)
    }

    /// The thread's identity, equal to ``currentIdentity()`` on that thread: its kernel id
    /// (``tid``), as a number.
    var identity: UInt64 {
        UInt64(UInt32(bitPattern: tid))
    }

    /// The calling thread's identity, as ``identity`` gives it for a ``SampledThread`` of that
    /// thread: its kernel id (`fs_current_tid`, one `gettid` system call; no allocation, no
    /// lock). Any thread may call it.
    static func currentIdentity() -> UInt64 {
        UInt64(UInt32(bitPattern: fs_current_tid()))
    }

    /// The sampler's signal, installed on first use (-1 when none was free).
    private static let signal: Int32 = fs_sampler_install()

    /// The real-time signal the sampler interrupts threads with (installing its handler if
    /// that has not happened yet), or `nil` when every candidate already had a handler.
    static var installedSignal: Int32? {
        signal > 0 ? signal : nil
    }
}

extension StackSource {
    /// Samples `thread` with a signal, waiting at most `timeout` seconds for it to answer.
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

