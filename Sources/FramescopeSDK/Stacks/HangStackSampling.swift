/// What a ``HangWatchdog`` needs to sample the watched thread's stack while a hang lasts: the
/// sampler, and which thread to sample.
///
/// The watched queue's ping records the identity of the thread it ran on (``currentThread``,
/// allocation-free); when a hang begins, ``source`` turns the last such identity into a
/// ``StackSource``, or `nil` when that thread cannot be sampled. On Apple platforms the main
/// queue always runs on the main thread; on Linux it does only when the main thread drains it
/// (`RunLoop.main.run()`, as `UIApplicationMain` does), not under `dispatch_main()`, whose
/// worker threads take turns: then no hang is sampled (``HangWatchdog/Statistics/unsampledHangs``).
struct HangStackSampling: Sendable {
    /// Takes the samples, on a thread of its own.
    let sampler: StackSampler
    /// The source for the thread of this identity, or `nil` when it cannot be sampled.
    let source: @Sendable (_ thread: UInt64) -> StackSource?
    /// The calling thread's identity; called by the ping on the watched queue (allocates
    /// nothing, takes no lock).
    let currentThread: @Sendable () -> UInt64
}

extension HangStackSampling {
    /// Sampling of the calling thread every `interval` seconds, at most `samples` per hang,
    /// with idle classification; nil where the calling thread cannot be sampled.
    static func callingThread(interval: Double, samples: Int, clock: MonotonicClock) -> HangStackSampling? {
        #if os(Linux) || canImport(Darwin)
        guard let thread = SampledThread.current() else { return nil }
        let sampler = StackSampler(configuration: StackSampler.Configuration(interval: interval, maximumSamples: samples),
                                   clock: clock, idleClassifier: .loader, loadImages: { ImageTable.loaded() })
        return .thread(thread, sampler: sampler)
        #else
        return nil
        #endif
    }
}

#if os(Linux) || canImport(Darwin)
extension HangStackSampling {
    /// Samples `thread` (read with ``SampledThread/current()`` on it) when the ping last ran on
    /// it, and nothing otherwise.
    static func thread(_ thread: SampledThread, sampler: StackSampler) -> HangStackSampling {
        HangStackSampling(sampler: sampler,
                          source: { identity in identity == thread.identity ? .thread(thread) : nil },
                          currentThread: { SampledThread.currentIdentity() })
    }
}
#endif
