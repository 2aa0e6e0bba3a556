import FramescopeCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Batches finished visits, keeps them in a ``DiskQueue`` and uploads them to the
/// collector's `POST /v1/events`, one batch at a time.
///
/// - **Batching**: a batch is sealed when it reaches ``DeliveryConfiguration/maximumBatchEvents``
///   visits or ``DeliveryConfiguration/maximumBatchBytes`` bytes, when its oldest visit is
///   ``DeliveryConfiguration/maximumBatchAge`` old, and on ``flush(timeout:)``.
/// - **Uploads** are gzip JSON with the ingest key, `Content-Encoding: gzip`, and the
///   reports in their compact binary form. What each answer does (``verdict(status:retryAfter:body:batchId:now:maximumRetryAfter:)``):
///   - a 2xx with the collector's answer naming the batch deletes it; a 2xx with any other
///     body is not a delivery;
///   - a 400, 413 or 422 with the collector's JSON error says the batch itself is bad: it is
///     deleted and counted in ``DeliveryStatistics/batchesRejected``;
///   - a 401, 403, 404, 410, any other 4xx, a 3xx, or that unreadable 2xx says the
///     configuration or the path is wrong: every batch is kept (up to
///     ``DeliveryConfiguration/maximumQueueBytes``, the oldest dropped first), uploads back
///     off, ``DeliveryStatistics/configurationError`` and the log say what to check, and a
///     ``flush(timeout:)`` returns false at once;
///   - a network error, 408, 429 or 5xx is retried with exponential backoff
///     (``DeliveryConfiguration/initialRetryDelay`` doubling up to
///     ``DeliveryConfiguration/maximumRetryDelay``, less a random part of up to half, so
///     devices that failed together do not retry together); on 429 and 503 a `Retry-After`
///     in seconds or as an HTTP date is obeyed instead (up to an hour).
/// - **Order**: oldest first. Failures that can be the batch's own fault are counted in its
///   file name; after ``DeliveryConfiguration/attemptsBeforeMovingBack`` of them it moves
///   behind the others, after ``DeliveryConfiguration/maximumAttempts`` it is deleted and
///   counted in ``DeliveryStatistics/batchesAbandoned``, so a batch that crashes or stalls
///   the collector cannot block the queue. The batch id is part of the file, so every
///   retry, in this process or after a restart, sends the same id and the collector counts
///   the batch once.
/// - New batches do not cut a backoff short (that would hammer a collector that is down);
///   ``flush(timeout:)`` does.
/// - **Time**: every wait (the batch age, a backoff, a `Retry-After`, a flush's timeout) is
///   a sleep on the injected `clock`, cancelled as soon as it is no longer needed, so tests
///   step a manual clock instead of sleeping, and a waiting queue holds no sleeping tasks it
///   does not need.
actor DeliveryQueue {
    private let configuration: DeliveryConfiguration
    private let endpoint: URL
    private let ingestKey: String
    /// The batch's app, device and sample rate, as JSON, spliced into every batch sealed.
    private var envelope: (app: [UInt8], device: [UInt8], sampleRate: Double?)
    private let envelopeEncoder: JSONEncoder
    private let session: URLSession
    private let disk: DiskQueue
    private let eventEncoder: JSONEncoder
    private let log: (@Sendable (String) -> Void)?
    /// What every wait sleeps on; the visit pipeline's settle wait sleeps on it too.
    nonisolated let clock: any Clock<Duration>
    private var statistics = DeliveryStatistics()

    private var failures = 0
    private var inFlight: URL?
    private var isStopped = false
    private var sealGeneration = 0
    /// The timer that seals the journal's visits once the oldest is
    /// ``DeliveryConfiguration/maximumBatchAge`` old; cancelled when they are sealed sooner.
    private var ageSeal: Task<Void, Never>?

    /// The upload loop's wait, resumed early by new work (unless backing off) or by a flush.
    private var waiter: (id: Int, backingOff: Bool, continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>?)?
    private var nextWaiterID = 0
    /// Flushes waiting for the queue to empty.
    private var flushWaiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>, timer: Task<Void, Never>?)] = []

    /// Opens the queue in `directory` (recovering what an earlier process left there).
    /// - Parameter log: Receives one line for each delivery problem a person should see: a
    ///   wrong configuration (when it appears or changes, and when it is over), a batch
    ///   refused, moved back or abandoned.
    /// - Parameter clock: What every wait sleeps on (the system's continuous clock unless a
    ///   test steps its own).
    init(configuration: DeliveryConfiguration, directory: URL, collector: URL, ingestKey: String,
         app: AppInfo, device: DeviceInfo, sampleRate: Double? = nil, log: (@Sendable (String) -> Void)? = nil,
         clock: any Clock<Duration> = ContinuousClock()) throws {
        self.configuration = configuration
        self.log = log
        self.clock = clock
        endpoint = collector.appendingPathComponent("v1").appendingPathComponent("events")
        self.ingestKey = ingestKey
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let current = (app: Array(try encoder.encode(app)), device: Array(try encoder.encode(device)), sampleRate: sampleRate)
        envelope = current
        envelopeEncoder = encoder
        let events = JSONEncoder()
        events.outputFormatting = [.sortedKeys]
        events.userInfo[ScreenVisitEvent.compactReportsKey] = true
        eventEncoder = events
        session = UploadRequest.session(configuration)
        disk = DiskQueue(directory: directory)
        try disk.open()
        // A hang the last process died in: into the journal as an event, then the record goes.
        if let fatalHang = FatalHangRecorder.recover(in: directory) {
            _ = try disk.append(fatalHang)
            statistics.fatalHangsRecovered += 1
        }
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(FatalHangRecorder.fileName))
        // Visits an earlier process measured go out under the envelope they were measured
        // under (its app version, device, sample rate), not this launch's.
        envelopeURL = directory.appendingPathComponent(Self.envelopeFileName)
        if !disk.pending.isEmpty, let saved = Self.savedEnvelope(at: envelopeURL, encoder: encoder),
           saved.app != current.app || saved.device != current.device || saved.sampleRate != current.sampleRate {
            let batchId = UUID().uuidString.lowercased()
            if try disk.seal(batchId: batchId, body: { events in
                Self.body(batchId: batchId, app: saved.app, device: saved.device, sampleRate: saved.sampleRate, events: events)
            }) != nil {
                statistics.batchesSealed += 1
            }
        }
        Self.save(current, to: envelopeURL)
    }

    /// The file that keeps the envelope visits are being measured under, for the next launch.
    static let envelopeFileName = "envelope.json"
    private let envelopeURL: URL

    /// The envelope as a file: `{"app": …, "device": …, "sampleRate": …}`.
    private struct SavedEnvelope: Codable {
        var app: AppInfo
        var device: DeviceInfo
        var sampleRate: Double?
    }

    /// The envelope an earlier process saved, re-encoded as this one encodes, or nil.
    private static func savedEnvelope(at url: URL, encoder: JSONEncoder) -> (app: [UInt8], device: [UInt8], sampleRate: Double?)? {
        guard let data = FileManager.default.contents(atPath: url.path),
              let saved = try? JSONDecoder().decode(SavedEnvelope.self, from: data),
              let app = try? encoder.encode(saved.app), let device = try? encoder.encode(saved.device) else { return nil }
        return (Array(app), Array(device), saved.sampleRate)
    }

    /// Writes `envelope` to `url`, its JSON parts spliced as a batch's are (best effort:
    /// without it, recovered visits go out under the next launch's envelope, as before it
    /// existed).
    private static func save(_ envelope: (app: [UInt8], device: [UInt8], sampleRate: Double?), to url: URL) {
        var bytes = Array(#"{"app":"#.utf8) + envelope.app + Array(#","device":"#.utf8) + envelope.device
        if let rate = envelope.sampleRate, rate > 0, rate <= 1 { bytes += Array(#","sampleRate":\#(rate)"#.utf8) }
        bytes.append(UInt8(ascii: "}"))
        try? Data(bytes).write(to: url, options: .atomic)
    }

    /// Sends `device` in batches sealed from now on (the display's refresh rate, learnt late).
    func update(device: DeviceInfo) {
        guard let json = try? envelopeEncoder.encode(device) else { return }
        envelope.device = Array(json)
        Self.save(envelope, to: envelopeURL)
    }

    /// What the delivery has done so far, with what the disk queue holds now.
    var currentStatistics: DeliveryStatistics {
        var current = statistics
        current.pendingBatches = disk.batches.count
        current.pendingEvents = disk.pending.count
        current.queueBytes = disk.totalBytes
        return current
    }

    /// Writes a finished visit to the journal and seals the batch if it is full.
    /// - Throws: ``DiskQueue/Failure`` when the queue's files cannot be written.
    func append(_ event: ScreenVisitEvent) throws {
        let json = Array(try eventEncoder.encode(event))
        _ = try disk.append(json)
        statistics.eventsQueued += 1
        if disk.pending.count == 1 {
            sealGeneration += 1
            scheduleAgeSeal(generation: sealGeneration)
        }
        if disk.pending.count >= configuration.maximumBatchEvents || disk.pendingJSONBytes >= configuration.maximumBatchBytes {
            try seal()
        }
    }

    /// Seals the journal's visits as a batch, if there are any, and wakes the uploader.
    func seal() throws {
        let header = envelope
        let batchId = UUID().uuidString.lowercased()
        guard try disk.seal(batchId: batchId, body: { events in
            Self.body(batchId: batchId, app: header.app, device: header.device, sampleRate: header.sampleRate, events: events)
        }) != nil else { return }
        statistics.batchesSealed += 1
        sealGeneration += 1
        ageSeal?.cancel()
        ageSeal = nil
        for dropped in disk.dropOldest(toFit: configuration.maximumQueueBytes, keeping: inFlight) {
            statistics.batchesDropped += 1
            statistics.eventsDropped += dropped.events
        }
        wake(evenWhileBackingOff: false)
    }

    /// Seals what is pending, retries at once, and waits until every batch is delivered
    /// (or refused or abandoned), `timeout` seconds have passed, or the collector answers
    /// that the configuration is wrong (waiting would not help then).
    /// - Returns: Whether the queue is empty.
    func flush(timeout: Double) async -> Bool {
        do { try seal() } catch { statistics.lastError = "\(error)" }
        if disk.batches.isEmpty { return true }
        wake(evenWhileBackingOff: true)
        let id = nextWaiterID
        nextWaiterID += 1
        return await withCheckedContinuation { continuation in
            flushWaiters.append((id, continuation, after(seconds: timeout) { $0.finishFlush(id: id) }))
        }
    }

    /// Answers every waiting flush with whether the queue is empty.
    private func resumeFlushes() {
        for waiter in flushWaiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: disk.batches.isEmpty)
        }
        flushWaiters = []
    }

    /// Runs `body` on this actor `seconds` from now on ``clock``, unless the returned task is
    /// cancelled first or the actor is gone by then.
    private func after(seconds: Double, _ body: @escaping @Sendable (isolated DeliveryQueue) -> Void) -> Task<Void, Never> {
        let clock = clock
        let wait = UploadRequest.wait(seconds)
        return Task { [weak self] in
            do { try await clock.sleep(for: wait) } catch { return }
            await self?.perform(body)
        }
    }

    private func perform(_ body: @Sendable (isolated DeliveryQueue) -> Void) {
        body(self)
    }

    private func finishFlush(id: Int) {
        guard let index = flushWaiters.firstIndex(where: { $0.id == id }) else { return }
        flushWaiters.remove(at: index).continuation.resume(returning: disk.batches.isEmpty)
    }

    /// Counts a visit that could not be written to the disk queue.
    func recordFailure(_ message: String) {
        statistics.eventsLost += 1
        statistics.lastError = message
    }

    /// Stops the upload loop after its current attempt; what is queued stays on disk.
    func stop() {
        isStopped = true
        ageSeal?.cancel()
        ageSeal = nil
        wake(evenWhileBackingOff: true)
        resumeFlushes()
        disk.close()
    }

    /// Uploads batches until ``stop()``: the oldest first, waiting when there are none and
    /// backing off after failures.
    func run() async {
        if !disk.pending.isEmpty {
            // Visits recovered from an earlier process wait at most one batch age.
            sealGeneration += 1
            scheduleAgeSeal(generation: sealGeneration)
        }
        while !isStopped {
            guard let batch = Self.nextBatch(in: disk.batches, movingBackAfter: configuration.attemptsBeforeMovingBack) else {
                await wait(seconds: nil, backingOff: false)
                continue
            }
            guard let body = disk.body(of: batch) else {
                disk.remove(batch)
                statistics.batchesDropped += 1
                statistics.eventsDropped += batch.events
                statistics.lastError = "batch file \(batch.url.lastPathComponent) could not be read"
                continue
            }
            inFlight = batch.url
            let verdict = await upload(body, batchId: batch.batchId)
            inFlight = nil
            statistics.uploadAttempts += 1
            switch verdict {
            case let .delivered(answer):
                failures = 0
                disk.remove(batch)
                statistics.batchesDelivered += 1
                statistics.eventsAccepted += answer.accepted
                statistics.eventsRejected += answer.rejected?.count ?? 0
                if answer.duplicate { statistics.batchesDuplicate += 1 }
                configurationWorks()
            case let .refused(status, error):
                failures = 0
                disk.remove(batch)
                statistics.batchesRejected += 1
                statistics.eventsInRejectedBatches += batch.events
                report("HTTP \(status): the collector refused batch \(batch.batchId); its \(batch.events) visits are deleted: \(error)")
                configurationWorks()
            case let .misconfigured(reason):
                failures += 1
                statistics.retries += 1
                statistics.lastError = reason
                if statistics.configurationError != reason {
                    log?("\(reason) (every batch is kept and retried with backoff)")
                }
                statistics.configurationError = reason
                // The flushes learn now that waiting would not help.
                resumeFlushes()
                await wait(seconds: backoff(), backingOff: true)
            case let .retry(reason, retryAfter, countsAgainstBatch):
                failures += 1
                statistics.retries += 1
                statistics.lastError = reason
                if countsAgainstBatch { countFailedAttempt(batch, reason: reason) }
                await wait(seconds: retryAfter ?? backoff(), backingOff: true)
            }
            if disk.batches.isEmpty { resumeFlushes() }
        }
    }

    /// Counts a failure against `batch`: it moves to the back after
    /// ``DeliveryConfiguration/attemptsBeforeMovingBack`` of them and is deleted after
    /// ``DeliveryConfiguration/maximumAttempts``.
    private func countFailedAttempt(_ batch: DiskQueue.Batch, reason: String) {
        let attempts: Int
        do {
            attempts = try disk.recordFailedAttempt(batch).attempts
        } catch {
            // Counted in memory only: the count will not survive a restart.
            statistics.lastError = "\(error)"
            attempts = disk.batches.first { $0.batchId == batch.batchId }?.attempts ?? batch.attempts + 1
        }
        if attempts >= configuration.maximumAttempts {
            if let counted = disk.batches.first(where: { $0.batchId == batch.batchId }) { disk.remove(counted) }
            statistics.batchesAbandoned += 1
            statistics.eventsAbandoned += batch.events
            report("batch \(batch.batchId) abandoned after \(attempts) failed attempts (the latest: \(reason)); "
                   + "its \(batch.events) visits are deleted")
        } else if attempts == configuration.attemptsBeforeMovingBack {
            statistics.batchesMovedBack += 1
            log?("batch \(batch.batchId) moved to the back of the queue after \(attempts) failed attempts (the latest: \(reason))")
        }
    }

    /// The collector took or judged a batch: the key and the path work.
    private func configurationWorks() {
        guard statistics.configurationError != nil else { return }
        statistics.configurationError = nil
        log?("the collector accepts uploads again")
    }

    /// Records `message` as the latest error and logs it.
    private func report(_ message: String) {
        statistics.lastError = message
        log?(message)
    }

    /// The wait after the `failures`-th failure in a row: `initial × 2^(failures − 1)`,
    /// capped, minus a random part of up to half, in seconds.
    private func backoff() -> Double {
        UploadRequest.backoff(afterFailures: failures, configuration)
    }

    // MARK: - HTTP

    private func upload(_ body: [UInt8], batchId: String) async -> Verdict {
        let request = UploadRequest.post(to: endpoint, ingestKey: ingestKey, timeout: configuration.requestTimeout)
        return await Verdict.send(request, body: body, on: session, what: "the collector's answer to batch \(batchId)",
                                  answer: Self.answerReader(batchId: batchId))
    }

    /// The upload body: the envelope around the events' JSON, spliced without re-encoding.
    /// - Parameter sampleRate: The share of installations that measure (0–1), if sampling.
    static func body(batchId: String, app: [UInt8], device: [UInt8], sampleRate: Double? = nil, events: [[UInt8]]) -> [UInt8] {
        var body = Array(#"{"batchId":""#.utf8)
        body.append(contentsOf: batchId.utf8)
        body.append(contentsOf: #"","app":"#.utf8)
        body.append(contentsOf: app)
        body.append(contentsOf: #","device":"#.utf8)
        body.append(contentsOf: device)
        if let sampleRate, sampleRate > 0, sampleRate <= 1 {
            // Swift's shortest round-trip form ("0.1", "1e-05") is valid JSON.
            body.append(contentsOf: #","sampleRate":"#.utf8)
            body.append(contentsOf: "\(sampleRate)".utf8)
        }
        body.append(contentsOf: #","events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: event)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    // MARK: - Waiting

    private func wait(seconds: Double?, backingOff: Bool) async {
        guard !isStopped else { return }
        let id = nextWaiterID
        nextWaiterID += 1
        await withCheckedContinuation { continuation in
            waiter = (id, backingOff, continuation, seconds.map { after(seconds: $0) { $0.endWait(id: id) } })
        }
    }

    private func endWait(id: Int) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        waiter.timer?.cancel()
        waiter.continuation.resume()
    }

    private func wake(evenWhileBackingOff: Bool) {
        guard let waiter, evenWhileBackingOff || !waiter.backingOff else { return }
        if evenWhileBackingOff { failures = 0 }
        endWait(id: waiter.id)
    }

    private func scheduleAgeSeal(generation: Int) {
        ageSeal?.cancel()
        ageSeal = after(seconds: configuration.maximumBatchAge) { $0.sealIfStill(generation: generation) }
    }

    private func sealIfStill(generation: Int) {
        guard generation == sealGeneration, !isStopped else { return }
        do { try seal() } catch { statistics.lastError = "\(error)" }
    }
}
