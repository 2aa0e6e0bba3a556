import FramescopeCore
import Foundation

/// The flat names ``Framescope/Configuration`` had before its watchdog and MetricKit
/// settings were nested (``WatchdogConfiguration``, ``MetricKitConfiguration``): each forwards
/// to its nested value, and they go in the release after next.
extension Framescope.Configuration {
    /// Creates a configuration from the flat names of earlier releases.
    @available(*, deprecated, message: "pass watchdog: WatchdogConfiguration(…) and metricKit: MetricKitConfiguration(…)")
    public init(collector: URL, ingestKey: String, app: AppInfo? = nil, device: DeviceInfo? = nil, sampleRate: Double = 1,
                forwardsMetricKit: Bool = true,
                tracker: ScreenTracker.Configuration = ScreenTracker.Configuration(), watchdogEnabled: Bool = true,
                watchdogCheckInterval: Double = 0.125, busyThreshold: Double = 0.034,
                hangStackInterval: Double? = 0.1, hangStackSamples: Int = 20, resourceSampleInterval: Double? = 1,
                delivery: DeliveryConfiguration = DeliveryConfiguration(),
                deviceState: @escaping @Sendable () -> DeviceState = { DeviceState() },
                log: (@Sendable (String) -> Void)? = nil) {
        self.init(collector: collector, ingestKey: ingestKey, app: app, device: device, sampleRate: sampleRate,
                  tracker: tracker,
                  watchdog: WatchdogConfiguration(isEnabled: watchdogEnabled, checkInterval: watchdogCheckInterval,
                                                  busyThreshold: busyThreshold,
                                                  stacks: .init(interval: hangStackInterval, samples: hangStackSamples)),
                  metricKit: MetricKitConfiguration(forwardsPayloads: forwardsMetricKit),
                  resourceSampleInterval: resourceSampleInterval, delivery: delivery, deviceState: deviceState, log: log)
    }

    /// Whether MetricKit's payloads are forwarded: ``MetricKitConfiguration/forwardsPayloads``.
    @available(*, deprecated, renamed: "metricKit.forwardsPayloads")
    public var forwardsMetricKit: Bool {
        get { metricKit.forwardsPayloads }
        set { metricKit.forwardsPayloads = newValue }
    }

    /// Whether the hang watchdog runs: ``WatchdogConfiguration/isEnabled``.
    @available(*, deprecated, renamed: "watchdog.isEnabled")
    public var watchdogEnabled: Bool {
        get { watchdog.isEnabled }
        set { watchdog.isEnabled = newValue }
    }

    /// The watchdog's check interval, in seconds: ``WatchdogConfiguration/checkInterval``.
    @available(*, deprecated, renamed: "watchdog.checkInterval")
    public var watchdogCheckInterval: Double {
        get { watchdog.checkInterval }
        set { watchdog.checkInterval = newValue }
    }

    /// The wait that marks the main thread busy, in seconds: ``WatchdogConfiguration/busyThreshold``.
    @available(*, deprecated, renamed: "watchdog.busyThreshold")
    public var busyThreshold: Double {
        get { watchdog.busyThreshold }
        set { watchdog.busyThreshold = newValue }
    }

    /// The stack sampling interval during a hang, in seconds, or nil for none:
    /// ``WatchdogConfiguration/Stacks/interval``.
    @available(*, deprecated, renamed: "watchdog.stacks.interval")
    public var hangStackInterval: Double? {
        get { watchdog.stacks.interval }
        set { watchdog.stacks.interval = newValue }
    }

    /// Most stack samples per hang: ``WatchdogConfiguration/Stacks/samples``.
    @available(*, deprecated, renamed: "watchdog.stacks.samples")
    public var hangStackSamples: Int {
        get { watchdog.stacks.samples }
        set { watchdog.stacks.samples = newValue }
    }
}
