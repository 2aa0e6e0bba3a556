import FramescopeCore
import Foundation

/// Forwards MetricKit's payloads to the collector (`POST /v1/metrickit`), as the app
/// receives them, so that Apple's figures show beside the SDK's: each payload's
/// `jsonRepresentation()` is written to a file in the SDK's folder (`metrickit/`) before
/// anything is sent, then the ``Uploader`` of ``MetricKitQueue`` sends them one at a time,
/// oldest first, with the visits' rules (``UploadVerdict``, ``UploadStateMachine``) but one:
///
/// - a 2xx with the collector's MetricKit answer deletes the file (the collector counts a
///   payload sent again once, by its bytes);
/// - a 400, 413 or 422 with the collector's JSON error deletes it and counts it in
///   ``MetricKitStatistics/payloadsRefused`` only when the error says the payload itself
///   can never be read (``isPayloadsFault(_:)``: `invalid_json` naming `body`, its bytes are
///   not a payload); any other refusal (a part named, a limit of the collector, a code
///   this SDK does not know) keeps it, moves it behind the others and sends it again after
///   a backoff, never deleting it for that (``MetricKitStatistics/refusalsKept``): the
///   payload is what the device measured, and a newer collector may take it;
/// - a 401, 403, 404, 410, another 4xx, a 3xx or a 2xx that is not the collector's answer
///   keeps every payload, backs off, and sets ``MetricKitStatistics/configurationError``;
/// - a network error, 408, 429 or 5xx backs off (obeying `Retry-After` on 429 and 503);
///   failures that can be the payload's fault are counted in its file name and, after
///   ``DeliveryConfiguration/maximumAttempts``, it is deleted and counted in
///   ``MetricKitStatistics/payloadsAbandoned``.
///
/// The folder is bounded by ``DeliveryConfiguration/maximumQueueBytes``: past it the oldest
/// payloads are deleted (``MetricKitStatistics/payloadsDropped``). A payload larger than
/// ``maximumPayloadBytes`` is not queued. Platform-neutral: on Apple platforms the
/// subscriber (`MetricKitSubscriber`, MetricKit) hands it each payload; elsewhere the app or a
/// test does (``Framescope/forwardMetricKitPayload(_:)``).
///
/// This type is the front MetricKit's thread writes to (``enqueue(_:)``, synchronous); the
/// uploader behind it owns the waiting, waking and flushing.
final class MetricKitForwarder: Sendable {
    /// The subfolder of the SDK's folder that holds the payloads.
    static let folderName = "metrickit"
    /// The largest payload queued, in bytes of JSON (the collector takes 16 MiB decompressed
    /// and 4 MiB as sent; a day's payload is a few KB to a few hundred).
    static let maximumPayloadBytes = 4 * 1024 * 1024

    /// The collector's answer to a MetricKit upload.
    typealias Answer = MetricKitQueue.Answer
    /// A queued payload.
    typealias Entry = MetricKitQueue.Entry

    /// Why a payload was not queued.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    /// The folder holding the payloads.
    let folder: URL
    private let maximumQueueBytes: Int
    /// Counted by ``enqueue(_:)``, which runs on MetricKit's thread, not on the uploader.
    private let counters = Locked((queued: 0, dropped: 0, lastError: String?.none))
    private let uploader: Uploader<MetricKitQueue>

