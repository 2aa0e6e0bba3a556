import FramescopeCore

/// The sums one rollup row holds for a set of screen visits: the count, the merged
/// whole and motion reports, and the per-visit statistics. Merging two values gives
/// exactly the value of both sets of visits.
public struct RollupValue: Sendable, Hashable {
    /// Screen visits.
    public var visits: Int
    /// The merge of the visits' whole reports.
    public var report: FrameReport
    /// The merge of the visits' motion reports, `nil` when none moved.
    public var motion: FrameReport?
    /// Sums and per-visit distributions of the ``VisitMetric`` figures.
    public var statistics: VisitStatistics
    /// The distinct devices (installations) the visits came from.
    public var devices: DeviceSketch

    /// No visits.
    public init() {
        visits = 0
        report = FrameReport()
        motion = nil
        statistics = VisitStatistics()
        devices = DeviceSketch()
    }

    /// Stored sums.
    public init(visits: Int, report: FrameReport, motion: FrameReport?, statistics: VisitStatistics, devices: DeviceSketch = DeviceSketch()) {
        self.visits = visits
        self.report = report
        self.motion = motion
        self.statistics = statistics
        self.devices = devices
    }

    /// The value of one screen visit, from the installation `installationId` when known.
    public init(visit event: ScreenVisitEvent, installationId: String? = nil) {
        visits = 1
        report = event.report
        motion = event.motion
        statistics = VisitStatistics(whole: event.report, motion: event.motion)
        devices = DeviceSketch()
        if let installationId { devices.add(installationId) }
    }

    /// Adds the visits of `other`.
    public mutating func merge(_ other: RollupValue) {
        visits += other.visits
        report.merge(other.report)
        if let otherMotion = other.motion {
            if motion == nil { motion = otherMotion } else { motion?.merge(otherMotion) }
        }
        statistics.merge(other.statistics)
        devices.merge(other.devices)
    }

    /// The bytes the value holds in memory, approximately: a fixed part plus 16 bytes per
    /// histogram bucket and tally entry, and the device sketch's registers. The rollup
    /// row cache is bounded by this sum.
    public var approximateBytes: Int {
        func size(_ report: FrameReport) -> Int {
            256 &+ 16 &* (report.frameDurations.buckets.count &+ report.windowFPS.entries.count &+ report.refreshRates.entries.count)
        }
        var bytes = 128 &+ size(report) &+ (motion.map(size) ?? 0) &+ devices.registers.count
        for statistics in statistics.metrics.values { bytes = bytes &+ 128 &+ 16 &* statistics.positiveValues.buckets.count }
        return bytes
    }

    /// The value of `count` copies of these visits (by doubling: O(log count) merges).
    /// Used to build large synthetic rollups for benchmarks.
    public func repeated(_ count: Int) -> RollupValue {
        var result = RollupValue()
        var power = self
        var remaining = max(0, count)
        while remaining > 0 {
            if remaining & 1 == 1 { result.merge(power) }
            remaining >>= 1
            if remaining > 0 { power.merge(power) }
        }
        return result
    }
}

/// The key of one rollup row: the time bucket and the value of every ``QueryDimension``
/// (the screen and the rollup dimensions). Coarser rollup levels store
/// ``RollupKey/anyValue(of:)`` in the dimensions they drop.
public struct RollupKey: Sendable, Hashable {
    /// Start of the bucket, Unix seconds (a whole hour or a whole UTC day).
    public var bucketStart: Int64
    /// Each dimension's value as text, in ``QueryDimension/all`` order (`"true"`/`"false"`
    /// for a boolean dimension).
    public private(set) var values: [String]

    /// Stands for "every value" of a text dimension in a level that does not keep it.
    public static let any = "*"

    /// What a level that drops `dimension` stores in its place: ``any``, or `false` for a
    /// boolean dimension.
    public static func anyValue(of dimension: QueryDimension) -> String {
        dimension.values == .boolean ? "false" : any
    }

    /// A key from every dimension's value, in ``QueryDimension/all`` order.
    public init(bucketStart: Int64, values: [String]) {
        precondition(values.count == QueryDimension.all.count, "a value for every dimension")
        self.bucketStart = bucketStart
        self.values = values
    }

    /// A key from a value per dimension (`"true"`/`"false"` for a boolean dimension); a
    /// dimension left out holds ``anyValue(of:)``, as in a level that drops it.
    public init(bucketStart: Int64, _ values: [QueryDimension: String]) {
        self.bucketStart = bucketStart
        self.values = QueryDimension.all.map { values[$0] ?? Self.anyValue(of: $0) }
    }

    /// The key of a visit's facts: every dimension's value as ``QueryDimension/read`` gives
    /// it (before any cardinality limit folds it).
    public init(bucketStart: Int64, facts: VisitFacts) {
        self.bucketStart = bucketStart
        values = QueryDimension.all.map { $0.read(facts) }
    }

    /// The value of `dimension` as text.
    public subscript(dimension: QueryDimension) -> String {
        get { dimension.position.map { values[$0] } ?? "" }
        set { if let index = dimension.position { values[index] = newValue } }
    }

    /// The screen's name.
    public var screen: String { self[.screen] }

