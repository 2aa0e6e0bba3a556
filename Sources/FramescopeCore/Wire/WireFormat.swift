/// Version 1 of the format in which the SDK sends screen visits to the collector
/// (`POST /v1/events`). The SDK, the fleet simulation and the collector share these
/// types; nothing re-declares them.
///
/// A batch names the app and the device once and carries up to a bounded number of
/// events. Each event is one screen visit: the engine's mergeable ``FrameReport`` for
/// the whole visit and for its motion, plus context. Times are ISO 8601 in UTC; the
/// report's own times are seconds. A later version gets its own path (`/v2/events`),
/// so v1 clients keep working.
public enum WireFormat {
    /// The version of this format.
    public static let version = 1
}

/// One upload: a batch of events from one app install on one device.
public struct EventBatch: Sendable, Hashable, Codable {
    /// Unique per batch, kept across retries so the collector counts a batch once
    /// (1–64 characters: letters, digits, `-`, `_`).
    public var batchId: String
    /// The app that sent it.
    public var app: AppInfo
    /// The device it ran on.
    public var device: DeviceInfo
    /// The events, oldest first.
    public var events: [ScreenVisitEvent]
    /// The share of installations that measure (``minimumSampleRate`` to 1), when the SDK samples:
    /// each installation is in or out for good (``InstallationSampling``), so the figures of
    /// a batch with `0.1` stand for about ten times as many installations. Absent: 1.
    public var sampleRate: Double?

    /// The lowest ``sampleRate`` a batch may claim: one installation in a million, the finest
    /// rate the collector keeps (it counts rates in parts per million, so a lower rate could
    /// only be stored as a different one).
    public static let minimumSampleRate = 0.000_001

    /// Whether `rate` is a ``sampleRate`` a batch may claim: a finite number from
    /// ``minimumSampleRate`` to 1. The one rule the collector refuses a batch by (400 naming
    /// `sampleRate`) and the SDK checks its configuration by.
    public static func isValidSampleRate(_ rate: Double) -> Bool {
        rate.isFinite && rate >= minimumSampleRate && rate <= 1
    }

    /// Creates a batch.
    public init(batchId: String, app: AppInfo, device: DeviceInfo, events: [ScreenVisitEvent], sampleRate: Double? = nil) {
        self.batchId = batchId
        self.app = app
        self.device = device
        self.events = events
        self.sampleRate = sampleRate
    }
}

/// The app a batch comes from.
public struct AppInfo: Sendable, Hashable, Codable {
    /// The collector's app id (`demo`), or nil to let the collector file the batch under the
    /// app its ingest key belongs to. When present it must be the key's app (else 403
    /// `wrong_app`).
    public var id: String?
    /// The marketing version (`3.2.0`).
    public var version: String
    /// The build number (`4120`).
    public var build: String

    /// Creates app information; without `id` the collector takes the ingest key's app.
    public init(id: String? = nil, version: String, build: String) {
        self.id = id
        self.version = version
        self.build = build
    }
}

/// The device a batch comes from.
public struct DeviceInfo: Sendable, Hashable, Codable {
    /// The hardware model (`iPhone15,2`).
    public var model: String
    /// The operating system's name (`iOS`).
    public var osName: String
    /// The operating system's version (`18.1`).
    public var osVersion: String
    /// The display's highest refresh rate, in Hz (60, or 120 with ProMotion).
    public var maxRefreshRate: Int
    /// A random id the SDK makes once per installation (not a device or user identifier),
    /// so the collector can count distinct devices; optional.
    public var installationId: String?

    /// Creates device information.
    public init(model: String, osName: String, osVersion: String, maxRefreshRate: Int, installationId: String? = nil) {
        self.model = model
        self.osName = osName
        self.osVersion = osVersion
        self.maxRefreshRate = maxRefreshRate
        self.installationId = installationId
    }
}

/// One visit to one screen: from entering it to leaving it, with pauses left out.
///
/// On the wire, each report is either its JSON object (`report`, `motion`) or its compact
/// binary form in base64 (`reportData`, `motionData`; ``FrameReport/binaryEncoded()``),
/// which is about a tenth of the size and far cheaper to decode. Encoding writes the
/// objects unless the encoder's `userInfo` has ``ScreenVisitEvent/compactReportsKey`` set to `true`.
public struct ScreenVisitEvent: Sendable, Hashable, Codable {
    /// The kind of event; `screenVisit` is the only kind in version 1.
    public var kind: String = "screenVisit"
    /// The screen's name (`Feed`).
    public var screen: String
    /// When the visit began, ISO 8601 in UTC.
    public var startedAt: String
    /// How long the screen was measured, in seconds (pauses excluded).
    public var duration: Double
    /// Network, power and thermal state, plus custom tags.
    public var context: VisitContext
    /// The whole visit's frames.
    public var report: FrameReport
    /// The visit's frames in motion (scrolling, animating), or `nil` when nothing moved.
    public var motion: FrameReport?
    /// Hangs the watchdog saw during the visit.
    public var hangs: [HangRecord]
    /// Process CPU and memory during the visit, when sampled.
    public var resources: ResourceUsage?
    /// The visit's late frames during which the hang watchdog saw the main thread busy,
    /// when a watchdog ran: a hint that the main thread, not rendering, caused them.
    public var mainThreadHitches: MainThreadHitches?

