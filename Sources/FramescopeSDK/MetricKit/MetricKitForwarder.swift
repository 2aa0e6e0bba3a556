import FramescopeCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Forwards MetricKit's payloads to the collector (`POST /v1/metrickit`), as the app
/// receives them, so that Apple's figures show beside the SDK's: each payload's
/// `jsonRepresentation()` is written to a file in the SDK's folder (`metrickit/`) before
/// anything is sent, then uploaded one at a time, oldest first, with the rules of the
/// visits' uploads (``UploadVerdict``):
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
actor MetricKitForwarder {
    /// The subfolder of the SDK's folder that holds the payloads.
    static let folderName = "metrickit"
    /// The largest payload queued, in bytes of JSON (the collector takes 16 MiB decompressed
    /// and 4 MiB as sent; a day's payload is a few KB to a few hundred).
    static let maximumPayloadBytes = 4 * 1024 * 1024

    /// The collector's answer to a MetricKit upload (`MetricKitResponse`).
    struct Answer: Decodable, Sendable {
        var accepted: Int
        var duplicates: Int
        var withoutFigures: Int
        var rejected: [Rejected]
        struct Rejected: Decodable, Sendable {
            var index: Int
        }
    }

    /// A queued payload: its file, its order and its failed attempts.
    struct Entry: Hashable, Sendable {
        var url: URL
        var name: String
        var attempts: Int
        var bytes: Int
    }

    /// Why a payload was not queued.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    nonisolated let folder: URL
    private let endpoint: URL
    private let ingestKey: String
    private let configuration: DeliveryConfiguration
    private let session: URLSession
    private let log: (@Sendable (String) -> Void)?
    private let clock: any Clock<Duration>
    private var statistics = MetricKitStatistics()
    /// Counted by ``enqueue(_:)``, which runs on MetricKit's thread, not on the actor.
    private nonisolated let counters = Locked((queued: 0, dropped: 0, lastError: String?.none))
    private var failures = 0
    private var isStopped = false
    private var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>?)?
    private var flushWaiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>, timer: Task<Void, Never>?)] = []
    private var nextID = 0
    private var backingOff = false

    /// A forwarder keeping its payloads in `directory/metrickit` (created).
    init(directory: URL, collector: URL, ingestKey: String, configuration: DeliveryConfiguration,
         log: (@Sendable (String) -> Void)? = nil, clock: any Clock<Duration> = ContinuousClock()) throws {
        folder = directory.appendingPathComponent(Self.folderName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        endpoint = collector.appendingPathComponent("v1").appendingPathComponent("metrickit")
        self.ingestKey = ingestKey
        self.configuration = configuration
        self.log = log
        self.clock = clock
        session = UploadRequest.session(configuration)
    }

    // MARK: Queueing (any thread)

    /// Writes one payload (`MXMetricPayload`'s or `MXDiagnosticPayload`'s
    /// `jsonRepresentation()`, or a list of them) to the folder, synchronously, so it is safe
    /// before MetricKit's callback returns, then wakes the uploader. The oldest payloads
    /// go when the folder is over its bound.
    /// - Throws: ``Failure`` for an empty or too large payload, or a file that cannot be written.
    nonisolated func enqueue(_ payload: Data) throws(Failure) {
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
        let dropped = Self.dropOldest(in: Self.entries(in: folder), toFit: configuration.maximumQueueBytes)
        if dropped > 0 { counters.withLock { $0.dropped += dropped } }
        Task { await self.wake(evenWhileBackingOff: false) }
    }

    /// The last stamp ``enqueue(_:)`` gave, in microseconds since 1970.
    private static let lastStamp = Locked<UInt64>(0)

    /// `<microseconds, 16 digits>-<random, 8 hex>.<attempts>.json`.
    static func name(stamp: UInt64, random: UInt32, attempts: Int) -> String {
        let digits = String(stamp)
        let hex = String(random, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + "-"
            + String(repeating: "0", count: max(0, 8 - hex.count)) + hex + ".\(attempts).json"
    }

    /// The payloads in `folder`, oldest first; files of other names are left alone.
    static func entries(in folder: URL) -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.compactMap { name -> Entry? in
            let parts = name.split(separator: ".")
            guard parts.count == 3, parts[2] == "json", parts[0].count == 25, let attempts = Int(parts[1]), attempts >= 0 else {
                return nil
            }
            let url = folder.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            return Entry(url: url, name: String(parts[0]), attempts: attempts, bytes: size)
        }.sorted { $0.name < $1.name }
    }

    /// Deletes the oldest of `entries` until they hold at most `limit` bytes, always keeping
    /// the newest; returns how many it deleted (a file already gone, sent or renamed
    /// meanwhile, is not counted).
    static func dropOldest(in entries: [Entry], toFit limit: Int) -> Int {
        var total = entries.reduce(0) { $0 + $1.bytes }
        var dropped = 0
        for entry in entries.dropLast() where total > limit {
            total -= entry.bytes
            if (try? FileManager.default.removeItem(at: entry.url)) != nil { dropped += 1 }
        }
        return dropped
    }

    /// The payload to send next, as for batches (``DeliveryQueue/nextBatch(in:movingBackAfter:)``):
    /// the oldest of those that have failed fewer than `attemptsBeforeMovingBack` times, else
    /// the one with the fewest failures, so one payload that keeps failing cannot hold up
    /// the rest.
    static func next(in entries: [Entry], movingBackAfter attemptsBeforeMovingBack: Int) -> Entry? {
        func place(_ entry: Entry) -> (Int, String) {
            (entry.attempts >= attemptsBeforeMovingBack ? entry.attempts : 0, entry.name)
        }
        return entries.min { place($0) < place($1) }
    }

    // MARK: Uploading

    /// What the forwarder has done so far, with what its folder holds now.
    var currentStatistics: MetricKitStatistics {
        var current = statistics
        let counted = counters.withLock { $0 }
        current.payloadsQueued = counted.queued
        current.payloadsDropped += counted.dropped
        if current.lastError == nil { current.lastError = counted.lastError }
        let entries = Self.entries(in: folder)
        current.pendingPayloads = entries.count
        current.queueBytes = entries.reduce(0) { $0 + $1.bytes }
        return current
    }

    /// Uploads payloads until ``stop()``: the oldest first, waiting when there are none and
    /// backing off after failures.
    func run() async {
        while !isStopped {
            guard let entry = Self.next(in: Self.entries(in: folder),
                                        movingBackAfter: configuration.attemptsBeforeMovingBack) else {
                resumeFlushes()
                await wait(seconds: nil, backingOff: false)
                continue
            }
            guard let payload = FileManager.default.contents(atPath: entry.url.path),
                  let body = try? Gzip.compress(Array(payload)) else {
                if (try? FileManager.default.removeItem(at: entry.url)) != nil {
                    statistics.payloadsDropped += 1
                    statistics.lastError = "MetricKit payload \(entry.url.lastPathComponent) could not be read"
                }
                continue
            }
            statistics.uploadAttempts += 1
            switch await upload(body) {
            case let .delivered(answer):
                failures = 0
                try? FileManager.default.removeItem(at: entry.url)
                statistics.payloadsDelivered += 1
                statistics.payloadsRejected += answer.rejected.isEmpty ? 0 : 1
                configurationWorks()
            case let .refused(status, error) where Self.isPayloadsFault(error):
                failures = 0
                try? FileManager.default.removeItem(at: entry.url)
                statistics.payloadsRefused += 1
                report("HTTP \(status): the collector refused MetricKit payload \(entry.name); it is deleted: \(error)")
                configurationWorks()
            case let .refused(status, error):
                failures += 1
                statistics.retries += 1
                statistics.refusalsKept += 1
                moveBack(entry)
                report("HTTP \(status): the collector could not take MetricKit payload \(entry.name) for a reason that is not the payload's "
                    + "(\(error)); it is kept and sent again later")
                configurationWorks()
                await wait(seconds: backoff(), backingOff: true)
            case let .misconfigured(reason):
                failures += 1
                statistics.retries += 1
                statistics.lastError = reason
                if statistics.configurationError != reason { log?("\(reason) (every MetricKit payload is kept and retried with backoff)") }
                statistics.configurationError = reason
                resumeFlushes()
                await wait(seconds: backoff(), backingOff: true)
            case let .retry(reason, retryAfter, countsAgainstPayload):
                failures += 1
                statistics.retries += 1
                statistics.lastError = reason
                if countsAgainstPayload { countFailedAttempt(entry, reason: reason) }
                await wait(seconds: retryAfter ?? backoff(), backingOff: true)
            }
        }
    }

    /// Retries at once and waits until every payload is delivered (or refused or abandoned),
    /// `timeout` seconds have passed, or the collector says the configuration is wrong.
    /// - Returns: Whether the folder is empty.
    func flush(timeout: Double) async -> Bool {
        if Self.entries(in: folder).isEmpty { return true }
        wake(evenWhileBackingOff: true)
        let id = nextID
        nextID += 1
        return await withCheckedContinuation { continuation in
            flushWaiters.append((id, continuation, after(seconds: timeout) { $0.finishFlush(id: id) }))
        }
    }

    /// Stops uploading; the payloads stay in the folder for the next launch.
    func stop() {
        isStopped = true
        if let waiter { endWait(id: waiter.id) }
        resumeFlushes()
    }

    private func upload(_ body: [UInt8]) async -> UploadVerdict<Answer> {
        let request = UploadRequest.post(to: endpoint, ingestKey: ingestKey, timeout: configuration.requestTimeout)
        return await UploadVerdict.send(request, body: body, on: session, what: "the collector's answer to a MetricKit payload") {
            try? JSONDecoder().decode(Answer.self, from: $0)
        }
    }

    /// Whether a refusal of the collector says the payload itself can never be read, so that
    /// deleting it loses nothing: 400 `invalid_json` naming `body` (or no field), its bytes
    /// are not JSON or not a MetricKit payload. Any other refusal is the collector's to lift
    /// (a part it names, a limit of its own, a code this SDK does not know), and the payload
    /// is kept.
    ///
    /// A collector before issue 43 refused a part nested deeper than 512 (a crash
    /// diagnostic's call-stack tree over about 252 frames, which it never read) as
    /// `invalid_json`, "nested deeper than 512": a limit of that collector, so kept too.
    static func isPayloadsFault(_ error: UploadVerdict<Answer>.ErrorAnswer) -> Bool {
        error.error.code == "invalid_json" && (error.error.field ?? "body") == "body"
            && !error.error.message.contains("nested deeper than")
    }

    /// Moves `entry` behind the payloads that have not failed, by raising its attempts in
    /// its file name to ``DeliveryConfiguration/attemptsBeforeMovingBack``, and no further:
    /// a refusal that is not the payload's fault never counts it toward deletion.
    private func moveBack(_ entry: Entry) {
        let attempts = max(entry.attempts, configuration.attemptsBeforeMovingBack)
        guard attempts != entry.attempts else { return }
        let renamed = folder.appendingPathComponent("\(entry.name).\(attempts).json")
        try? FileManager.default.moveItem(at: entry.url, to: renamed)
    }

    /// Counts a failure against `entry` in its file name; deletes it after
    /// ``DeliveryConfiguration/maximumAttempts``.
    private func countFailedAttempt(_ entry: Entry, reason: String) {
        let attempts = entry.attempts + 1
        if attempts >= configuration.maximumAttempts {
            try? FileManager.default.removeItem(at: entry.url)
            statistics.payloadsAbandoned += 1
            report("MetricKit payload \(entry.name) abandoned after \(attempts) failed attempts (the latest: \(reason))")
            return
        }
        let renamed = folder.appendingPathComponent("\(entry.name).\(attempts).json")
        try? FileManager.default.moveItem(at: entry.url, to: renamed)
    }

    private func configurationWorks() {
        guard statistics.configurationError != nil else { return }
        statistics.configurationError = nil
        log?("the collector accepts MetricKit payloads again")
    }

    private func report(_ message: String) {
        statistics.lastError = message
        log?(message)
    }

    /// `initial × 2^(failures − 1)`, capped, minus a random part of up to half, in seconds.
    private func backoff() -> Double {
        UploadRequest.backoff(afterFailures: failures, configuration)
    }

    // MARK: Waiting

    private func wait(seconds: Double?, backingOff: Bool) async {
        guard !isStopped else { return }
        let id = nextID
        nextID += 1
        self.backingOff = backingOff
        await withCheckedContinuation { continuation in
            waiter = (id, continuation, seconds.map { after(seconds: $0) { $0.endWait(id: id) } })
        }
    }

    private func endWait(id: Int) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        waiter.timer?.cancel()
        waiter.continuation.resume()
    }

    private func wake(evenWhileBackingOff: Bool) {
        guard let waiter, evenWhileBackingOff || !backingOff else { return }
        if evenWhileBackingOff { failures = 0 }
        endWait(id: waiter.id)
    }

    private func resumeFlushes() {
        let empty = Self.entries(in: folder).isEmpty
        for waiter in flushWaiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: empty)
        }
        flushWaiters = []
    }

    private func finishFlush(id: Int) {
        guard let index = flushWaiters.firstIndex(where: { $0.id == id }) else { return }
        flushWaiters.remove(at: index).continuation.resume(returning: Self.entries(in: folder).isEmpty)
    }

    /// Runs `body` on this actor `seconds` from now on ``clock`` unless cancelled first.
    private func after(seconds: Double, _ body: @escaping @Sendable (isolated MetricKitForwarder) -> Void) -> Task<Void, Never> {
        let clock = clock
        let wait = UploadRequest.wait(seconds)
        return Task { [weak self] in
            do { try await clock.sleep(for: wait) } catch { return }
            await self?.perform(body)
        }
    }

    private func perform(_ body: @Sendable (isolated MetricKitForwarder) -> Void) {
        body(self)
    }
}

