import FramescopeCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The visits' queue that ``DeliveryQueue`` uploads: the ``DiskQueue`` (a journal of
/// finished visits and one gzip file per sealed batch), the envelope every batch carries,
/// and the delivery's counters. It decides nothing about retries; its rules are values:
/// ``DeliveryConfiguration``'s attempts and delays, and ``RefusalRule/alwaysTheEntrys`` (the
/// collector validates a batch field by field, so a batch it refuses can never be accepted).
struct VisitBatchQueue: UploadQueue {
    let configuration: DeliveryConfiguration
    let endpoint: URL
    let ingestKey: String
    /// The batch's app, device and sample rate, as JSON, spliced into every batch sealed.
    var envelope: (app: [UInt8], device: [UInt8], sampleRate: Double?)
    let envelopeEncoder: JSONEncoder
    let eventEncoder: JSONEncoder
    let disk: DiskQueue
    /// The file that keeps the envelope visits are being measured under, for the next launch.
    let envelopeURL: URL
    var statistics = DeliveryStatistics()
    /// Bumped at each seal, so an age timer set for visits already sealed does nothing.
    var sealGeneration = 0
    /// The timer that seals the journal's visits once the oldest is
    /// ``DeliveryConfiguration/maximumBatchAge`` old; cancelled when they are sealed sooner.
    var ageSeal: Task<Void, Never>?

    let rules: UploadStateMachine.Rules
    let wording = UploadWording(everyEntry: "every batch", acceptsAgain: "the collector accepts uploads again")

    /// Opens the queue in `directory`, recovering what an earlier process left there: a
    /// fatal hang's record goes into the journal, and visits measured under another
    /// envelope are sealed under it.
    init(configuration: DeliveryConfiguration, directory: URL, collector: URL, ingestKey: String,
         app: AppInfo, device: DeviceInfo, sampleRate: Double?) throws {
        self.configuration = configuration
        rules = UploadStateMachine.Rules(configuration, refusals: .alwaysTheEntrys)
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

    // MARK: - What the uploader asks

    var currentStatistics: DeliveryStatistics {
        var current = statistics
        current.pendingBatches = disk.batches.count
        current.pendingEvents = disk.pending.count
        current.queueBytes = disk.totalBytes
        return current
    }

    func entries() -> [DiskQueue.Batch] {
        disk.batches
    }

    var isEmpty: Bool {
        disk.batches.isEmpty
    }

    mutating func body(of batch: DiskQueue.Batch) -> [UInt8]? {
        guard let body = disk.body(of: batch) else {
            disk.remove(batch)
            statistics.batchesDropped += 1
            statistics.eventsDropped += batch.events
            statistics.lastError = "batch file \(batch.url.lastPathComponent) could not be read"
            return nil
        }
        return body
    }

    func request(for batch: DiskQueue.Batch) -> (request: URLRequest, what: String, answer: @Sendable (Data) -> DeliveryQueue.Answer?) {
        (UploadRequest.post(to: endpoint, ingestKey: ingestKey, timeout: configuration.requestTimeout),
         "the collector's answer to batch \(batch.batchId)", DeliveryQueue.answerReader(batchId: batch.batchId))
    }

    mutating func delivered(_ batch: DiskQueue.Batch, answer: DeliveryQueue.Answer) {
        disk.remove(batch)
        statistics.batchesDelivered += 1
        statistics.eventsAccepted += answer.accepted
        statistics.eventsRejected += answer.rejected?.count ?? 0
        if answer.duplicate { statistics.batchesDuplicate += 1 }
    }

    mutating func refused(_ batch: DiskQueue.Batch, status: Int, error: String) -> String {
        disk.remove(batch)
        statistics.batchesRejected += 1
        statistics.eventsInRejectedBatches += batch.events
        return "HTTP \(status): the collector refused batch \(batch.batchId); its \(batch.events) visits are deleted: \(error)"
    }

    /// Never called under ``RefusalRule/alwaysTheEntrys``; kept total: the batch moves back.
    mutating func keep(_ batch: DiskQueue.Batch, attempts: Int, status: Int, error: String) -> String {
        setAttempts(batch, to: attempts)
        return "HTTP \(status): the collector could not take batch \(batch.batchId) (\(error)); it is kept and sent again later"
    }

    mutating func record(attempts: Int, against batch: DiskQueue.Batch, movedBack: Bool, reason: String) -> String? {
        setAttempts(batch, to: attempts)
        guard movedBack else { return nil }
        statistics.batchesMovedBack += 1
        return "batch \(batch.batchId) moved to the back of the queue after \(attempts) failed attempts (the latest: \(reason))"
    }

    mutating func abandon(_ batch: DiskQueue.Batch, attempts: Int, reason: String) -> String {
        if let counted = disk.batches.first(where: { $0.batchId == batch.batchId }) { disk.remove(counted) }
        statistics.batchesAbandoned += 1
        statistics.eventsAbandoned += batch.events
        return "batch \(batch.batchId) abandoned after \(attempts) failed attempts (the latest: \(reason)); "
            + "its \(batch.events) visits are deleted"
    }

    /// Counts failures against `batch` in its file name until it holds `attempts` (in memory
    /// only when the file cannot be renamed: the count then does not survive a restart).
    private mutating func setAttempts(_ batch: DiskQueue.Batch, to attempts: Int) {
        for _ in 0..<max(0, attempts - batch.attempts) {
            guard let counted = disk.batches.first(where: { $0.batchId == batch.batchId }), counted.attempts < attempts else { return }
            do {
                try disk.recordFailedAttempt(counted)
            } catch {
                // Counted in memory only: the count will not survive a restart.
                statistics.lastError = "\(error)"
            }
        }
    }

    static func running(_ uploader: isolated DeliveryQueue) {
        if !uploader.queue.disk.pending.isEmpty {
            // Visits recovered from an earlier process wait at most one batch age.
            uploader.queue.sealGeneration += 1
            uploader.scheduleAgeSeal(generation: uploader.queue.sealGeneration)
        }
    }

    static func flushing(_ uploader: isolated DeliveryQueue) {
        do { try uploader.seal() } catch { uploader.queue.statistics.lastError = "\(error)" }
    }

    static func fired(_ uploader: isolated DeliveryQueue, _ generation: Int) {
        uploader.sealIfStill(generation: generation)
    }

    static func stopping(_ uploader: isolated DeliveryQueue) {
        uploader.queue.ageSeal?.cancel()
        uploader.queue.ageSeal = nil
        uploader.queue.disk.close()
    }
}
