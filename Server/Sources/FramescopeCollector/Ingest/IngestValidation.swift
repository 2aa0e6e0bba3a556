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
    /// Most hangs in one visit (the SDK keeps at most 512 between visits).
    public var maximumHangsPerVisit = 1000
    /// Most hangs with a sampled stack in one visit (``HangStack``; the SDK samples at
    /// most this many between visits).
    public var maximumStackedHangsPerVisit = HangStack.maximumStackedHangsPerVisit
    /// Largest stored form of one event (``StoredEventJSON``), in bytes: an event over it
    /// is refused. A visit with every part at its limit (1,024-entry tallies in both
    /// reports, 16 tags, 1,000 hangs) stays well under it.
    public var maximumStoredEventBytes = 256 << 10

    /// The defaults.
    public init() {}
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
    /// Hang stacks left out of events that were stored (a stack breaking a limit, or beyond
    /// the stacks a visit may hold), with the field at fault: a stack is a diagnosis, the
    /// visit measured data, so a bad stack never costs the visit.
    public var stacksDropped: [RejectedEvent] = []
}

/// A batch as read from the wire: the envelope strictly, each event on its own so that
/// one bad event does not lose the others.
struct WireBatch: Decodable {
    var batchId: String
    /// The app; its `id` may be absent (or `null`): the batch is then the ingest key's app's.
    var app: AppInfo
    var device: DeviceInfo
    var events: [LossyEvent]
    /// The share of installations that measure (``EventBatch/sampleRate``), as sent: absent
    /// or `null` is 1; validation refuses anything outside (0, 1].
    var sampleRate: Double?

    struct LossyEvent: Decodable {
        /// An event of one of version 1's kinds.
        enum Event {
            /// `screenVisit`.
            case visit(ScreenVisitEvent)
            /// `fatalHang`.
            case fatalHang(FatalHangEvent)
        }

        var result: Result<Event, DecodingError>

        /// A visit that decoded (``WireBatchDecoder``).
        init(_ event: ScreenVisitEvent) {
            result = .success(.visit(event))
        }

        private enum KindKey: String, CodingKey { case kind }

