import FramescopeCore
import Foundation

/// The SDK: measures every screen visit of the app and sends it to a Framescope collector.
///
/// On Apple platforms one call does everything (``start(collector:ingestKey:configure:)``):
/// the app's version and build, the device's model, OS and refresh rate are read
/// (``SystemFacts``), the installation id is made once and kept (``InstallationID``), the
/// collector files the visits under the ingest key's app, and MetricKit's payloads are
/// forwarded. Elsewhere, or to drive it by hand:
///
/// ```swift
/// import FramescopeSDK
/// import Foundation
///
/// @MainActor func measure(collector: URL) async throws {
///     let framescope = try Framescope(configuration: .init(collector: collector, ingestKey: "fsi_…"))
///     framescope.start()
///     framescope.screen("Feed")                        // on each screen change
///     framescope.beginMotion(); framescope.endMotion() // around scrolls
///     framescope.tick(timestamp: 10.0, targetTimestamp: 10.016) // each refresh
///     await framescope.flush()
/// }
/// ```
///
/// On Apple platforms ``DisplayLinkDriver`` (UIKit) calls ``tick(timestamp:targetTimestamp:refreshInterval:)``
/// from a `CADisplayLink` and pauses in the background; elsewhere the app (or a test)
/// calls it.
///
/// ## Threads
/// Everything here runs on the main actor, the thread that ticks. A tick costs the
/// engine's work and one atomic load, with no allocation and no lock. Closing a visit
/// (``screen(_:)``, ``flush(timeout:)``) takes the engine's report and appends the visit to
/// the pipeline; all else runs elsewhere: the hang watchdog on its own thread, the resource
/// sampler on a timer, and a pipeline task that waits for the watchdog's verdict on the
/// visit's last moments, attaches hangs, CPU and memory and the device's state, writes the
/// visit to the disk queue and hands it to ``onVisit``; the uploader sends batches.
@MainActor
public final class Framescope {
    /// What the SDK needs to know: where to send, who it is, and its thresholds.
    public struct Configuration: Sendable {
        /// The collector's base URL (`https://framescope.example.com`).
        public var collector: URL
        /// The app's ingest key (`fsi_…`).
        public var ingestKey: String
        /// The app: its collector id, version and build; nil (the default) to read the version
        /// and build from the main bundle and let the collector take the key's app
        /// (``AppInfo/current(id:version:build:facts:)`` sets some values and reads the rest).
        public var app: AppInfo?
        /// The device: model, OS, highest refresh rate, installation id; nil (the default) to
        /// read them (``DeviceInfo/current(model:osName:osVersion:maxRefreshRate:installationId:facts:)``).
        /// Without an installation id the SDK's own is sent (``InstallationID``).
        public var device: DeviceInfo?
        /// The share of installations that measure, 0 or 0.000001–1 (default 1; below one in a
        /// million the collector would refuse the batches): an installation is in
        /// or out for good, by its id (``InstallationSampling``), and each batch says the rate
        /// so the collector can say which rates its figures come from.
        public var sampleRate: Double
        /// Whether MetricKit's payloads are forwarded to the collector (`POST /v1/metrickit`)
        /// where MetricKit exists (default true); see ``forwardMetricKitPayload(_:)``.
        public var forwardsMetricKit: Bool
        /// The engine's thresholds and what makes a visit worth sending. The hang threshold
        /// (default 0.25 s) is also the watchdog's.
        public var tracker: ScreenTracker.Configuration
        /// Whether the hang watchdog runs (default true).
        public var watchdogEnabled: Bool
        /// The watchdog's check interval, in seconds (default 0.125 s; less than the hang threshold).
        /// Hangs are dated to within half of it; each check wakes two threads (see
        /// ``HangWatchdog``).
        public var watchdogCheckInterval: Double
        /// A ping to the main thread that waits this long marks it busy, in seconds (default 0.034 s).
        public var busyThreshold: Double
        /// While a hang lasts, the main thread's stack is sampled every this many seconds
        /// (default 0.1 s), or never with nil. Needs the watchdog; on Linux, a main queue
        /// drained by the main thread (`RunLoop.main.run()`). See docs/sdk.md for the cost.
        public var hangStackInterval: Double?
        /// Most stack samples per hang, 1–50 (default 20).
        public var hangStackSamples: Int
        /// How often CPU and memory are sampled, in seconds, or nil for never (default 1 s).
        public var resourceSampleInterval: Double?
        /// Batching, the disk queue and uploads.
        public var delivery: DeliveryConfiguration
        /// Reads the device's network, low-power and thermal state; called off the main
        /// thread when a visit is finished (default: unknown network, nominal, not low power;
        /// on Apple platforms see ``DeviceState/current``).
        public var deviceState: @Sendable () -> DeviceState
        /// Receives one line, off the main thread, for each delivery problem a person should
        /// see: the collector saying the configuration is wrong (when that begins, changes and
        /// ends; see ``DeliveryStatistics/configurationError``), a batch refused, moved back
        /// or abandoned. Pass it to the app's logger (default: nil, nothing is logged).
        public var log: (@Sendable (String) -> Void)?

