import FramescopeCore
import Foundation

/// Batches finished visits, keeps them in a ``DiskQueue`` and uploads them to the
/// collector's `POST /v1/events`, one batch at a time: the ``Uploader`` of the visits'
/// queue (``VisitBatchQueue``).
///
/// - **Batching**: a batch is sealed when it reaches ``DeliveryConfiguration/maximumBatchEvents``
///   visits or ``DeliveryConfiguration/maximumBatchBytes`` bytes, when its oldest visit is
///   ``DeliveryConfiguration/maximumBatchAge`` old (a timer on the uploader's clock), and on
///   ``Uploader/flush(timeout:)``.
/// - **Uploads** are gzip JSON with the ingest key, `Content-Encoding: gzip`, and the
///   reports in their compact binary form. What each answer does (``verdict(status:retryAfter:body:batchId:now:maximumRetryAfter:)``,
///   then ``UploadStateMachine``):
///   - a 2xx with the collector's answer naming the batch deletes it; a 2xx with any other
///     body is not a delivery;
///   - a 400, 413 or 422 with the collector's JSON error says the batch itself is bad: it is
///     deleted and counted in ``DeliveryStatistics/batchesRejected``
///     (``RefusalRule/alwaysTheEntrys``);
///   - a 401, 403, 404, 410, any other 4xx, a 3xx, or that unreadable 2xx says the
///     configuration or the path is wrong: every batch is kept (up to
///     ``DeliveryConfiguration/maximumQueueBytes``, the oldest dropped first), uploads back
///     off, ``DeliveryStatistics/configurationError`` and the log say what to check, and a
///     flush returns false at once;
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
///   a flush does.
typealias DeliveryQueue = Uploader<VisitBatchQueue>

extension DeliveryQueue {
    /// Opens the queue in `directory` (recovering what an earlier process left there).
    /// - Parameter sampleRate: The share of installations that measure (0–1), if sampling.
    /// - Parameter log: Receives one line for each delivery problem a person should see: a
    ///   wrong configuration (when it appears or changes, and when it is over), a batch
    ///   refused, moved back or abandoned.
    /// - Parameter clock: What every wait sleeps on (the system's continuous clock unless a
    ///   test steps its own); the visit pipeline's settle wait sleeps on it too.
    /// - Parameter transport: How requests travel (a `URLSession` unless a test answers them).
    init(configuration: DeliveryConfiguration, directory: URL, collector: URL, ingestKey: String,
         app: AppInfo, device: DeviceInfo, sampleRate: Double? = nil, log: (@Sendable (String) -> Void)? = nil,
         clock: any Clock<Duration> = ContinuousClock(), transport: UploadTransport? = nil) throws {
        let queue = try VisitBatchQueue(configuration: configuration, directory: directory, collector: collector,
                                        ingestKey: ingestKey, app: app, device: device, sampleRate: sampleRate)
        self.init(queue: queue, configuration: configuration, log: log, clock: clock, transport: transport)
    }

    /// Sends `device` in batches sealed from now on (the display's refresh rate, learnt late).
    func update(device: DeviceInfo) {
        guard let json = try? queue.envelopeEncoder.encode(device) else { return }
        queue.envelope.device = Array(json)
        VisitBatchQueue.save(queue.envelope, to: queue.envelopeURL)
    }

    /// Writes a finished visit to the journal and seals the batch if it is full.
    /// - Throws: ``DiskQueue/Failure`` when the queue's files cannot be written.
    func append(_ event: ScreenVisitEvent) throws {
        let json = Array(try queue.eventEncoder.encode(event))
        _ = try queue.disk.append(json)
        queue.statistics.eventsQueued += 1
        if queue.disk.pending.count == 1 {
            queue.sealGeneration += 1
            scheduleAgeSeal(generation: queue.sealGeneration)
        }
        let configuration = queue.configuration
        if queue.disk.pending.count >= configuration.maximumBatchEvents || queue.disk.pendingJSONBytes >= configuration.maximumBatchBytes {
            try seal()
        }
    }

    /// Seals the journal's visits as a batch, if there are any, drops the oldest batches past
    /// ``DeliveryConfiguration/maximumQueueBytes`` (never the one being sent), and wakes the
    /// upload loop.
    func seal() throws {
        let header = queue.envelope
        let batchId = UUID().uuidString.lowercased()
        guard try queue.disk.seal(batchId: batchId, body: { events in
            VisitBatchQueue.body(batchId: batchId, app: header.app, device: header.device, sampleRate: header.sampleRate, events: events)
        }) != nil else { return }
        queue.statistics.batchesSealed += 1
        queue.sealGeneration += 1
        queue.ageSeal?.cancel()
        queue.ageSeal = nil
        for dropped in queue.disk.dropOldest(toFit: queue.configuration.maximumQueueBytes, keeping: inFlight?.url) {
            queue.statistics.batchesDropped += 1
            queue.statistics.eventsDropped += dropped.events
        }
        newWork()
    }

    /// Counts a visit that could not be written to the disk queue.
    func recordFailure(_ message: String) {
        queue.statistics.eventsLost += 1
        queue.statistics.lastError = message
    }

    /// The upload body: the envelope around the events' JSON (``VisitBatchQueue/body(batchId:app:device:sampleRate:events:)``).
    static func body(batchId: String, app: [UInt8], device: [UInt8], sampleRate: Double? = nil, events: [[UInt8]]) -> [UInt8] {
        VisitBatchQueue.body(batchId: batchId, app: app, device: device, sampleRate: sampleRate, events: events)
    }

    /// Seals the journal's visits ``DeliveryConfiguration/maximumBatchAge`` seconds from now
    /// on the clock, unless they are sealed sooner.
    func scheduleAgeSeal(generation: Int) {
        queue.ageSeal?.cancel()
        queue.ageSeal = after(seconds: queue.configuration.maximumBatchAge, .queue(generation))
    }

    /// The age timer of `generation` fired: seals, unless its visits were sealed since.
    func sealIfStill(generation: Int) {
        guard generation == queue.sealGeneration, !machine.isStopped else { return }
        do { try seal() } catch { queue.statistics.lastError = "\(error)" }
    }
}
