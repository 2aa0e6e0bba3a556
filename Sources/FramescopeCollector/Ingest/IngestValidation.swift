import Foundation
import FramescopeCore

/// The limits `POST /v1/events` enforces.
public struct IngestLimits: Sendable, Hashable {
    /// Largest request body as sent (compressed or not), in bytes.
    public var maximumBodyBytes = 4 << 20
    /// Largest body after gzip decompression, in bytes: a gzip bomb is refused with 413.
    public var maximumDecompressedBytes = 16 << 20
    /// Sustained ingest requests per second allowed per ingest key (one key serves a
    /// whole app's fleet: a million daily users sending a batch every few minutes is
    /// about 100 per second).
    public var requestsPerSecond: Double = 1000
    /// Ingest requests a key may send at once after being idle.
    public var burst: Double = 2000
    /// Most events per batch.
    public var maximumEvents = 1000
    /// Longest screen name, in bytes of UTF-8 (``WireText``).
    public var maximumScreenLength = 128
    /// Longest app, device or OS field, in bytes of UTF-8 (``WireText``).
    public var maximumFieldLength = 64
    /// How far in the past an event may start, in seconds (30 days).
    public var maximumAge: Double = 30 * 86_400
    /// How far in the future an event may start, in seconds (1 day).
    public var maximumFutureSkew: Double = 86_400
    /// Longest visit, in seconds.
    public var maximumVisitDuration: Double = 86_400
    /// Most request bytes held at once over all ingest requests (bodies as sent, plus
    /// their decompressed form while it is read); past it, 503 with `Retry-After`.
    public var maximumBytesInFlight = 128 << 20
    /// Most bytes of events waiting for the writer's next flush; past it, 503 with
    /// `Retry-After` (``GroupCommit``).
    public var maximumWaitingBytes = 64 << 20

    /// The defaults.
    public init() {}
}

/// One event the collector refused, and why.
public struct RejectedEvent: Sendable, Hashable, Codable {
    /// Its position in the batch's `events`.
    public var index: Int
    /// The field at fault, as a JSON path (`events[2].report.dropEvents`).
    public var field: String
    /// What is wrong.
    public var message: String
}

/// The answer to an accepted batch (202).
public struct IngestResponse: Sendable, Hashable, Codable {
    /// The batch's id.
    public var batchId: String
    /// Events stored (or already stored, for a repeated batch).
    public var accepted: Int
    /// Whether this batch id had been accepted before; it was not counted again.
    public var duplicate: Bool
    /// Every event refused, with the field at fault.
    public var rejected: [RejectedEvent]
}

/// A batch as read from the wire: the envelope strictly, each event on its own so that
/// one bad event does not lose the others.
struct WireBatch: Decodable {
    var batchId: String
    var app: AppInfo
    var device: DeviceInfo
    var events: [LossyEvent]

    struct LossyEvent: Decodable {
        var result: Result<ScreenVisitEvent, DecodingError>

        /// An event that decoded (``WireBatchDecoder``).
        init(_ event: ScreenVisitEvent) {
            result = .success(event)
        }

        init(from decoder: any Decoder) throws {
            do {
                result = .success(try ScreenVisitEvent(from: decoder))
            } catch let error as DecodingError {
                result = .failure(error)
            }
        }
    }
}

/// Checks a decoded batch against the limits; returns the storable batch and the
/// rejected events, or throws a ``CollectorError`` for a batch that is unusable whole.
struct IngestValidator {
    var limits: IngestLimits
    var now: Double

