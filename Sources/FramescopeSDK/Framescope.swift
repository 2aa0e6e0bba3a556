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
/// On Apple platforms `DisplayLinkDriver` (UIKit) calls ``tick(timestamp:targetTimestamp:refreshInterval:)``
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
///
/// ## Parts
/// What runs from ``start()`` to ``stop()`` is one list of parts (MetricKit's forwarding, the
/// watchdog, the visits' pipeline and uploader, and from the one call the network monitor and
/// the display link), started in that order and stopped in reverse; see docs/sdk.md, "The
/// parts, as one list".
@MainActor
public final class Framescope {
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
        /// MetricKit payloads forwarded (all zero when ``MetricKitConfiguration/forwardsPayloads`` is off).
        public var metricKit = MetricKitStatistics()
    }

    /// The settings it runs with.
    public let configuration: Configuration
    /// Called on the main actor with each finished visit once it is safe in the disk queue
    /// (for a debug overlay, logs and tests).
    public var onVisit: (@MainActor (ScreenVisitEvent) -> Void)?
    /// Whether this installation measures: decided by its id and ``Configuration/sampleRate``
    /// (`InstallationSampling`), the same at every launch.
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
    /// The hang watchdog, when enabled (paused and resumed with the app's lifecycle).
    let watchdog: HangWatchdog?
    /// The record of the hang under way, for the next launch if this process dies in it.
    private let fatalHangs: FatalHangRecorder?
    /// The visits' pipeline and uploader.
    let visits: VisitDelivery
    /// MetricKit's payloads on their way to the collector, when forwarded.
    nonisolated let metricKit: MetricKitForwarder?
    /// The parts that run from ``start()`` to ``stop()``, in the order they start (``SDKPart``):
    /// MetricKit's forwarding, the watchdog (when this installation is sampled), the
    /// visits, then what ``start(collector:ingestKey:configure:)`` adds (the network monitor,
    /// the display-link driver). They stop in reverse order.
    private(set) var parts: [any SDKPart] = []
    private var isRunning = false
    private(set) var isStopped = false

    /// Creates the SDK; nothing is measured or sent until ``start()``.
    /// - Throws: ``SetupError`` naming a wrong configuration value, or a disk queue that
    ///   cannot be opened.
    public init(configuration: Configuration) throws(SetupError) {
        if let problem = configuration.problem { throw .invalidConfiguration(problem) }
        self.configuration = configuration
        let clock = MonotonicClock.system
        self.clock = clock
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
        let fatalHangs = configuration.watchdog.isEnabled
            ? FatalHangRecorder(directory: directory, app: app, osVersion: device.osVersion,
                                clock: clock, deviceState: configuration.deviceState)
            : nil
        self.fatalHangs = fatalHangs
        let hangLog = HangLog()
        let watchdog = configuration.watchdog.isEnabled
            ? Self.watchdog(configuration, clock: clock, hangLog: hangLog, fatalHangs: fatalHangs)
            : nil
        self.watchdog = watchdog
        trackerStorage = TrackerStorage(ScreenTracker(configuration: configuration.tracker, busySpans: watchdog?.busySpanReader))
        let delivery: DeliveryQueue
        do {
            delivery = try DeliveryQueue(configuration: configuration.delivery, directory: directory,
                                         collector: configuration.collector, ingestKey: configuration.ingestKey,
                                         app: app, device: device, sampleRate: configuration.sampleRate,
                                         log: configuration.log)
        } catch {
            throw .queueUnavailable("\(error)")
        }
        visits = VisitDelivery(pipeline: VisitPipeline(
            delivery: delivery, sampler: configuration.resourceSampleInterval.map { ResourceSampler(interval: $0) },
            hangLog: hangLog, deviceState: configuration.deviceState,
            settleNanoseconds: watchdog == nil ? 0 : nanoseconds(configuration.watchdog.checkInterval * 2.5), clock: clock,
            sleeper: delivery.clock, shortVisitsKept: Locked(0), notify: { _ in }))
        let forwarding: MetricKitForwarding?
        do {
            forwarding = configuration.metricKit.forwardsPayloads
                ? MetricKitForwarding(forwarder: try MetricKitForwarder(
                    directory: directory, collector: configuration.collector, ingestKey: configuration.ingestKey,
                    configuration: configuration.delivery, log: configuration.log))
                : nil
        } catch {
            throw .queueUnavailable("MetricKit's folder: \(error)")
        }
        metricKit = forwarding?.forwarder
        // The watchdog runs only where this installation measures.
        let order: [(any SDKPart)?] = [forwarding, isSampled ? watchdog : nil, visits]
        parts = order.compactMap { $0 }
        visits.onVisit = { [weak self] event in await self?.notify(event) }
    }

    /// Starts measuring (when this session is sampled) and delivering (always: batches an
    /// earlier session left are sent either way): starts the parts in order (`parts`).
    /// Later calls do nothing.
    public func start() {
        guard !isRunning, !isStopped else { return }
        isRunning = true
        for part in parts { part.start() }
    }

    /// Adds `part` to the end of `parts` and starts it if the SDK runs; it stops before
    /// the parts added earlier.
    func add(_ part: any SDKPart) {
        guard !isStopped else { return }
        parts.append(part)
        if isRunning { part.start() }
    }

    /// The app shows `name` now: closes the current visit and starts one of `name`.
    ///
    /// The name is sent as the collector accepts it (`WireText`): control and format
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
        visits.visitChanged(closed: outcome, started: screen != nil)
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
    ///   `VisitContext.maximumTags` (16) tags, keys 1–64 and values 0–64 bytes of UTF-8, with no control or format characters (`WireText`).
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
        // Every part at once, each within `timeout`: MetricKit's payloads beside the visits.
        let flushes = parts.map { part in Task { await part.flush(timeout: timeout) } }
        var delivered = true
        for flush in flushes { delivered = await flush.value && delivered }
        return delivered
    }

    /// Ends the SDK: closes the current visit, then stops the parts in reverse order, each
    /// before the next: the display link, the visits (the last one written to the disk queue,
    /// the uploader stopped), the watchdog, MetricKit's forwarding. What is not delivered
    /// stays queued for the next start.
    public func stop() async {
        guard isRunning, !isStopped else { return }
        if isSampled {
            changeVisit(to: nil)
        }
        isStopped = true
        // Reverse order, each part stopped before the next begins: the display link first,
        // the visits drained while the watchdog still runs, then the watchdog.
        for part in parts.reversed() { await part.stop() }
        release()
    }

    /// The tracker's, the watchdog's, the delivery's and MetricKit's counters (each part adds
    /// its own).
    public func statistics() async -> Statistics {
        var statistics = Statistics(isSampled: isSampled, tracker: tracker.pointee.statistics, shortVisitsKept: 0, hangs: 0,
                                    delivery: DeliveryStatistics())
        for part in parts { await part.addStatistics(to: &statistics) }
        return statistics
    }

    /// Hands the current screen and tags to the fatal-hang record (on screen and tag changes).
    private func publishScene() {
        guard let fatalHangs else { return }
        let scene = FatalHangRecorder.Scene(screen: tracker.pointee.screen, tags: tracker.pointee.tags)
        fatalHangs.scene.withLock { $0 = scene }
    }

    /// The hang watchdog of `configuration`, reporting ended hangs to `hangLog` and every
    /// hang to `fatalHangs`. It samples the main thread's stack when it is made on the main
    /// thread and the stacks' interval is set (otherwise hangs come without stacks).
    private static func watchdog(_ configuration: Configuration, clock: MonotonicClock, hangLog: HangLog,
                                 fatalHangs: FatalHangRecorder?) -> HangWatchdog {
        let settings = configuration.watchdog
        let stackSampling = settings.stacks.interval.flatMap { interval in
            Thread.isMainThread ? HangStackSampling.callingThread(interval: interval, samples: settings.stacks.samples, clock: clock) : nil
        }
        var progress: (@Sendable (Hang) -> Void)?
        if let fatalHangs { progress = { hang in fatalHangs.progressed(hang) } }
        return HangWatchdog(
            watching: .main,
            configuration: settings.hangWatchdog(threshold: configuration.tracker.analyzer.hangThreshold),
            clock: clock,
            stackSampling: stackSampling,
            progress: progress,
            handler: { event in
                hangLog.record(event)
                fatalHangs?.handle(event)
            })
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