        /// Creates a configuration; see the properties for units and defaults.
        public init(collector: URL, ingestKey: String, app: AppInfo? = nil, device: DeviceInfo? = nil, sampleRate: Double = 1,
                    forwardsMetricKit: Bool = true,
                    tracker: ScreenTracker.Configuration = ScreenTracker.Configuration(), watchdogEnabled: Bool = true,
                    watchdogCheckInterval: Double = 0.125, busyThreshold: Double = 0.034,
                    hangStackInterval: Double? = 0.1, hangStackSamples: Int = 20, resourceSampleInterval: Double? = 1,
                    delivery: DeliveryConfiguration = DeliveryConfiguration(),
                    deviceState: @escaping @Sendable () -> DeviceState = { DeviceState() },
                    log: (@Sendable (String) -> Void)? = nil) {
            self.collector = collector
            self.ingestKey = ingestKey
            self.app = app
            self.device = device
            self.sampleRate = sampleRate
            self.forwardsMetricKit = forwardsMetricKit
            self.tracker = tracker
            self.watchdogEnabled = watchdogEnabled
            self.watchdogCheckInterval = watchdogCheckInterval
            self.busyThreshold = busyThreshold
            self.hangStackInterval = hangStackInterval
            self.hangStackSamples = hangStackSamples
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
            let threshold = tracker.analyzer.hangThreshold
            if !(watchdogCheckInterval.isFinite && watchdogCheckInterval > 0 && watchdogCheckInterval < threshold) {
                return "watchdogCheckInterval must be a positive number of seconds below the hang threshold (\(threshold) s)"
            }
            if !(busyThreshold.isFinite && busyThreshold > 0) { return "busyThreshold must be a positive number of seconds" }
            if let interval = hangStackInterval, !(interval.isFinite && interval >= 0.01) {
                return "hangStackInterval must be at least 0.01 seconds"
            }
            if !(1...HangStack.maximumSamples).contains(hangStackSamples) {
                return "hangStackSamples must be 1–\(HangStack.maximumSamples)"
            }
            if let interval = resourceSampleInterval, !(interval.isFinite && interval > 0) {
                return "resourceSampleInterval must be a positive number of seconds"
            }
            if let problem = delivery.problem { return "delivery: \(problem)" }
            return nil
        }
    }

    /// Why the SDK could not be created.
    public enum SetupError: Error, CustomStringConvertible, Equatable {
        /// A configuration value is wrong; the text names it.
        case invalidConfiguration(String)
        /// The disk queue's folder cannot be used.
        case queueUnavailable(String)

