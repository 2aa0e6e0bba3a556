import FramescopeCore

/// Which raw events to export: a ``ScreenQuery`` (time range of start times and a filter
/// per dimension) plus what the rollups do not hold: tags.
public struct EventQuery: Sendable, Hashable {
    /// Time range (of the events' start times) and the per-dimension filters.
    public var screens: ScreenQuery
    /// Only events carrying every one of these tags, by key.
    public var tags: [String: String]

    /// The most tag filters one query may carry.
    public static let maximumTagFilters = 8

    /// A query; see each property.
    public init(screens: ScreenQuery, tags: [String: String] = [:]) {
        self.screens = screens
        self.tags = tags
    }
}

/// Where an event sits in the export's order (start time, then the store's id for events
/// that started at the same instant): the cursor a client resumes after.
///
/// Its text form, `<start time's bits in 16 hex digits>-<id>`, is exact (no decimal
/// rounding of the start time) and opaque to clients.
public struct RawEventKey: Sendable, Hashable, Comparable {
    /// The event's start, Unix seconds.
    public var startedAt: Double
    /// The store's id of the event (unique per store).
    public var id: Int64

    /// A key; see each property.
    public init(startedAt: Double, id: Int64) {
        self.startedAt = startedAt
        self.id = id
    }

    /// Start time first, then id.
    public static func < (a: RawEventKey, b: RawEventKey) -> Bool {
        a.startedAt < b.startedAt || (a.startedAt == b.startedAt && a.id < b.id)
    }

    /// The hour of the start, in hours since the epoch (the store's event index).
    public var hour: Int64 { Self.hour(of: startedAt) }

    /// The hour `seconds` falls in, in hours since the epoch; clamped for values no event
    /// can have.
    public static func hour(of seconds: Double) -> Int64 {
        guard seconds.isFinite else { return seconds > 0 ? Int64.max / 2 : Int64.min / 2 }
        let hours = (seconds / 3600).rounded(.down)
        return hours >= 9.0e15 ? Int64(9.0e15) : hours <= -9.0e15 ? Int64(-9.0e15) : Int64(hours)
    }

    /// The cursor text.
    public var cursor: String {
        let bits = String(startedAt.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - bits.count) + bits + "-" + String(id)
    }

    /// The key a cursor names, or `nil` when the text is not one (or names an impossible start time).
    public init?(cursor: String) {
        let parts = cursor.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 16, parts[1].utf8.count <= 19,
              parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let bits = UInt64(parts[0], radix: 16), let id = Int64(parts[1]), id >= 0 else { return nil }
        let startedAt = Double(bitPattern: bits)
        guard startedAt.isFinite, startedAt >= 0, startedAt < 32_503_680_000 else { return nil }
        self.init(startedAt: startedAt, id: id)
    }
}

/// One raw event as stored: the event's JSON exactly as the device sent it, what the
/// batch said around it, and the value of every dimension as the store keeps it (what the
/// export's filters match).
public struct StoredEvent: Sendable, Hashable {
    /// Its place in the export's order.
    public var key: RawEventKey
    /// When the collector received its batch, Unix seconds.
    public var receivedAt: Double
    /// The batch's id.
    public var batchId: String
    /// Each dimension's value (``QueryDimension/all`` order; `"true"`/`"false"` for a
    /// boolean dimension), after NFC and the cardinality limits, as the store keeps it.
    public var values: [String]
    /// The event's JSON object, byte for byte as ingested.
    public var payload: String

    /// An event; `values` in ``QueryDimension/all`` order (missing ones are empty).
    public init(key: RawEventKey, receivedAt: Double, batchId: String, values: [String], payload: String) {
        self.key = key
        self.receivedAt = receivedAt
        self.batchId = batchId
        self.values = QueryDimension.all.indices.map { $0 < values.count ? values[$0] : "" }
        self.payload = payload
    }

    /// The value of `dimension` as stored (`"true"`/`"false"` for a boolean dimension).
    public subscript(dimension: QueryDimension) -> String {
        dimension.position.map { values[$0] } ?? ""
    }
}