    /// Equal when the buckets are and every value has the same bytes, as the stores
    /// compare keys (``StoredText``): `String`'s canonical equivalence would merge a
    /// visit into another spelling's row.
    public static func == (lhs: RollupKey, rhs: RollupKey) -> Bool {
        lhs.bucketStart == rhs.bucketStart && lhs.values.count == rhs.values.count
            && zip(lhs.values, rhs.values).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    /// Hashes the bucket and each value's bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bucketStart)
        for value in values { StoredText.hashBytes(of: value, into: &hasher) }
    }
}

extension QueryDimension {
    /// The position of the dimension in ``QueryDimension/all``: where keys and stored
    /// events keep its value (compared by name: small strings compare in place).
    var position: Int? {
        QueryDimension.all.firstIndex { $0.queryName == queryName }
    }
}

/// The levels the collector keeps rollups at. Every visit is added to all of them in
/// the same transaction; a query reads the coarsest level that can answer it.
public enum RollupLevel: String, CaseIterable, Sendable, Hashable {
    /// Hour × screen × every dimension: filtered hourly series and partial days.
    case hourly
    /// Day × screen × every dimension: filtered queries over whole days.
    case daily
    /// Hour × screen, dimensions merged: unfiltered hourly series and partial days.
    case screenHourly
    /// Day × screen, dimensions merged: unfiltered queries over whole days.
    case screenDaily

    /// Bucket length in seconds.
    public var bucketSeconds: Int64 { self == .hourly || self == .screenHourly ? 3600 : 86_400 }

    /// Whether the level keeps the rollup dimensions' values (``QueryDimension/rollupDimensions``).
    public var keepsDimensions: Bool { self == .hourly || self == .daily }

    /// The key of this level that an hourly key adds to.
    public func key(for hourly: RollupKey) -> RollupKey {
        var key = hourly
        key.bucketStart = Self.floor(hourly.bucketStart, to: bucketSeconds)
        if !keepsDimensions {
            for dimension in QueryDimension.rollupDimensions { key[dimension] = RollupKey.anyValue(of: dimension) }
        }
        return key
    }

    /// `value` rounded down to a multiple of `step`.
    package static func floor(_ value: Int64, to step: Int64) -> Int64 {
        let remainder = value % step
        return remainder < 0 ? value - remainder - step : value - remainder
    }

    /// Groups hourly values into this level's keys.
    public func regroup(_ hourly: [RollupKey: RollupValue]) -> [RollupKey: RollupValue] {
        guard self != .hourly else { return hourly }
        var result: [RollupKey: RollupValue] = [:]
        for (key, value) in hourly { result[self.key(for: key), default: RollupValue()].merge(value) }
        return result
    }
}

/// One read of a rollup level over a time range, as the store plans a query.
public struct RollupRead: Sendable, Hashable {
    /// The level to read.
    public var level: RollupLevel
    /// First bucket start to include, Unix seconds.
    public var from: Int64
    /// Bucket starts before this, Unix seconds.
    public var to: Int64
    /// The declared tag whose rollups to read (``RollupLevel/hourly`` or
    /// ``RollupLevel/daily`` of that tag), or `nil` for the dimension rollups.
    public var tagKey: String? = nil

    /// The reads that cover `[from, to)` with the fewest rows: whole UTC days from a
    /// daily level, the hours before the first and after the last whole day from an
    /// hourly level; the screen levels when no dimension is filtered or grouped, the
    /// levels with every dimension otherwise; a declared tag's levels when a tag is
    /// filtered or grouped by (``AggregateQuery/tagRollup``). `from` is rounded down to its
    /// hour. Hourly series read only an hourly level.
    public static func plan(for query: AggregateQuery) -> [RollupRead] {
        let tagKey = query.tagRollup
        return levelPlan(for: query).map { read in
            var read = read
            read.tagKey = tagKey
            return read
        }
    }

    private static func levelPlan(for query: AggregateQuery) -> [RollupRead] {
        let hourFrom = RollupLevel.floor(Int64(query.filter.from.rounded(.down)), to: 3600)
        let end = Int64(query.filter.to.rounded(.up))
        guard end > hourFrom else { return [] }
        let needsDimensions = query.filter.filtersDimensions || query.dimension != nil || query.tagKey != nil
        let hourly: RollupLevel = needsDimensions ? .hourly : .screenHourly
        let daily: RollupLevel = needsDimensions ? .daily : .screenDaily
        guard query.interval != .hour else { return [RollupRead(level: hourly, from: hourFrom, to: end)] }
        let dayFrom = RollupLevel.floor(hourFrom + 86_399, to: 86_400)
        let dayTo = RollupLevel.floor(end, to: 86_400)
        guard dayTo > dayFrom else { return [RollupRead(level: hourly, from: hourFrom, to: end)] }
        var reads = [RollupRead(level: daily, from: dayFrom, to: dayTo)]
        if hourFrom < dayFrom { reads.append(RollupRead(level: hourly, from: hourFrom, to: dayFrom)) }
        if dayTo < end { reads.append(RollupRead(level: hourly, from: dayTo, to: end)) }
        return reads
    }
}