        /// The error as one line for logs, naming what is wrong.
        public var description: String {
            switch self {
            case let .invalidConfiguration(message): "Framescope configuration: \(message)"
            case let .queueUnavailable(message): "Framescope disk queue: \(message)"
            }
        }
    }

    /// Counters of the tracker and the delivery.
    public struct Statistics: Sendable, Hashable {
        /// Whether this installation measures (see ``Configuration/sampleRate``).
        public var isSampled: Bool
        /// Visits closed, dropped for being short, and long pauses left out.
        public var tracker: ScreenTracker.Statistics
        /// Of the visits the tracker dropped as short (``ScreenTracker/Statistics/visitsDropped``),
        /// those sent nonetheless because they contain a hang.
        public var shortVisitsKept: Int
        /// Hangs the watchdog saw.
        public var hangs: Int
        /// Of those, hangs whose main-thread stack was sampled.
        public var sampledHangs: Int = 0
        /// Of the sampled hangs, those in which the main thread was parked in its run loop's
        /// wait throughout (sent with `idle`, left out of hang groups).
        public var idleHangs: Int = 0
        /// Batches, uploads, retries and drops.
        public var delivery: DeliveryStatistics
        /// MetricKit payloads forwarded (all zero when ``Configuration/forwardsMetricKit`` is off).
        public var metricKit = MetricKitStatistics()
    }

    /// The settings it runs with.
    public let configuration: Configuration
    /// Called on the main actor with each finished visit once it is safe in the disk queue
    /// (for a debug overlay, logs and tests).
    public var onVisit: (@MainActor (ScreenVisitEvent) -> Void)?
    /// Whether this installation measures: decided by its id and ``Configuration/sampleRate``
    /// (``InstallationSampling``), the same at every launch.
    public let isSampled: Bool
    /// The app as sent: the configuration's, or what was read.
    public let app: AppInfo
    /// The device as sent: the configuration's, or what was read, with the installation id.
    public internal(set) var device: DeviceInfo
    /// The SDK's folder: the disk queue, the installation id, MetricKit's queue and the record
    /// of a hang under way.
    public let directory: URL
    /// Whether the configuration gave the refresh rate (then the display link's does not replace it).
    let refreshRateGiven: Bool

    /// The tracker lives behind a pointer allocated once: a tick then reaches it without
    /// the dynamic exclusivity check of a class's stored property (measured: about a third
    /// of a tick's cost). Only the main actor touches it.
    private let trackerStorage: TrackerStorage
    var tracker: UnsafeMutablePointer<ScreenTracker> { trackerStorage.pointer }
    let clock: MonotonicClock
    let watchdog: HangWatchdog?
    private let hangLog: HangLog
    /// The record of the hang under way, for the next launch if this process dies in it.
    private let fatalHangs: FatalHangRecorder?
    private let sampler: ResourceSampler?
    let delivery: DeliveryQueue
    private let messages: AsyncStream<PipelineMessage>
    private let continuation: AsyncStream<PipelineMessage>.Continuation
    private let shortVisitsKept = Locked(0)
    private var isRunning = false
    private(set) var isStopped = false
    private var pipelineTask: Task<Void, Never>?
    private var uploadTask: Task<Void, Never>?
    /// MetricKit's payloads on their way to the collector, when forwarded.
    nonisolated let metricKit: MetricKitForwarder?
    private var metricKitTask: Task<Void, Never>?
    /// MetricKit's subscriber, where there is MetricKit (MetricKit holds it weakly).
    var metricKitSubscriber: AnyObject?
    /// What ``start(collector:ingestKey:configure:)`` set up around the SDK.
    var attachments: [AnyObject] = []

