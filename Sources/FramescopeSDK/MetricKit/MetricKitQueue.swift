import FramescopeCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// MetricKit's payloads waiting in the SDK's folder (`metrickit/`), one file each, as the
/// ``Uploader`` of ``MetricKitForwarder`` sends them to `POST /v1/metrickit`, oldest first.
///
/// A file is `<microseconds since 1970, 16 digits>-<random, 8 hex>.<attempts>.json`: the
/// name sorts oldest first and carries the failed attempts counted against the payload, so
/// a restart keeps them. Files of other names are left alone.
///
/// Its rules as values: ``DeliveryConfiguration``'s attempts and delays, and
/// ``RefusalRule/onlyUnreadableBytes``: a payload is what the device measured (Apple's), so
/// a refusal deletes it only when its bytes are not a payload at all
/// (``MetricKitStatistics/payloadsRefused``); any other refusal keeps it, moves it behind the
/// others and sends it again after a backoff (``MetricKitStatistics/refusalsKept``).
struct MetricKitQueue: UploadQueue {
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
    struct Entry: UploadEntry, Hashable {
        var url: URL
        var name: String
        var attempts: Int
        var bytes: Int
    }

    /// The folder holding the payloads.
    let folder: URL
    let endpoint: URL
    let ingestKey: String
    let configuration: DeliveryConfiguration
    /// What ``MetricKitForwarder/enqueue(_:)`` counts on MetricKit's thread.
    let counters: Locked<(queued: Int, dropped: Int, lastError: String?)>
    var statistics = MetricKitStatistics()
    let rules: UploadStateMachine.Rules
    let wording = UploadWording(everyEntry: "every MetricKit payload", acceptsAgain: "the collector accepts MetricKit payloads again")

    /// The queue in `folder`, sending to `collector`'s `POST /v1/metrickit`.
    init(folder: URL, collector: URL, ingestKey: String, configuration: DeliveryConfiguration,
         counters: Locked<(queued: Int, dropped: Int, lastError: String?)>) {
        self.folder = folder
        endpoint = collector.appendingPathComponent("v1").appendingPathComponent("metrickit")
        self.ingestKey = ingestKey
        self.configuration = configuration
        self.counters = counters
        rules = UploadStateMachine.Rules(configuration, refusals: .onlyUnreadableBytes)
    }

    // MARK: - What the uploader asks

    var currentStatistics: MetricKitStatistics {
        var current = statistics
        let counted = counters.withLock { $0 }
        current.payloadsQueued = counted.queued
        current.payloadsDropped += counted.dropped
        if current.lastError == nil { current.lastError = counted.lastError }
        let waiting = entries()
        current.pendingPayloads = waiting.count
        current.queueBytes = waiting.reduce(0) { $0 + $1.bytes }
        return current
    }

    func entries() -> [Entry] {
        Self.entries(in: folder)
    }

    var isEmpty: Bool {
        entries().isEmpty
    }

    mutating func body(of entry: Entry) -> [UInt8]? {
        guard let payload = FileManager.default.contents(atPath: entry.url.path),
              let body = try? Gzip.compress(Array(payload)) else {
            if (try? FileManager.default.removeItem(at: entry.url)) != nil {
                statistics.payloadsDropped += 1
                statistics.lastError = "MetricKit payload \(entry.url.lastPathComponent) could not be read"
            }
            return nil
        }
        return body
    }

    func request(for entry: Entry) -> (request: URLRequest, what: String, answer: @Sendable (Data) -> Answer?) {
        (UploadRequest.post(to: endpoint, ingestKey: ingestKey, timeout: configuration.requestTimeout),
         "the collector's answer to a MetricKit payload", { try? JSONDecoder().decode(Answer.self, from: $0) })
    }

    mutating func delivered(_ entry: Entry, answer: Answer) {
        try? FileManager.default.removeItem(at: entry.url)
        statistics.payloadsDelivered += 1
        statistics.payloadsRejected += answer.rejected.isEmpty ? 0 : 1
    }

    mutating func refused(_ entry: Entry, status: Int, error: String) -> String {
        try? FileManager.default.removeItem(at: entry.url)
        statistics.payloadsRefused += 1
        return "HTTP \(status): the collector refused MetricKit payload \(entry.name); it is deleted: \(error)"
    }

    mutating func keep(_ entry: Entry, attempts: Int, status: Int, error: String) -> String {
        statistics.refusalsKept += 1
        rename(entry, attempts: attempts)
        return "HTTP \(status): the collector could not take MetricKit payload \(entry.name) for a reason that is not the payload's "
            + "(\(error)); it is kept and sent again later"
    }

    mutating func record(attempts: Int, against entry: Entry, movedBack: Bool, reason: String) -> String? {
        rename(entry, attempts: attempts)
        return nil
    }

    mutating func abandon(_ entry: Entry, attempts: Int, reason: String) -> String {
        try? FileManager.default.removeItem(at: entry.url)
        statistics.payloadsAbandoned += 1
        return "MetricKit payload \(entry.name) abandoned after \(attempts) failed attempts (the latest: \(reason))"
    }

    /// Carries `attempts` in `entry`'s file name (best effort: a payload whose count cannot be
    /// kept is sent again sooner, never deleted for it).
    private func rename(_ entry: Entry, attempts: Int) {
        guard attempts != entry.attempts else { return }
        try? FileManager.default.moveItem(at: entry.url, to: folder.appendingPathComponent("\(entry.name).\(attempts).json"))
    }

    // MARK: - The folder

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
}
