import Crypto
import Foundation
import FramescopeCore
import FramescopeTraces
import Hummingbird
import Logging
import NIOCore

extension IngestService {
    /// Most payloads one request may hold (a device sends one a day, or a few days' worth).
    public static let maximumMetricKitPayloads = 1_000

    /// Reads the MetricKit payloads in `request`'s body (one `jsonRepresentation()` object
    /// or a list of them, plain or gzip, within the same byte budget as events) and stores
    /// those with figures for `app`.
    ///
    /// A payload whose who-sent-it text is not acceptable, or whose end is not a plausible
    /// time, is refused alone, naming the field; a value that cannot be read (a duration of
    /// "20 parsecs") is left out of its payload, which is stored with the rest. JSON that is
    /// not well formed refuses the request.
    /// - Throws: ``CollectorError``: 400 `invalid_json` or `too_many_payloads` naming the
    ///   body, the body's own errors (``withBody(of:_:)``), the store's.
    public func acceptMetricKit(_ request: Request, app: String, logger: Logger) async throws -> MetricKitResponse {
        try await withSizedBody(of: request) { body, sent in
            try await ingestMetricKit(body: Array(buffer: body), sentBytes: sent, app: app, logger: logger)
        }
    }

    /// ``acceptMetricKit(_:app:logger:)`` for a body already in memory (uncompressed), sent
    /// as `sentBytes` bytes (`nil`: as it is), which set how many hang stacks it may store
    /// (``HangRowAllowance``).
    public func ingestMetricKit(body: [UInt8], sentBytes: Int? = nil, app: String, logger: Logger) async throws -> MetricKitResponse {
        let now = clock()
        let digest = AccessKeys.hex(Array(SHA256.hash(data: body)))
        var records: [MetricKitRecord] = []
        var callStacks: [[MetricKitHangCallStack]] = []  // per record
        var durations: [[Double]] = []
        var response = MetricKitResponse(accepted: 0, duplicates: 0, withoutFigures: 0, rejected: [], skipped: [])
        var source = MemoryByteSource(body)
        var index = 0
        do throws(TraceError) {
            try MetricKitParser(file: "body").read(from: &source) { (payload, _) throws(TraceError) in
                defer { index += 1 }
                guard index < Self.maximumMetricKitPayloads else {
                    throw TraceError(kind: .data, file: "body", message: "more than \(Self.maximumMetricKitPayloads) payloads in one request")
                }
                switch decide(payload, digest: "\(digest):\(index)", now: now) {
                case let .store(record):
                    records.append(record)
                    callStacks.append(payload.hangCallStacks)
                    durations.append(payload.hangDurations)
                    for issue in payload.issues.prefix(20) {
                        // The index says which payload; the path starts inside it.
                        let field = issue.field.hasPrefix("[\(index)].") ? String(issue.field.dropFirst("[\(index)].".count)) : issue.field
                        response.skipped.append(RejectedEvent(index: index, field: field, message: issue.message))
                    }
                case .withoutFigures:
                    response.withoutFigures += 1
                case let .refuse(field, message):
                    response.rejected.append(RejectedEvent(index: index, field: field, message: message))
                }
            }
        } catch {
            let code: CollectorError.Code = error.message.hasPrefix("more than") ? .tooManyPayloads : .invalidJSON
            throw CollectorError(.badRequest, code, field: "body",
                                 message: error.line.map { "line \($0): \(error.message)" } ?? error.message)
        }
        var allowance = HangRowAllowance(sentBytes: sentBytes ?? body.count)
        let stacksLeftOut = try await summariseHangs(&records, callStacks: callStacks, durations: durations, app: app, allowance: &allowance)
        if let first = stacksLeftOut.first {
            response.skipped.append(RejectedEvent(index: first.payload, field: "hangDiagnostics[\(first.diagnostic)].callStackTree",
                                                  message: "\(stacksLeftOut.count) hang stacks, from this one on, are not stored: a request stores one "
                                                      + "per \(HangRowAllowance.sentBytesPerRow) bytes it was sent as; their hangs still count in the payloads' figures"))
        }
        let stored = records.isEmpty ? 0 : try await store.storeMetricKit(app: app, records: records)
        response.accepted = stored
        response.duplicates = records.count - stored
        metrics.recordIngest(app: app, accepted: stored, rejected: response.rejected.count)
        logger.debug("metrickit ingested", metadata: [
            "app": .string(app), "stored": .stringConvertible(stored), "rejected": .stringConvertible(response.rejected.count),
        ])
        return response
    }