    /// Creates the SDK; nothing is measured or sent until ``start()``.
    /// - Throws: ``SetupError`` naming a wrong configuration value, or a disk queue that
    ///   cannot be opened.
    public init(configuration: Configuration) throws(SetupError) {
        if let problem = configuration.problem { throw .invalidConfiguration(problem) }
        self.configuration = configuration
        let clock = MonotonicClock.system
        self.clock = clock
        let hangLog = HangLog()
        self.hangLog = hangLog
        let directory = configuration.delivery.directory ?? Self.defaultDirectory(appID: configuration.app?.id)
        self.directory = directory
        let facts = configuration.app == nil || configuration.device == nil ? SystemFacts.current() : nil
        let app = configuration.app ?? AppInfo.current(facts: facts)
        var device = configuration.device ?? DeviceInfo.current(facts: facts)
        // A rate given other than the 60 sent before a screen is known is the app's to keep;
        // 60 (read or given) gives way to the display link's (``displayRefreshRate(_:)``).
        refreshRateGiven = configuration.device.map { $0.maxRefreshRate != SystemFacts.defaultRefreshRate } ?? false
        do {
            Self.excludeFromBackup(directory)
            if device.installationId == nil { device.installationId = try InstallationID.load(in: directory) }
        } catch {
            throw .queueUnavailable("the installation id cannot be stored in \(directory.path): \(error)")
        }
        self.app = app
        self.device = device
        isSampled = InstallationSampling.includes(device.installationId ?? "", rate: configuration.sampleRate)
        let fatalHangs = configuration.watchdogEnabled
            ? FatalHangRecorder(directory: directory, app: app, osVersion: device.osVersion,
                                clock: clock, deviceState: configuration.deviceState)
            : nil
        self.fatalHangs = fatalHangs
        if configuration.watchdogEnabled {
            let threshold = configuration.tracker.analyzer.hangThreshold
            let stackSampling = configuration.hangStackInterval.flatMap { interval in
                Self.mainThreadSampling(interval: interval, samples: configuration.hangStackSamples, clock: clock)
            }
            var progress: (@Sendable (Hang) -> Void)?
            if let fatalHangs { progress = { hang in fatalHangs.progressed(hang) } }
            watchdog = HangWatchdog(
                watching: .main,
                configuration: HangWatchdog.Configuration(threshold: threshold, checkInterval: configuration.watchdogCheckInterval,
                                                          busyThreshold: configuration.busyThreshold),
                clock: clock,
                stackSampling: stackSampling,
                progress: progress,
                handler: { event in
                    hangLog.record(event)
                    fatalHangs?.handle(event)
                })
        } else {
            watchdog = nil
        }
        trackerStorage = TrackerStorage(ScreenTracker(configuration: configuration.tracker, busySpans: watchdog?.busySpanReader))
        sampler = configuration.resourceSampleInterval.map { ResourceSampler(interval: $0) }
        do {
            delivery = try DeliveryQueue(configuration: configuration.delivery, directory: directory,
                                         collector: configuration.collector, ingestKey: configuration.ingestKey,
                                         app: app, device: device, sampleRate: configuration.sampleRate,
                                         log: configuration.log)
        } catch {
            throw .queueUnavailable("\(error)")
        }
        do {
            metricKit = configuration.forwardsMetricKit
                ? try MetricKitForwarder(directory: directory, collector: configuration.collector,
                                         ingestKey: configuration.ingestKey, configuration: configuration.delivery,
                                         log: configuration.log)
                : nil
        } catch {
            throw .queueUnavailable("MetricKit's folder: \(error)")
        }
        (messages, continuation) = AsyncStream.makeStream(of: PipelineMessage.self)
    }

    /// Starts measuring (when this session is sampled) and delivering (always: batches an
    /// earlier session left are sent either way). Later calls do nothing.
    public func start() {
        guard !isRunning, !isStopped else { return }
        isRunning = true
        let delivery = delivery
        uploadTask = Task.detached { await delivery.run() }
        let pipeline = VisitPipeline(
            delivery: delivery, sampler: sampler, hangLog: hangLog, deviceState: configuration.deviceState,
            settleNanoseconds: watchdog == nil ? 0 : nanoseconds(configuration.watchdogCheckInterval * 2.5), clock: clock,
            sleeper: delivery.clock,
            shortVisitsKept: shortVisitsKept, notify: { [weak self] event in await self?.notify(event) })
        let messages = messages
        pipelineTask = Task.detached { await pipeline.run(messages) }
        if isSampled { watchdog?.start() }
        if let metricKit {
            metricKitTask = Task.detached { await metricKit.run() }
            subscribeToMetricKit()
        }
    }

