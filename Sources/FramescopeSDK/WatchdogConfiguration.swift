/// How the SDK watches the main thread for hangs: whether it does, how often it checks,
/// when a wait marks the main thread busy, and how it samples stacks while a hang lasts.
///
/// The hang threshold is not here: it is the tracker's
/// (``ScreenTracker/Configuration/analyzer``, default 0.25 s), so the visits' frames and the
/// watchdog's hangs agree on what a hang is. ``HangWatchdog/Configuration`` is what the SDK
/// makes of these settings and that threshold.
///
/// ```swift
/// import FramescopeSDK
/// import Foundation
///
/// var configuration = Framescope.Configuration(collector: URL(string: "https://framescope.example.com")!,
///                                              ingestKey: "fsi_…")
/// configuration.watchdog.checkInterval = 0.05   // hangs dated to ±25 ms
/// configuration.watchdog.stacks.interval = nil  // no stacks
/// ```
public struct WatchdogConfiguration: Sendable, Hashable {
    /// How the main thread's stack is sampled while a hang lasts.
    public struct Stacks: Sendable, Hashable {
        /// While a hang lasts, the main thread's stack is sampled every this many seconds
        /// (default 0.1 s, at least 0.01 s), or never with nil. On Linux it needs a main
        /// queue drained by the main thread (`RunLoop.main.run()`). See docs/sdk.md for the cost.
        public var interval: Double?
        /// Most stack samples per hang, 1–`HangStack.maximumSamples` (50; default 20).
        public var samples: Int

        /// Creates stack settings; see the properties for units and defaults.
        public init(interval: Double? = 0.1, samples: Int = 20) {
            self.interval = interval
            self.samples = samples
        }
    }

    /// Whether the hang watchdog runs (default true). Off, visits carry no hangs of the
    /// watchdog's and no fatal hang is recorded.
    public var isEnabled: Bool
    /// The watchdog's check interval, in seconds (default 0.125 s; less than the hang
    /// threshold). Hangs are dated to within half of it; each check wakes two threads (see
    /// ``HangWatchdog``).
    public var checkInterval: Double
    /// A ping to the main thread that waits this long marks it busy, in seconds (default
    /// 0.034 s: two frames at 60 Hz).
    public var busyThreshold: Double
    /// Stack sampling while a hang lasts (default: every 0.1 s, at most 20 samples).
    public var stacks: Stacks

    /// Creates watchdog settings; see the properties for units and defaults.
    public init(isEnabled: Bool = true, checkInterval: Double = 0.125, busyThreshold: Double = 0.034,
                stacks: Stacks = Stacks()) {
        self.isEnabled = isEnabled
        self.checkInterval = checkInterval
        self.busyThreshold = busyThreshold
        self.stacks = stacks
    }

    /// What is wrong with these values, naming the field, or nil when they are usable.
    /// - Parameter hangThreshold: The tracker's hang threshold, in seconds, which the check
    ///   interval must stay below.
    public func problem(hangThreshold: Double) -> String? {
        if !(checkInterval.isFinite && checkInterval > 0 && checkInterval < hangThreshold) {
            return "checkInterval must be a positive number of seconds below the hang threshold (\(hangThreshold) s)"
        }
        if !(busyThreshold.isFinite && busyThreshold > 0) { return "busyThreshold must be a positive number of seconds" }
        if let interval = stacks.interval, !(interval.isFinite && interval >= 0.01) {
            return "stacks.interval must be at least 0.01 seconds"
        }
        if !(1...HangStack.maximumSamples).contains(stacks.samples) {
            return "stacks.samples must be 1–\(HangStack.maximumSamples)"
        }
        return nil
    }

    /// The watchdog's own configuration: these settings with the tracker's hang threshold
    /// (seconds).
    func hangWatchdog(threshold: Double) -> HangWatchdog.Configuration {
        HangWatchdog.Configuration(threshold: threshold, checkInterval: checkInterval, busyThreshold: busyThreshold)
    }
}
