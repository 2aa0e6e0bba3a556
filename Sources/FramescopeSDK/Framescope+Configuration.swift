import FramescopeCore
import Foundation

extension Framescope {
    /// What the SDK needs to know: where to send, who it is, and its thresholds, with one
    /// nested value for each part that has settings of its own (``tracker``, ``watchdog``,
    /// ``metricKit``, ``delivery``).
    ///
    /// The flat names of earlier releases (`watchdogEnabled`, `watchdogCheckInterval`,
    /// `busyThreshold`, `hangStackInterval`, `hangStackSamples`, `forwardsMetricKit`) still
    /// compile, deprecated, for one release, and forward to the nested values.
    public struct Configuration: Sendable {
        /// The collector's base URL (`https://framescope.example.com`).
        public var collector: URL
        /// The app's ingest key (`fsi_…`).
        public var ingestKey: String
        /// The app: its collector id, version and build; nil (the default) to read the version
        /// and build from the main bundle and let the collector take the key's app
        /// (``FramescopeCore/AppInfo/current(id:version:build:facts:)`` sets some values and reads the rest).
        public var app: AppInfo?
        /// The device: model, OS, highest refresh rate, installation id; nil (the default) to
        /// read them (``FramescopeCore/DeviceInfo/current(model:osName:osVersion:maxRefreshRate:installationId:facts:)``).
        /// Without an installation id the SDK's own is sent (``InstallationID``).
        public var device: DeviceInfo?
        /// The share of installations that measure, 0 or 0.000001–1 (default 1; below one in a
        /// million the collector would refuse the batches): an installation is in
        /// or out for good, by its id (`InstallationSampling`), and each batch says the rate
        /// so the collector can say which rates its figures come from.
        public var sampleRate: Double
        /// The engine's thresholds and what makes a visit worth sending. The hang threshold
        /// (default 0.25 s) is also the watchdog's.
        public var tracker: ScreenTracker.Configuration
        /// The hang watchdog: on or off, its check interval and busy threshold, and stack
        /// sampling while a hang lasts.
        public var watchdog: WatchdogConfiguration
        /// Whether MetricKit's payloads are forwarded to the collector (`POST /v1/metrickit`)
        /// where MetricKit exists (default: forwarded); see ``forwardMetricKitPayload(_:)``.
        public var metricKit: MetricKitConfiguration
        /// How often CPU and memory are sampled, in seconds, or nil for never (default 1 s).
        public var resourceSampleInterval: Double?
        /// Batching, the disk queue and uploads.
        public var delivery: DeliveryConfiguration
        /// Reads the device's network, low-power and thermal state; called off the main
        /// thread when a visit is finished (default: unknown network, nominal, not low power;
        /// on Apple platforms see `DeviceState.current()`).
        public var deviceState: @Sendable () -> DeviceState
        /// Receives one line, off the main thread, for each delivery problem a person should
        /// see: the collector saying the configuration is wrong (when that begins, changes and
        /// ends; see ``DeliveryStatistics/configurationError``), a batch refused, moved back
        /// or abandoned. Pass it to the app's logger (default: nil, nothing is logged).
        public var log: (@Sendable (String) -> Void)?

        /// Creates a configuration; see the properties for units and defaults.
        public init(collector: URL, ingestKey: String, app: AppInfo? = nil, device: DeviceInfo? = nil, sampleRate: Double = 1,
                    tracker: ScreenTracker.Configuration = ScreenTracker.Configuration(),
                    watchdog: WatchdogConfiguration = WatchdogConfiguration(),
                    metricKit: MetricKitConfiguration = MetricKitConfiguration(),
                    resourceSampleInterval: Double? = 1,
                    delivery: DeliveryConfiguration = DeliveryConfiguration(),
                    deviceState: @escaping @Sendable () -> DeviceState = { DeviceState() },
                    log: (@Sendable (String) -> Void)? = nil) {
            self.collector = collector
            self.ingestKey = ingestKey
            self.app = app
            self.device = device
            self.sampleRate = sampleRate
            self.tracker = tracker
            self.watchdog = watchdog
            self.metricKit = metricKit
            self.resourceSampleInterval = resourceSampleInterval
            self.delivery = delivery
            self.deviceState = deviceState
            self.log = log
        }

        /// What is wrong with these values, naming the field, or nil when they are usable.
        public var problem: String? {
            guard let scheme = collector.scheme?.lowercased(), scheme == "http" || scheme == "https", collector.host != nil else {
                return "collector must be an http or https URL"
            }
            if ingestKey.isEmpty { return "ingestKey must not be empty" }
            let values: [(String, String?)] = [
                ("app.id", app?.id), ("app.version", app?.version), ("app.build", app?.build),
                ("device.model", device?.model), ("device.osName", device?.osName), ("device.osVersion", device?.osVersion),
            ]
            for case let (field, value?) in values where !(1...64).contains(value.count) {
                return "\(field) must be 1–64 characters"
            }
            if let rate = device?.maxRefreshRate, !(1...1000).contains(rate) { return "device.maxRefreshRate must be 1–1000 Hz" }
            if let id = device?.installationId, !InstallationID.isValid(id) {
                return "device.installationId must be 1–64 letters, digits, '-' or '_'"
            }
            if !(sampleRate == 0 || EventBatch.isValidSampleRate(sampleRate)) {
                return "sampleRate must be 0 (no installation measures) or from 0.000001 (one in a million, the finest rate the collector keeps) to 1"
            }
            if let problem = tracker.problem { return "tracker: \(problem)" }
            if let problem = watchdog.problem(hangThreshold: tracker.analyzer.hangThreshold) { return "watchdog: \(problem)" }
            if let interval = resourceSampleInterval, !(interval.isFinite && interval > 0) {
                return "resourceSampleInterval must be a positive number of seconds"
            }
            if let problem = delivery.problem { return "delivery: \(problem)" }
            return nil
        }
    }
}