    /// The app shows `name` now: closes the current visit and starts one of `name`.
    ///
    /// The name is sent as the collector accepts it (``WireText``): control and format
    /// characters are removed, it is cut to ``maximumScreenNameBytes``, an empty result is
    /// `(unnamed)`, and the collector's reserved `(other)` becomes `(other screen)`.
    public func screen(_ name: String) {
        guard isSampled, !isStopped else { return }
        // The collector refuses names with control or format characters, or over 128
        // bytes of UTF-8: send what it accepts rather than lose the visit.
        var clean = WireText.sanitized(name, maximumBytes: Self.maximumScreenNameBytes, fallback: "(unnamed)")
        if clean == "(other)" { clean = "(other screen)" }
        changeVisit(to: clean)
    }

    /// The longest screen name sent, in bytes of UTF-8 (the collector's limit); longer
    /// names are cut at a Unicode scalar.
    public static let maximumScreenNameBytes = 128

    /// Closes the current visit and, with a name, starts one of that screen; hands the
    /// closed visit to the pipeline, which sends it (a short one only if it holds a hang).
    private func changeVisit(to screen: String?) {
        let outcome = screen.map { tracker.pointee.enter($0, now: clock.now(), unixTime: Date().timeIntervalSince1970) }
            ?? tracker.pointee.close(now: clock.now())
        publishScene()
        continuation.yield(.visitChanged(closed: outcome, started: screen != nil))
    }

    /// Records one display-refresh tick. Call it every refresh, from the main thread.
    /// - Parameters:
    ///   - timestamp: When the last frame was shown, in seconds of the monotonic clock
    ///     (`CADisplayLink.timestamp`; ``MonotonicClock`` seconds elsewhere).
    ///   - targetTimestamp: When the next frame is due, in the same seconds
    ///     (`CADisplayLink.targetTimestamp`), if known.
    ///   - refreshInterval: The nominal refresh interval in seconds (`CADisplayLink.duration`),
    ///     used when there is no target.
    public func tick(timestamp: Double, targetTimestamp: Double?, refreshInterval: Double? = nil) {
        // A session that is not sampled never enters a screen, and the tracker ignores
        // ticks without one.
        tracker.pointee.tick(timestamp: timestamp, targetTimestamp: targetTimestamp, refreshInterval: refreshInterval)
    }

    /// Motion (a scroll, an animation) begins: the visit reports its motion apart.
    public func beginMotion() {
        tracker.pointee.beginMotion()
    }

    /// Motion ends.
    public func endMotion() {
        tracker.pointee.endMotion()
    }

    /// Sets (or with nil removes) a custom tag for the current and later visits.
    /// - Returns: false, changing nothing, when the tag breaks the limits: at most
    ///   ``VisitContext/maximumTags`` tags, keys 1–64 and values 0–64 bytes of UTF-8, with no control or format characters (``WireText``).
    @discardableResult
    public func setTag(_ value: String?, for key: String) -> Bool {
        defer { publishScene() }
        guard let value else {
            tracker.pointee.tags[key] = nil
            return true
        }
        guard WireText.isValid(key, maximumBytes: VisitContext.maximumTagLength),
              WireText.isValid(value, maximumBytes: VisitContext.maximumTagLength, allowEmpty: true),
              tracker.pointee.tags[key] != nil || tracker.pointee.tags.count < VisitContext.maximumTags else { return false }
        tracker.pointee.tags[key] = value
        return true
    }