    /// A forwarder keeping its payloads in `directory/metrickit` (created).
    /// - Parameter clock: What the uploader's waits sleep on.
    /// - Parameter transport: How requests travel (a `URLSession` unless a test answers them).
    init(directory: URL, collector: URL, ingestKey: String, configuration: DeliveryConfiguration,
         log: (@Sendable (String) -> Void)? = nil, clock: any Clock<Duration> = ContinuousClock(),
         transport: UploadTransport? = nil) throws {
        folder = directory.appendingPathComponent(Self.folderName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        maximumQueueBytes = configuration.maximumQueueBytes
        let queue = MetricKitQueue(folder: folder, collector: collector, ingestKey: ingestKey, configuration: configuration,
                                   counters: counters)
        uploader = Uploader(queue: queue, configuration: configuration, log: log, clock: clock, transport: transport)
    }

    /// Writes one payload (`MXMetricPayload`'s or `MXDiagnosticPayload`'s
    /// `jsonRepresentation()`, or a list of them) to the folder, synchronously, so it is safe
    /// before MetricKit's callback returns, then wakes the uploader. The oldest payloads
    /// go when the folder is over its bound.
    /// - Throws: ``Failure`` for an empty or too large payload, or a file that cannot be written.
    func enqueue(_ payload: Data) throws(Failure) {
        guard !payload.isEmpty, payload.count <= Self.maximumPayloadBytes else {
            let failure = Failure(description: "a MetricKit payload must be 1 byte to \(Self.maximumPayloadBytes) bytes, not \(payload.count)")
            counters.withLock { $0.dropped += 1; $0.lastError = failure.description }
            throw failure
        }
        // Microseconds since 1970 first, so names sort oldest first: never the same or lower
        // than the last one this process gave (two payloads in one microsecond, a clock
        // stepped back); the random part keeps two processes' names apart.
        let now = UInt64(max(0, min(Date().timeIntervalSince1970 * 1_000_000, 9e15)))
        let stamp = Self.lastStamp.withLock { last in
            last = max(last + 1, now)
            return last
        }
        let name = Self.name(stamp: stamp, random: UInt32.random(in: 0...UInt32.max), attempts: 0)
        do {
            try payload.write(to: folder.appendingPathComponent(name), options: .atomic)
        } catch {
            let failure = Failure(description: "a MetricKit payload could not be written to \(folder.path): \(error)")
            counters.withLock { $0.dropped += 1; $0.lastError = failure.description }
            throw failure
        }
        counters.withLock { $0.queued += 1 }
        let dropped = MetricKitQueue.dropOldest(in: Self.entries(in: folder), toFit: maximumQueueBytes)
        if dropped > 0 { counters.withLock { $0.dropped += dropped } }
        let uploader = uploader
        Task { await uploader.newWork() }
    }

    /// The last stamp ``enqueue(_:)`` gave, in microseconds since 1970.
    private static let lastStamp = Locked<UInt64>(0)

    /// `<microseconds, 16 digits>-<random, 8 hex>.<attempts>.json`
    /// (``MetricKitQueue/name(stamp:random:attempts:)``).
    static func name(stamp: UInt64, random: UInt32, attempts: Int) -> String {
        MetricKitQueue.name(stamp: stamp, random: random, attempts: attempts)
    }

    /// The payloads in `folder`, oldest first (``MetricKitQueue/entries(in:)``).
    static func entries(in folder: URL) -> [Entry] {
        MetricKitQueue.entries(in: folder)
    }

    /// Whether a refusal of the collector says the payload itself can never be read, so that
    /// deleting it loses nothing (``RefusalRule/onlyUnreadableBytes``).
    static func isPayloadsFault(_ error: UploadVerdict<Answer>.ErrorAnswer) -> Bool {
        RefusalRule.onlyUnreadableBytes.blamesEntry(code: error.error.code, field: error.error.field, message: error.error.message)
    }

    // MARK: - The uploader's

    /// Uploads payloads until ``stop()`` (``Uploader/run()``).
    func run() async {
        await uploader.run()
    }

    /// Retries at once and waits until every payload is delivered (or refused or abandoned),
    /// `timeout` seconds have passed, or the collector says the configuration is wrong.
    /// - Returns: Whether the folder is empty.
    func flush(timeout: Double) async -> Bool {
        await uploader.flush(timeout: timeout)
    }

    /// Stops uploading; the payloads stay in the folder for the next launch.
    func stop() async {
        await uploader.stop()
    }

    /// What the forwarder has done so far, with what its folder holds now.
    var currentStatistics: MetricKitStatistics {
        get async { await uploader.currentStatistics }
    }
}