    /// Puts each record's hang call stacks into it as ``MetricKitHang``s: images are the app's
    /// when their symbols were uploaded or their names are not the system's
    /// (``MetricKitRecord/isAppImage(name:id:uploaded:)``), and the dominant frame is chosen
    /// per function where symbols are there, as for the SDK's hangs. Reading symbols that
    /// fails leaves them out; it never fails the request. A stack past `allowance` is not
    /// summarised or stored: returns where those were (payload, diagnostic), in body order.
    func summariseHangs(_ records: inout [MetricKitRecord], callStacks: [[MetricKitHangCallStack]], durations: [[Double]],
                        app: String, allowance: inout HangRowAllowance) async throws -> [(payload: Int, diagnostic: Int)] {
        guard callStacks.contains(where: { !$0.isEmpty }) else { return [] }
        var leftOut: [(payload: Int, diagnostic: Int)] = []
        // Each tree becomes a stack once; its images' ids (normalised there) are what the
        // symbol tables are looked up by, and the app flags are set once they are known.
        var stacks: [[(diagnostic: Int, stack: HangStack)]] = callStacks.indices.map { index in
            callStacks[index].compactMap { tree in
                guard durations[index].indices.contains(tree.diagnostic),
                      let stack = MetricKitCallStackFrame.hangStack(tree.roots, isApp: { _, _ in false }) else { return nil }
                guard allowance.take() else {
                    leftOut.append((index, tree.diagnostic))
                    return nil
                }
                return (tree.diagnostic, stack)
            }
        }
        // Every image's frames: which images are the app's is known once the uploaded ones are.
        var lookups: [String: Set<UInt64>] = [:]
        for entry in stacks.joined() {
            for image in entry.stack.images where lookups[image.id] == nil { lookups[image.id] = [] }
            entry.stack.addLookups(to: &lookups, where: { _ in true })
        }
        var tables: [String: SymbolTableBlob] = [:]
        if let symbols, !lookups.isEmpty { tables = (try? await symbols.cache.tables(app: app, lookups: lookups, store: symbols.store)) ?? [:] }
        let uploaded = Set(tables.keys)
        for index in records.indices {
            for position in stacks[index].indices {
                for image in stacks[index][position].stack.images.indices {
                    let named = stacks[index][position].stack.images[image]
                    stacks[index][position].stack.images[image].app = MetricKitRecord.isAppImage(name: named.name, id: named.id,
                                                                                                 uploaded: uploaded)
                }
                let (diagnostic, stack) = stacks[index][position]
                records[index].hangs.append(MetricKitHang(diagnostic: diagnostic, duration: durations[index][diagnostic],
                                                          summary: HangSummary(stack, symbols: tables)))
            }
        }
        return leftOut
    }

    /// The version number in Apple's `osVersion` ("14.0.1" of "iPhone OS 14.0.1 (18A393)"),
    /// as the SDK reports it, so that one OS filter applies to both; the text as it is when
    /// it holds none.
    static func osVersionNumber(_ text: String) -> String {
        let words = text.split(separator: " ")
        return words.first { word in word.first?.isNumber == true && word.allSatisfy { $0.isNumber || $0 == "." } }.map(String.init) ?? text
    }

    /// `seconds` in whole days, as a message says them ("30 days", "1 day").
    static func days(_ seconds: Double) -> String {
        let days = Int((seconds / 86_400).rounded())
        return days == 1 ? "1 day" : "\(days) days"
    }

    /// What becomes of one payload.
    enum MetricKitDecision {
        /// Stored as this record.
        case store(MetricKitRecord)
        /// Read, with nothing to store.
        case withoutFigures
        /// Refused, naming the field.
        case refuse(field: String, message: String)
    }

    /// The record to store for `payload`, or why there is none.
    ///
    /// Its app version, OS version and device text are put into NFC first
    /// (``CanonicalText/nfc(_:)``), as an event's are, then checked as an event's are; its
    /// end must fall where an event's start may (``IngestLimits/maximumAge`` back,
    /// ``IngestLimits/maximumFutureSkew`` ahead), so that its day is one the cardinality
    /// ledger still holds and the retention sweep has not passed. A `timeStampBegin` or
    /// `timeStampEnd` present but not a time, or an end before the begin
    /// (``MetricKitPayload/periodIssue``), refuses the payload naming that field; a payload with
    /// neither is dated at receipt, which the age check passes by definition.
    func decide(_ payload: MetricKitPayload, digest: String, now: Double) -> MetricKitDecision {
        func refuse(_ field: String, _ message: String) -> MetricKitDecision { .refuse(field: field, message: message) }
        let appVersion = payload.appVersion.map(CanonicalText.nfc)
        let osVersion = payload.osVersion.map(CanonicalText.nfc)
        let deviceType = payload.deviceType.map(CanonicalText.nfc)
        for (field, value) in [("metaData.appVersion", appVersion), ("metaData.osVersion", osVersion), ("metaData.deviceType", deviceType)] {
            if let value, let problem = WireText.problem(in: value, maximumBytes: limits.maximumFieldLength, allowEmpty: true) {
                return refuse(field, "\(field) \(problem)")
            }
            if value == CardinalityLimits.other {
                return refuse(field, "\(field) may not be \(CardinalityLimits.other), which the collector reserves for folded values")
            }
        }
        guard payload.hasFigures else { return .withoutFigures }
        // A period present but unreadable or inverted is refused, naming its field: dated at
        // receipt instead, it escaped the age check below (issue 43, item 9).
        if let issue = payload.periodIssue {
            let field = issue.field.hasPrefix("[") ? issue.field.split(separator: ".", maxSplits: 1).last.map(String.init) ?? issue.field : issue.field
            return refuse(field, "\(field) \(issue.message): a payload is dated by its period, so a period that cannot be read refuses it")
        }
        let end = payload.end ?? payload.begin ?? now
        guard end >= now - limits.maximumAge, end <= now + limits.maximumFutureSkew else {
            return refuse("timeStampEnd", "the payload ends more than \(Self.days(limits.maximumAge)) ago or more than \(Self.days(limits.maximumFutureSkew)) ahead")
        }
        let hangTime = payload.hangDurations.reduce(0, +)
        return .store(MetricKitRecord(
            digest: digest, receivedAt: now, begin: payload.begin, end: end, appVersion: appVersion ?? "",
            osVersion: osVersion.map(Self.osVersionNumber) ?? "", deviceModel: deviceType ?? "",
            scrollHitchTimeRatio: payload.scrollHitchTimeRatio, hangDiagnostics: payload.hangDurations.count,
            hangTime: hangTime, longestHang: payload.hangDurations.max() ?? 0, histogramHangs: payload.histogramHangs))
    }
}