/// What the MetricKit forwarding has done since the SDK started.
public struct MetricKitStatistics: Sendable, Hashable {
    /// Payloads written to the SDK's folder.
    public var payloadsQueued = 0
    /// Payloads the collector acknowledged (stored, counted before, or without figures).
    public var payloadsDelivered = 0
    /// Of those, payloads the collector refused alone in its answer (`rejected`: who sent it
    /// is not acceptable, or its period is not plausible).
    public var payloadsRejected = 0
    /// Payloads the collector refused as a whole because their bytes are not a MetricKit
    /// payload (400 `invalid_json` naming `body`); deleted.
    public var payloadsRefused = 0
    /// Refusals of the collector (400, 413, 422) that are not the payload's fault: a part it
    /// names, a limit of its own, a code this SDK does not know. The payload was kept, moved
    /// behind the others, and is sent again after a backoff; it is never deleted for this
    /// (only the folder's bound, oldest first, removes it).
    public var refusalsKept = 0
    /// Payloads not queued (empty, too large, not writable) or deleted unsent to keep the
    /// folder within its bound, or unreadable.
    public var payloadsDropped = 0
    /// Payloads deleted after ``DeliveryConfiguration/maximumAttempts`` failed attempts.
    public var payloadsAbandoned = 0
    /// Upload attempts, successful or not.
    public var uploadAttempts = 0
    /// Attempts that failed and will be retried.
    public var retries = 0
    /// What the collector says is wrong with the configuration (as for visits,
    /// ``DeliveryStatistics/configurationError``); nil once it accepts or judges a payload.
    public var configurationError: String?
    /// The latest failure, for diagnostics.
    public var lastError: String?
    /// Payloads waiting in the folder.
    public var pendingPayloads = 0
    /// Bytes they hold.
    public var queueBytes = 0
}