    /// Creates an event.
    public init(screen: String, startedAt: String, duration: Double, context: VisitContext, report: FrameReport,
                motion: FrameReport?, hangs: [HangRecord] = [], resources: ResourceUsage? = nil,
                mainThreadHitches: MainThreadHitches? = nil) {
        self.screen = screen
        self.startedAt = startedAt
        self.duration = duration
        self.context = context
        self.report = report
        self.motion = motion
        self.hangs = hangs
        self.resources = resources
        self.mainThreadHitches = mainThreadHitches
    }
}

/// The late frames of a visit during which the hang watchdog saw the main thread busy
/// (a ping it posted waited at least the SDK's busy threshold, 34 ms by default).
///
/// A late frame while the main thread was busy was most likely late because of the app's
/// own main-thread work; the other late frames more likely on the render side (GPU, render
/// server) or behind main-thread work too short for the watchdog to see. The watchdog pings
/// at an interval (0.05 s by default), so busy spans shorter than that are seen only
/// sometimes: the figures are a lower bound, exact for long stalls.
public struct MainThreadHitches: Sendable, Hashable, Codable {
    /// Late frames (at least one refresh missed) that overlapped a busy span of the main thread.
    public var frames: Int
    /// Their hitch time: the sum of their lateness, in seconds.
    public var hitchTime: Double

    /// Creates the figures.
    public init(frames: Int, hitchTime: Double) {
        self.frames = frames
        self.hitchTime = hitchTime
    }

    enum CodingKeys: String, CodingKey { case frames, hitchTime }

    /// Decodes the figures, refusing negative or non-finite values.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        frames = try container.decode(Int.self, forKey: .frames)
        hitchTime = try container.decode(Double.self, forKey: .hitchTime)
        guard frames >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .frames, in: container, debugDescription: "frames must not be negative")
        }
        guard hitchTime.isFinite, hitchTime >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .hitchTime, in: container,
                                                   debugDescription: "hitchTime must be a non-negative number of seconds")
        }
    }
}

/// The state of the device during a visit.
public struct VisitContext: Sendable, Hashable, Codable {
    /// How the device was connected.
    public enum Network: String, Sendable, Hashable, Codable, CaseIterable {
        /// Wi-Fi.
        case wifi
        /// A cellular network.
        case cellular
        /// Wired.
        case ethernet
        /// No connection.
        case offline
        /// Not known.
        case unknown
    }

    /// The device's thermal state, as the operating system reports it.
    public enum ThermalState: String, Sendable, Hashable, Codable, CaseIterable {
        /// Normal.
        case nominal
        /// Slightly elevated.
        case fair
        /// High: the system throttles.
        case serious
        /// Critical.
        case critical
    }

    /// The network type.
    public var network: Network
    /// Whether low-power mode was on (it caps ProMotion at 60 Hz).
    public var lowPowerMode: Bool
    /// The thermal state.
    public var thermalState: ThermalState
    /// Custom tags (at most ``maximumTags``, keys 1 to ``maximumTagLength`` bytes of UTF-8 and values at most that, following ``WireText``).
    public var tags: [String: String]

    /// Most tags per visit.
    public static let maximumTags = 16
    /// Longest tag key or value, in bytes of UTF-8.
    public static let maximumTagLength = 64

    /// Creates a context.
    public init(network: Network, lowPowerMode: Bool, thermalState: ThermalState = .nominal, tags: [String: String] = [:]) {
        self.network = network
        self.lowPowerMode = lowPowerMode
        self.thermalState = thermalState
        self.tags = tags
    }
}

/// A hang seen by the watchdog: how far into the visit it began, how long it lasted, and
/// (from SDKs that sample) the main thread's stack while it lasted.
public struct HangRecord: Sendable, Hashable, Codable {
    /// Seconds from the visit's start to the hang's start.
    public var offset: Double
    /// The hang's length, in seconds.
    public var duration: Double
    /// `true` when every sample found the main thread parked in its run loop's wait: the
    /// process was suspended or stopped, not busy, so the time is no hang of the app's.
    /// Absent (`nil`) from SDKs that do not sample, and when not idle.
    public var idle: Bool?
    /// The main thread's stack sampled during the hang, or `nil` when none was taken.
    public var stack: HangStack?

    /// Creates a hang record.
    public init(offset: Double, duration: Double, idle: Bool? = nil, stack: HangStack? = nil) {
        self.offset = offset
        self.duration = duration
        self.idle = idle
        self.stack = stack
    }
}

/// Process CPU and memory over a visit.
public struct ResourceUsage: Sendable, Hashable, Codable {
    /// Minimum, mean and maximum of a sampled figure.
    public struct Summary: Sendable, Hashable, Codable {
        /// The smallest sample.
        public var min: Double
        /// The mean of the samples.
        public var mean: Double
        /// The largest sample.
        public var max: Double
        /// Creates a summary.
        public init(min: Double, mean: Double, max: Double) {
            self.min = min
            self.mean = mean
            self.max = max
        }
    }

    /// CPU use in percent of one core, summed over threads.
    public var cpuPercent: Summary
    /// Resident memory in bytes.
    public var residentBytes: Summary
    /// How many samples the summaries rest on.
    public var samples: Int

    /// Creates resource usage.
    public init(cpuPercent: Summary, residentBytes: Summary, samples: Int) {
        self.cpuPercent = cpuPercent
        self.residentBytes = residentBytes
        self.samples = samples
    }
}
