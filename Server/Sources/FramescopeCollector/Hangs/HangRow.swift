import FramescopeCore

/// Where a stored hang came from.
public enum HangSource: String, Sendable, Hashable, Codable, CaseIterable {
    /// Framescope's watchdog, in a visit or as a fatal hang.
    case sdk
    /// Apple's MetricKit hang diagnostics.
    case metrickit
}

/// One hang as the stores keep it: when and where (the visit's dimension values as
/// admitted, and its tags), how long, whether the process died in it, and its summary.
public struct HangRow: Sendable, Hashable {
    /// Unique per app: `<batch id>/<event index>/<hang index>` for a visit's hang, the
    /// fatal hang's own id for a fatal one; a second row with the key is not stored.
    public var key: String
    /// When the hang began, Unix seconds.
    public var startedAt: Double
    /// Every ``QueryDimension``'s value, in registry order, as the visit's were admitted.
    public var dimensionValues: [String]
    /// The visit's tags (in NFC, as validated).
    public var tags: [String: String]
    /// How long the hang lasted, in seconds (for a fatal hang: until its last sample).
    public var duration: Double
    /// Whether the process died during the hang.
    public var fatal: Bool
    /// Where it came from.
    public var source: HangSource
    /// Its signature and representative stack.
    public var summary: HangSummary

    /// Creates a row.
    public init(key: String, startedAt: Double, dimensionValues: [String], tags: [String: String], duration: Double,
                fatal: Bool, source: HangSource, summary: HangSummary) {
        self.key = key
        self.startedAt = startedAt
        self.dimensionValues = dimensionValues
        self.tags = tags
        self.duration = duration
        self.fatal = fatal
        self.source = source
        self.summary = summary
    }

    /// The representative stack as the stores keep it: a JSON array of ``HangFrame``
    /// objects, one line, numbers in their shortest form.
    public var storedStack: String {
        var out = JSONWriter()
        out.raw("[")
        for (index, frame) in summary.stack.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"image\":")
            out.string(frame.image)
            out.raw(",\"imageId\":")
            out.string(frame.imageId)
            out.raw(",\"offset\":")
            out.raw(String(frame.offset))
            out.raw(",\"lookupOffset\":")
            out.raw(String(frame.lookupOffset))
            out.raw(",\"app\":")
            out.raw(frame.app ? "true" : "false")
            out.raw(",\"share\":")
            out.number(frame.share)
            out.raw("}")
        }
        out.raw("]")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// The visit's tags as the stores keep them: a JSON object, keys in byte order.
    public var storedTags: String {
        var out = JSONWriter()
        out.raw("{")
        for (index, (key, value)) in tags.sorted(by: { StoredText($0.key) < StoredText($1.key) }).enumerated() {
            if index > 0 { out.raw(",") }
            out.string(key)
            out.raw(":")
            out.string(value)
        }
        out.raw("}")
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

extension IngestPlan.Batch {
    /// The batch's hang rows: every hang of every stored visit but the idle ones (the
    /// process was suspended or stopped, not the app busy), under the visit's dimension
    /// values as admitted, then its fatal hangs (keyed by their ids).
    public var hangRows: [HangRow] {
        var rows: [HangRow] = []
        for planned in events {
            let (event, startedAt) = batch.events[planned.index]
            for (index, hang) in event.hangs.enumerated() where hang.idle != true {
                rows.append(HangRow(key: "\(batch.batchId)/\(planned.index)/\(index)", startedAt: startedAt + hang.offset,
                                    dimensionValues: planned.dimensionValues, tags: event.context.tags, duration: hang.duration,
                                    fatal: false, source: .sdk, summary: hang.stack.map(HangSummary.init) ?? .withoutStack))
            }
        }
        for planned in fatalHangs {
            let (fatal, startedAt) = batch.fatalHangs[planned.index]
            rows.append(HangRow(key: fatal.id, startedAt: startedAt, dimensionValues: planned.dimensionValues, tags: fatal.context.tags,
                                duration: fatal.duration, fatal: true, source: .sdk, summary: fatal.stack.map(HangSummary.init) ?? .withoutStack))
        }
        return rows
    }
}