    /// Stops measuring (the app goes to the background): neither the time until
    /// ``resume()`` nor a hang under way is counted.
    public func pause() {
        guard isSampled, !isStopped else { return }
        tracker.pointee.pause(now: clock.now())
        watchdog?.pause()
    }

    /// Measures again (the app is back in the foreground).
    public func resume() {
        guard isSampled, !isStopped else { return }
        watchdog?.resume()
        tracker.pointee.resume(now: clock.now())
    }

    /// Closes the current visit (a new one of the same screen begins), seals the batch being
    /// filled and waits until the queue (and the MetricKit payloads waiting, when forwarded)
    /// is delivered, `timeout` seconds have passed, or the collector answers that the
    /// configuration is wrong
    /// (``DeliveryStatistics/configurationError``; waiting would not help).
    /// - Returns: Whether the queue is empty: every queued visit delivered, or refused or
    ///   abandoned (see ``statistics()`` for which).
    @discardableResult
    public func flush(timeout: Double = 30) async -> Bool {
        guard isRunning, !isStopped else { return false }
        if isSampled, let screen = tracker.pointee.screen {
            changeVisit(to: screen)
        }
        async let payloads = metricKit?.flush(timeout: timeout) ?? true
        let visits = await withCheckedContinuation { done in
            continuation.yield(.flush(timeout: timeout, done: done))
        }
        return await payloads && visits
    }

    /// Ends the SDK: closes the current visit, writes it to the disk queue, stops the
    /// watchdog and the uploader. What is not delivered stays queued for the next start.
    public func stop() async {
        guard isRunning, !isStopped else { return }
        if isSampled {
            changeVisit(to: nil)
        }
        isStopped = true
        detach()
        continuation.finish()
        await pipelineTask?.value
        watchdog?.stop()
        unsubscribeFromMetricKit()
        await delivery.stop()
        await metricKit?.stop()
        await uploadTask?.value
        await metricKitTask?.value
        release()
    }

    /// The tracker's, the watchdog's and the delivery's counters.
    public func statistics() async -> Statistics {
        let watchdogStatistics = watchdog?.statistics
        return Statistics(isSampled: isSampled, tracker: tracker.pointee.statistics,
                          shortVisitsKept: shortVisitsKept.withLock { $0 }, hangs: watchdogStatistics?.hangs ?? 0,
                          sampledHangs: watchdogStatistics?.sampledHangs ?? 0, idleHangs: watchdogStatistics?.idleHangs ?? 0,
                          delivery: await delivery.currentStatistics,
                          metricKit: await metricKit?.currentStatistics ?? MetricKitStatistics())
    }

    /// Hands the current screen and tags to the fatal-hang record (on screen and tag changes).
    private func publishScene() {
        guard let fatalHangs else { return }
        let scene = FatalHangRecorder.Scene(screen: tracker.pointee.screen, tags: tracker.pointee.tags)
        fatalHangs.scene.withLock { $0 = scene }
    }

    /// Stack sampling of the main thread for the watchdog, when the calling thread is the
    /// main thread and it can be sampled; nil otherwise (then hangs come without stacks).
    private static func mainThreadSampling(interval: Double, samples: Int, clock: MonotonicClock) -> HangStackSampling? {
        Thread.isMainThread ? .callingThread(interval: interval, samples: samples, clock: clock) : nil
    }

    /// The current visit's report so far, for a live overlay; nil with no visit.
    public func currentReport() -> RecordingReport? {
        tracker.pointee.currentReport()
    }

    /// The current screen's name.
    public var currentScreen: String? {
        tracker.pointee.screen
    }

    private func notify(_ event: ScreenVisitEvent) {
        onVisit?(event)
    }
}

/// Owns the tracker's memory: allocated once, freed with the SDK.
private final class TrackerStorage {
    let pointer: UnsafeMutablePointer<ScreenTracker>

    init(_ tracker: ScreenTracker) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: tracker)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