    /// - Parameter rawEvents: Each event's JSON exactly as sent (``JSONEventSlicer``), stored
    ///   as the raw event; when `nil` or of another count, accepted events are encoded again.
    func validate(_ batch: WireBatch, app: String, rawEvents: [String]? = nil) throws -> (IngestBatch, [RejectedEvent]) {
        let id = batch.batchId
        guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw CollectorError(.badRequest, code: "invalid_field", field: "batchId", message: "batchId must be 1–64 letters, digits, '-' or '_'")
        }
        guard batch.app.id == app else {
            throw CollectorError(.forbidden, code: "wrong_app", field: "app.id", message: "this ingest key belongs to app '\(app)', not '\(batch.app.id)'")
        }
        for (field, value) in [("app.version", batch.app.version), ("app.build", batch.app.build), ("device.model", batch.device.model),
                               ("device.osName", batch.device.osName), ("device.osVersion", batch.device.osVersion)] {
            if let problem = WireText.problem(in: value, maximumBytes: limits.maximumFieldLength) {
                throw CollectorError(.badRequest, code: "invalid_field", field: field, message: "\(field) \(problem)")
            }
            if value == CardinalityLimits.other {
                throw CollectorError(.badRequest, code: "invalid_field", field: field, message: "\(field) '\(CardinalityLimits.other)' is reserved for folded values")
            }
        }
        if let installation = batch.device.installationId {
            guard !installation.isEmpty, installation.count <= 64,
                  installation.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw CollectorError(.badRequest, code: "invalid_field", field: "device.installationId",
                                     message: "device.installationId must be 1–64 letters, digits, '-' or '_'")
            }
        }
        guard (1...1000).contains(batch.device.maxRefreshRate) else {
            throw CollectorError(.badRequest, code: "invalid_field", field: "device.maxRefreshRate", message: "device.maxRefreshRate must be 1–1000 Hz")
        }
        guard !batch.events.isEmpty else {
            throw CollectorError(.badRequest, code: "invalid_field", field: "events", message: "a batch needs at least one event")
        }
        guard batch.events.count <= limits.maximumEvents else {
            throw CollectorError(.contentTooLarge, code: "too_many_events", field: "events", message: "a batch holds at most \(limits.maximumEvents) events")
        }

        var accepted: [(event: ScreenVisitEvent, startedAt: Double)] = []
        var raw: [String] = []
        var rejected: [RejectedEvent] = []
        // Needed only for events the batch decoder did not slice (JSON reports).
        lazy var encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return encoder
        }()
        let sent = rawEvents.flatMap { $0.count == batch.events.count ? $0 : nil }
        for (index, lossy) in batch.events.enumerated() {
            switch lossy.result {
            case let .failure(error):
                let field = error.fieldPath
                rejected.append(RejectedEvent(index: index, field: field.isEmpty ? "events[\(index)]" : field, message: error.reason))
            case let .success(event):
                let startedAt = ISO8601.parse(event.startedAt)
                if let (field, message) = check(event, startedAt: startedAt) {
                    rejected.append(RejectedEvent(index: index, field: "events[\(index)].\(field)", message: message))
                } else if let startedAt {
                    if let sent {
                        accepted.append((event, startedAt))
                        raw.append(sent[index])
                    } else if let json = try? encoder.encode(event) {
                        accepted.append((event, startedAt))
                        raw.append(String(decoding: json, as: UTF8.self))
                    }
                }
            }
        }
        var ingest = IngestBatch(app: app, batchId: id, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                                 deviceModel: batch.device.model, events: accepted, rawEvents: raw, receivedAt: now)
        ingest.installationId = batch.device.installationId
        ingest.maxRefreshRate = batch.device.maxRefreshRate
        return (ingest, rejected)
    }

    /// The first problem with an event, as (field, message), or `nil`.
    /// - Parameter startedAt: `event.startedAt` parsed (Unix seconds), nil when it is not a date.
    func check(_ event: ScreenVisitEvent, startedAt: Double?) -> (String, String)? {
        if event.kind != "screenVisit" { return ("kind", "kind must be 'screenVisit' in version 1") }
        if let problem = WireText.problem(in: event.screen, maximumBytes: limits.maximumScreenLength) {
            return ("screen", "screen \(problem)")
        }
        if event.screen == CardinalityLimits.other { return ("screen", "screen '\(CardinalityLimits.other)' is reserved for folded values") }
        guard let startedAt else {
            return ("startedAt", "startedAt must be an ISO 8601 date-time such as 2026-11-22T15:42:13Z")
        }
        if startedAt < now - limits.maximumAge { return ("startedAt", "startedAt is more than 30 days in the past") }
        if startedAt > now + limits.maximumFutureSkew { return ("startedAt", "startedAt is more than a day in the future") }
        if !(event.duration.isFinite && event.duration >= 0 && event.duration <= limits.maximumVisitDuration) {
            return ("duration", "duration must be 0–\(Int(limits.maximumVisitDuration)) seconds")
        }
        if event.context.tags.count > VisitContext.maximumTags { return ("context.tags", "at most \(VisitContext.maximumTags) tags") }
        for (key, value) in event.context.tags.sorted(by: { $0.key < $1.key }) {
            if let problem = WireText.problem(in: key, maximumBytes: VisitContext.maximumTagLength) {
                return ("context.tags", "tag key \(problem)")
            }
            if let problem = WireText.problem(in: value, maximumBytes: VisitContext.maximumTagLength, allowEmpty: true) {
                return ("context.tags.\(key)", "tag value \(problem)")
            }
            if value == CardinalityLimits.other || value == DeclaredTags.none {
                return ("context.tags.\(key)", "tag value '\(value)' is reserved (folded values and visits without the tag)")
            }
        }
        if event.report.frames == 0 { return ("report.frames", "a visit needs at least one measured frame") }
        if event.report.duration > event.duration + 1 {
            return ("report.duration", "report.duration exceeds the visit's duration")
        }
        for (name, report) in [("report", event.report), ("motion", event.motion)] {
            guard let report else { continue }
            if Double(report.rejectedTicks) > (event.duration + 1) * Double(FrameReport.maximumRefreshRate) {
                return ("\(name).rejectedTicks", "\(name).rejectedTicks is more than \(FrameReport.maximumRefreshRate) per second of the visit")
            }
            let limit = FrameReport.maximumTallyEntriesPerVisit
            if report.windowFPS.entries.count > limit { return ("\(name).histograms.windowFPS", "a visit holds at most \(limit) window-FPS entries") }
            if report.refreshRates.entries.count > limit { return ("\(name).refreshRates", "a visit holds at most \(limit) refresh rates") }
        }
        if let motion = event.motion {
            if motion.frames > event.report.frames { return ("motion.frames", "motion.frames exceeds report.frames") }
            if motion.droppedFrames > event.report.droppedFrames { return ("motion.droppedFrames", "motion.droppedFrames exceeds report.droppedFrames") }
        }
        for (position, hang) in event.hangs.enumerated() where !(hang.offset.isFinite && hang.offset >= 0 && hang.duration.isFinite && hang.duration > 0) {
            return ("hangs[\(position)]", "a hang needs offset ≥ 0 and duration > 0 seconds")
        }
        return nil
    }

}