        /// A fatal hang by its `kind`; anything else is read as a visit (whose decoding
        /// names what is missing or wrong, as before fatal hangs existed).
        init(from decoder: any Decoder) throws {
            do {
                if try decoder.container(keyedBy: KindKey.self).decodeIfPresent(String.self, forKey: .kind) == "fatalHang" {
                    result = .success(.fatalHang(try FatalHangEvent(from: decoder)))
                } else {
                    result = .success(.visit(try ScreenVisitEvent(from: decoder)))
                }
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

    /// Every device string is put into NFC first (``CanonicalText``), then checked; the
    /// stored raw event is the canonical JSON of what was checked (``StoredEventJSON``).
    func validate(_ batch: WireBatch, app: String) throws -> (IngestBatch, [RejectedEvent]) {
        let id = batch.batchId
        guard Self.isToken(id) else {
            throw CollectorError(.badRequest, .invalidField, field: "batchId", message: "batchId must be 1–64 letters, digits, '-' or '_'")
        }
        // Without an id the batch is the key's app's; with one it must name that app.
        if let named = batch.app.id, named != app {
            throw CollectorError(.forbidden, .wrongApp, field: "app.id", message: "this ingest key belongs to app '\(app)', not '\(named)'")
        }
        let sampleRate = batch.sampleRate ?? 1
        guard EventBatch.isValidSampleRate(sampleRate) else {
            throw CollectorError(.badRequest, .invalidField, field: "sampleRate",
                                 message: "sampleRate must be a number from 0.000001 (one installation in a million, the finest rate kept) to 1 (the share of installations that measure)")
        }
        let appVersion = CanonicalText.nfc(batch.app.version), build = CanonicalText.nfc(batch.app.build)
        let model = CanonicalText.nfc(batch.device.model), osName = CanonicalText.nfc(batch.device.osName)
        let osVersion = CanonicalText.nfc(batch.device.osVersion)
        for (field, value) in [("app.version", appVersion), ("app.build", build), ("device.model", model),
                               ("device.osName", osName), ("device.osVersion", osVersion)] {
            if let problem = WireText.problem(in: value, maximumBytes: limits.maximumFieldLength) {
                throw CollectorError(.badRequest, .invalidField, field: field, message: "\(field) \(problem)")
            }
            if value == CardinalityLimits.other {
                throw CollectorError(.badRequest, .invalidField, field: field, message: "\(field) '\(CardinalityLimits.other)' is reserved for folded values")
            }
        }
        if let installation = batch.device.installationId {
            guard Self.isToken(installation) else {
                throw CollectorError(.badRequest, .invalidField, field: "device.installationId",
                                     message: "device.installationId must be 1–64 letters, digits, '-' or '_'")
            }
        }
        guard (1...1000).contains(batch.device.maxRefreshRate) else {
            throw CollectorError(.badRequest, .invalidField, field: "device.maxRefreshRate", message: "device.maxRefreshRate must be 1–1000 Hz")
        }
        guard !batch.events.isEmpty else {
            throw CollectorError(.badRequest, .invalidField, field: "events", message: "a batch needs at least one event")
        }
        guard batch.events.count <= limits.maximumEvents else {
            throw CollectorError(.contentTooLarge, .tooManyEvents, field: "events", message: "a batch holds at most \(limits.maximumEvents) events")
        }

        var accepted: [(event: ScreenVisitEvent, startedAt: Double)] = []
        var raw: [String] = []
        var rejected: [RejectedEvent] = []
        var fatalHangs: [(event: FatalHangEvent, startedAt: Double)] = []
        var stacksDropped: [RejectedEvent] = []
        for (index, lossy) in batch.events.enumerated() {
            switch lossy.result {
            case let .failure(error):
                let field = error.fieldPath
                rejected.append(RejectedEvent(index: index, field: field.isEmpty ? "events[\(index)]" : field, message: error.reason))
            case var .success(.fatalHang(event)):
                Self.normalize(&event)
                let startedAt = ISO8601.parse(event.startedAt)
                let dropped = Self.dropInvalidStack(&event)
                if let (field, message) = check(event, startedAt: startedAt) {
                    rejected.append(RejectedEvent(index: index, field: "events[\(index)].\(field)", message: message))
                } else if let startedAt {
                    fatalHangs.append((event, startedAt))
                    stacksDropped += dropped.map { RejectedEvent(index: index, field: "events[\(index)].\($0.0)", message: $0.1) }
                }
            case var .success(.visit(event)):
                if let (field, message) = Self.normalize(&event) {
                    rejected.append(RejectedEvent(index: index, field: "events[\(index)].\(field)", message: message))
                    continue
                }
                let startedAt = ISO8601.parse(event.startedAt)
                let dropped = dropInvalidStacks(&event)
                if let (field, message) = check(event, startedAt: startedAt) {
                    rejected.append(RejectedEvent(index: index, field: "events[\(index)].\(field)", message: message))
                } else if let startedAt {
                    let stored = StoredEventJSON.encode(event)
                    guard stored.utf8.count <= limits.maximumStoredEventBytes else {
                        rejected.append(RejectedEvent(index: index, field: "events[\(index)]",
                                                      message: "the event takes \(stored.utf8.count) bytes stored, more than \(limits.maximumStoredEventBytes)"))
                        continue
                    }
                    accepted.append((event, startedAt))
                    raw.append(stored)
                    stacksDropped += dropped.map { RejectedEvent(index: index, field: "events[\(index)].\($0.0)", message: $0.1) }
                }
            }
        }
        var ingest = IngestBatch(app: app, batchId: id, appVersion: appVersion, osVersion: osVersion,
                                 deviceModel: model, events: accepted, rawEvents: raw, receivedAt: now)
        ingest.installationId = batch.device.installationId
        ingest.maxRefreshRate = batch.device.maxRefreshRate
        ingest.sampleRatePPM = SampleRate.partsPerMillion(of: sampleRate)
        ingest.fatalHangs = fatalHangs
        ingest.stacksDropped = stacksDropped
        return (ingest, rejected)
    }

    /// Puts the event's screen name and tags into NFC (``CanonicalText``); returns the
    /// problem as (field, message) when two tag keys become one. (A `[String: String]`
    /// cannot hold two canonically equal keys, so a body that sends them is refused
    /// earlier, as a repeated member; this holds the rule for any other caller.)
    static func normalize(_ event: inout ScreenVisitEvent) -> (String, String)? {
        event.screen = CanonicalText.nfc(event.screen)
        for index in event.hangs.indices where event.hangs[index].stack != nil {
            event.hangs[index].stack?.normalize()
        }
        guard !event.context.tags.isEmpty else { return nil }
        let (tags, repeated) = normalizedTags(event.context.tags)
        if let repeated { return ("context.tags", "tag key '\(repeated)' is given twice (in canonically equivalent spellings)") }
        event.context.tags = tags
        return nil
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
        if let problem = Self.tagProblem(event.context.tags) { return problem }
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
        if let problem = checkHangs(event.hangs, startedAt: startedAt, visitDuration: event.duration) { return problem }
        if let resources = event.resources, let problem = Self.check(resources, duration: event.duration) { return problem }
        if let hitches = event.mainThreadHitches {
            let lateFrames = event.report.frames.addingReportingOverflow(event.report.firstFrames)
            if hitches.frames < 0 || (!lateFrames.overflow && hitches.frames > lateFrames.partialValue) {
                return ("mainThreadHitches.frames", "mainThreadHitches.frames must be 0 to the report's frames")
            }
            if !(hitches.hitchTime.isFinite && hitches.hitchTime >= 0 && hitches.hitchTime <= event.duration + 1) {
                return ("mainThreadHitches.hitchTime", "mainThreadHitches.hitchTime must be 0 to the visit's duration in seconds")
            }
        }
        return nil
    }

    /// The latest a hang may end, Unix seconds: the batch's arrival plus the clock skew
    /// allowed for `startedAt` (``IngestLimits/maximumFutureSkew``, a day), since the
    /// device's clock dates both a hang's start and its end: a tighter bound on the end would
    /// refuse the hangs of a device whose clock is ahead but whose start times pass. The one
    /// rule for a visit's hangs (``checkHangs(_:startedAt:visitDuration:)``) and fatal hangs.
    var latestHangEnd: Double { now + limits.maximumFutureSkew }

    /// The first problem with a visit's hangs: at most ``IngestLimits/maximumHangsPerVisit``;
    /// each with offset ≥ 0 and duration > 0 seconds, ending no later than the batch's
    /// arrival (plus the clock skew allowed for `startedAt`); in order and not overlapping,
    /// since one main thread hangs once at a time (1 ms of rounding allowed); none longer than
    /// the visit's measured duration (the watchdog and the visit pause together). The visit's
    /// wall-clock span (its `duration` leaves pauses out) is known only to end by then.
    func checkHangs(_ hangs: [HangRecord], startedAt: Double, visitDuration: Double) -> (String, String)? {
        if hangs.count > limits.maximumHangsPerVisit { return ("hangs", "a visit holds at most \(limits.maximumHangsPerVisit) hangs") }
        let latestEnd = latestHangEnd - startedAt
        var previousEnd = 0.0
        for (position, hang) in hangs.enumerated() {
            guard hang.offset.isFinite, hang.offset >= 0, hang.duration.isFinite, hang.duration > 0 else {
                return ("hangs[\(position)]", "a hang needs offset ≥ 0 and duration > 0 seconds")
            }
            guard hang.offset + hang.duration <= latestEnd else {
                return ("hangs[\(position)]", "the hang ends after the batch arrived")
            }
            guard hang.duration <= visitDuration + 1 else {
                return ("hangs[\(position)].duration", "a hang lasts at most its visit's duration (plus 1 s of rounding)")
            }
            guard hang.offset >= previousEnd - 0.001 else {
                return ("hangs[\(position)]", "hangs must be in order and may not overlap")
            }
            previousEnd = hang.offset + hang.duration
        }
        return nil
    }

    /// Removes from `event` every hang stack that breaks a limit (``check(_:hangDuration:)``),
    /// then the stacks beyond ``IngestLimits/maximumStackedHangsPerVisit`` (those of the
    /// shortest hangs, as the SDK chooses): the visit is kept, measured data; a stack is only a
    /// diagnosis. Returns each removal as (field, message).
    func dropInvalidStacks(_ event: inout ScreenVisitEvent) -> [(String, String)] {
        var dropped: [(String, String)] = []
        for index in event.hangs.indices {
            guard let stack = event.hangs[index].stack else { continue }
            let duration = event.hangs[index].duration
            let problem = duration.isFinite && duration > 0
                ? Self.check(stack, hangDuration: duration)
                : ("", "a stack needs a hang of a positive duration")
            if let (field, message) = problem {
                dropped.append(("hangs[\(index)].stack\(field)", message))
                event.hangs[index].stack = nil
            }
        }
        let stacked = event.hangs.indices.filter { event.hangs[$0].stack != nil }
        if stacked.count > limits.maximumStackedHangsPerVisit {
            let longestFirst = stacked.sorted { event.hangs[$0].duration > event.hangs[$1].duration }
            for index in longestFirst.dropFirst(limits.maximumStackedHangsPerVisit).sorted() {
                event.hangs[index].stack = nil
                dropped.append(("hangs[\(index)].stack", "a visit holds at most \(limits.maximumStackedHangsPerVisit) hangs with a stack: this shorter hang's was left out"))
            }
        }
        return dropped
    }

    /// The first problem with a visit's CPU and memory: finite, non-negative, min ≤ mean ≤
    /// max (within rounding), at least one sample and no more than 1,000 a second.
    static func check(_ resources: ResourceUsage, duration: Double) -> (String, String)? {
        for (name, summary) in [("cpuPercent", resources.cpuPercent), ("residentBytes", resources.residentBytes)] {
            let values = [summary.min, summary.mean, summary.max]
            guard values.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
                return ("resources.\(name)", "resources.\(name) needs finite values ≥ 0")
            }
            let slack = 1e-9 * Swift.max(1, summary.max)
            guard summary.min <= summary.mean + slack, summary.mean <= summary.max + slack else {
                return ("resources.\(name)", "resources.\(name) needs min ≤ mean ≤ max")
            }
        }
        guard resources.samples >= 1, Double(resources.samples) <= (duration + 1) * 1000 else {
            return ("resources.samples", "resources.samples must be 1 to 1,000 per second of the visit")
        }
        return nil
    }

}
