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
    /// Unique per app: `<batch id>/<visit start>/<screen>/<hang index>` for a visit's hang
    /// (the same on a retry whatever else the batch held), the fatal hang's own id for a
    /// fatal one; a second row with the key is not stored.
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

    /// The representative stack as the stores keep it, one line: each image once, then
    /// the frames as `[image, offset, lookup offset, share]`:
    /// `{"frames":[[0,8540,8539,0.8]],"images":[{"name":"Shop","id":"73d4…","app":true}]}`.
    public var storedStack: String {
        var images: [(name: String, id: String, app: Bool)] = []
        var index: [String: Int] = [:]
        var out = JSONWriter()
        out.raw("{\"frames\":[")
        for (position, frame) in summary.stack.enumerated() {
            let image: Int
            if let known = index[frame.imageId] { image = known } else {
                image = images.count
                index[frame.imageId] = image
                images.append((frame.image, frame.imageId, frame.app))
            }
            if position > 0 { out.raw(",") }
            out.raw("[\(image),\(frame.offset),\(frame.lookupOffset),")
            out.number(frame.share)
            out.raw("]")
        }
        out.raw("],\"images\":[")
        for (position, image) in images.enumerated() {
            if position > 0 { out.raw(",") }
            out.raw("{\"name\":")
            out.string(image.name)
            out.raw(",\"id\":")
            out.string(image.id)
            out.raw(image.app ? ",\"app\":true}" : ",\"app\":false}")
        }
        out.raw("]}")
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
    /// The batch's hang rows: every hang with a stack of every stored visit but the idle
    /// ones (the process was suspended or stopped, not the app busy), under the visit's
    /// dimension values as admitted, then its fatal hangs (keyed by their ids). A visit's
    /// hangs without a stack are in its raw event and its hang time, not here: a row for
    /// each would cost far more disk than the 30 bytes that send one.
    ///
    /// The summaries are the batch's own when ``IngestBatch/summarizeHangs()`` computed them
    /// before the write (as ingest does); otherwise they are computed here.
    public var hangRows: [HangRow] {
        var rows: [HangRow] = []
        for planned in events {
            let (event, startedAt) = batch.events[planned.index]
            let summaries = batch.visitHangSummaries.flatMap { $0.indices.contains(planned.index) ? $0[planned.index] : nil }
            for (index, hang) in event.hangs.enumerated() where hang.idle != true {
                guard let stack = hang.stack else { continue }
                let summary = summaries.flatMap { $0.indices.contains(index) ? $0[index] : nil } ?? HangSummary(stack, symbols: batch.symbolTables)
                rows.append(HangRow(key: "\(batch.batchId)/\(event.startedAt)/\(event.screen)/\(index)", startedAt: startedAt + hang.offset,
                                    dimensionValues: planned.dimensionValues, tags: event.context.tags, duration: hang.duration,
                                    fatal: false, source: .sdk, summary: summary))
            }
        }
        for planned in fatalHangs {
            let (fatal, startedAt) = batch.fatalHangs[planned.index]
            let summary = batch.fatalHangSummaries.flatMap { $0.indices.contains(planned.index) ? $0[planned.index] : nil }
                ?? fatal.stack.map { HangSummary($0, symbols: batch.symbolTables) } ?? .withoutStack
            rows.append(HangRow(key: fatal.id, startedAt: startedAt, dimensionValues: planned.dimensionValues, tags: fatal.context.tags,
                                duration: fatal.duration, fatal: true, source: .sdk, summary: summary))
        }
        return rows
    }
}
