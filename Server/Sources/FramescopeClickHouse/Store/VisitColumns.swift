import FramescopeCore
import FramescopeStore

/// One visit's ``RollupValue`` as the raw event row's `event_*` columns, laid out so that
/// the engine's element-wise aggregates merge rows exactly as ``RollupValue/merge(_:)``
/// does (docs/dev-notes/clickhouse-schema.md §1), and the merged columns back as a
/// ``RollupValue``.
///
/// What each element holds is a frozen ``Layout`` (``Layout/v1``: the table in
/// docs/dev-notes/clickhouse-schema.md, "Layout of the event arrays"), which names figures
/// by their permanent storage ids, so adding a ``VisitMetric`` or a report counter never
/// moves what stored rows hold:
/// - `counts` (`sumForEach`): visits; the whole report's counters, each nanosecond total
///   as whole seconds and the nanoseconds left (both sums stay exact where a 64-bit sum of
///   nanoseconds would wrap after 584 years); visits with a motion report; the motion
///   report's counters; then each statistic's visits and zero values.
/// - `sums` (`sumForEach`): each statistic's Σx, Σy, Σx², Σy², Σxy.
/// - `mins` (`minForEach`): the whole and motion shortest frame, seconds (+∞ for none).
/// - `maxes` (`maxForEach`): the whole and motion longest frame, seconds (−∞ for none), then
///   their most frames dropped at once.
/// - tallies (`sumMap`): every histogram and tally as `kind << 32 | key` → count, each
///   distribution under the layout's kind for it.
public struct VisitColumns: Sendable, Hashable {
    /// The counters (44 in layout v1).
    public var counts: [UInt64]
    /// The statistics' sums (25 in layout v1).
    public var sums: [Double]
    /// The shortest frames, seconds (2).
    public var mins: [Double]
    /// The longest frames, seconds, and the most dropped at once (4).
    public var maxes: [Double]
    /// Tally keys, `kind << 32 | key`.
    public var tallyKeys: [UInt64]
    /// Their counts.
    public var tallyCounts: [UInt64]
    /// The whole report's stability band, a fraction.
    public var band: Double

    /// Number of `counts` elements the ``Layout/current`` layout writes.
    public static var countElements: Int { Layout.current.counts.count }

    /// What a row holds, with statistics by storage id (``VisitMetric/storageID``) rather
    /// than by ``VisitMetric``, so that a layout may carry a statistic this build has no
    /// case for (a later release's, or a test's).
    public struct Contents: Sendable, Hashable {
        /// The visits the row stands for.
        public var visits: Int
        /// The merge of their whole reports.
        public var report: FrameReport
        /// The merge of their motion reports, `nil` when none moved.
        public var motion: FrameReport?
        /// Each statistic's sums, by storage id; a statistic no visit had is absent.
        public var statistics: [Int: RatioStatistics]

        /// The given figures.
        public init(visits: Int, report: FrameReport, motion: FrameReport?, statistics: [Int: RatioStatistics]) {
            self.visits = visits
            self.report = report
            self.motion = motion
            self.statistics = statistics
        }

        /// The figures of `value` (its devices are not carried).
        public init(_ value: RollupValue) {
            visits = value.visits
            report = value.report
            motion = value.motion
            statistics = [:]
            for (metric, part) in value.statistics.metrics { statistics[metric.storageID] = part }
        }

        /// The rollup value of these figures and `devices`; statistics whose storage id no
        /// ``VisitMetric`` of this build has are left out.
        public func rollupValue(devices: DeviceSketch = DeviceSketch()) -> RollupValue {
            var known = VisitStatistics()
            for (id, part) in statistics {
                guard let metric = VisitMetric(storageID: id) else { continue }
                known.metrics[metric] = part
            }
            return RollupValue(visits: visits, report: report, motion: motion, statistics: known, devices: devices)
        }
    }

    /// The given arrays (a merged row, as the engine returns it).
    public init(counts: [UInt64], sums: [Double], mins: [Double], maxes: [Double], tallyKeys: [UInt64], tallyCounts: [UInt64], band: Double) {
        self.counts = counts
        self.sums = sums
        self.mins = mins
        self.maxes = maxes
        self.tallyKeys = tallyKeys
        self.tallyCounts = tallyCounts
        self.band = band
    }

    /// The columns of one visit, in the ``Layout/current`` layout.
    /// - Throws: ``VisitColumnsError`` when a nanosecond total reaches 2⁶⁴ ns (585 years) or a
    ///   tally key falls outside 0..<2³²: values ingest validation refuses long before.
    public init(visit event: ScreenVisitEvent) throws(VisitColumnsError) {
        try self.init(value: RollupValue(visit: event))
    }

    /// The columns of visits already merged (as one raw row standing for all of them: the
    /// engine's sums are linear, so the rollups come out as if each had been inserted);
    /// their devices are not carried.
    /// - Throws: ``VisitColumnsError`` when a nanosecond total reaches 2⁶⁴ ns or a tally key
    ///   falls outside 0..<2³².
    public init(value: RollupValue, layout: Layout = .current) throws(VisitColumnsError) {
        try self.init(contents: Contents(value), layout: layout)
    }

    /// The columns of `contents` in `layout`; figures the layout has no element for are not
    /// written (``Layout/current`` has one for every figure of this build).
    /// - Throws: ``VisitColumnsError`` when a nanosecond total reaches 2⁶⁴ ns or a tally key
    ///   falls outside 0..<2³².
    /// - Complexity: O(*e* + *t*) for *e* layout elements and *t* tally entries.
    public init(contents: Contents, layout: Layout) throws(VisitColumnsError) {
        let empty = FrameReport()
        func report(_ part: Part) -> FrameReport { part == .whole ? contents.report : contents.motion ?? empty }
        func statistics(_ id: Int) -> RatioStatistics { contents.statistics[id] ?? RatioStatistics() }
        counts = []
        counts.reserveCapacity(layout.counts.count)
        for element in layout.counts {
            switch element {
            case .visits:
                counts.append(UInt64(clamping: contents.visits))
            case .motionVisits:
                counts.append(contents.motion == nil ? 0 : UInt64(clamping: max(1, contents.visits)))
            case .counter(let part, let counter):
                counts.append(UInt64(clamping: report(part)[count: counter]))
            case .seconds(let part, let counter):
                counts.append(try Self.low(report(part)[nanoseconds: counter]) / 1_000_000_000)
            case .nanosecondsLeft(let part, let counter):
                counts.append(try Self.low(report(part)[nanoseconds: counter]) % 1_000_000_000)
            case .statisticVisits(let id):
                counts.append(UInt64(clamping: statistics(id).visits))
            case .statisticZeroValues(let id):
                counts.append(UInt64(clamping: statistics(id).zeroValues))
            case .statisticSum, .shortestFrame, .longestFrame:
                preconditionFailure("\(element) in counts")
            }
        }
        sums = layout.sums.map { element in
            guard case .statisticSum(let id, let sum) = element else { preconditionFailure("\(element) in sums") }
            let part = statistics(id)
            switch sum {
            case .x: return part.sumX
            case .y: return part.sumY
            case .xx: return part.sumXX
            case .yy: return part.sumYY
            case .xy: return part.sumXY
            }
        }
        mins = layout.mins.map { element in
            guard case .shortestFrame(let part) = element else { preconditionFailure("\(element) in mins") }
            return (part == .whole ? contents.report : contents.motion)?.minFrameDuration ?? .infinity
        }
        maxes = layout.maxes.map { element in
            switch element {
            case .longestFrame(let part): (part == .whole ? contents.report : contents.motion)?.maxFrameDuration ?? -.infinity
            case .counter(let part, let counter): Double(report(part)[count: counter])
            default: preconditionFailure("\(element) in maxes")
            }
        }
        var keys: [UInt64] = []
        var values: [UInt64] = []
        func add(_ kind: UInt64, _ key: Int, _ count: Int) throws(VisitColumnsError) {
            guard key >= 0, key < 1 << 32 else { throw VisitColumnsError("tally key \(key) is outside 0..<2³²") }
            keys.append(kind << 32 | UInt64(key))
            values.append(UInt64(clamping: count))
        }
        for tally in layout.tallies {
            switch tally.distribution {
            case .windowFPS(let part):
                for entry in report(part).windowFPS.entries { try add(tally.kind, entry.key, entry.count) }
            case .refreshRates(let part):
                for entry in report(part).refreshRates.entries { try add(tally.kind, entry.key, entry.count) }
            case .frameDurations(let part):
                for bucket in report(part).frameDurations.buckets { try add(tally.kind, bucket.index, bucket.count) }
            case .statisticValues(let id):
                for bucket in statistics(id).positiveValues.buckets { try add(tally.kind, bucket.index, bucket.count) }
            }
        }
        tallyKeys = keys
        tallyCounts = values
        band = contents.report.stabilityBand
    }

    /// The low 64 bits of one visit's nanosecond total.
    private static func low(_ total: NanosecondTotal) throws(VisitColumnsError) -> UInt64 {
        guard total.high == 0 else { throw VisitColumnsError("a nanosecond total of one visit reaches 2⁶⁴ ns") }
        return total.low
    }

    /// The ``RollupValue`` of merged columns: what `sumForEachMerge`, `minForEachMerge`,
    /// `maxForEachMerge`, `sumMapMerge`, `groupUniqArrayMerge` and `argMinIfMerge` return for
    /// a group of rows. Rows written in an earlier layout have shorter arrays, whose missing
    /// elements read as zeros and "none"; elements past the layout's (a later release's) and
    /// statistics this build has no ``VisitMetric`` for are ignored.
    /// - Parameter deviceCodes: The device sketch's `register·64 + rank` codes.
    /// - Parameter layout: The layout the rows were written in, or a later one.
    /// - Throws: ``VisitColumnsError`` for sums no set of visits could have.
    public static func value(counts: [UInt64], sums: [Double], mins: [Double], maxes: [Double], tallyKeys: [UInt64], tallyCounts: [UInt64],
                             deviceCodes: [UInt16], band: Double, layout: Layout = .current) throws(VisitColumnsError) -> RollupValue {
        let contents = try VisitColumns(counts: counts, sums: sums, mins: mins, maxes: maxes, tallyKeys: tallyKeys, tallyCounts: tallyCounts, band: band)
            .contents(layout: layout)
        let devices: DeviceSketch
        do {
            devices = try DeviceSketch(registerRanks: deviceCodes.map { (Int($0 >> 6), UInt8($0 & 63)) })
        } catch { throw VisitColumnsError("device sketch: \(error)") }
        return contents.rollupValue(devices: devices)
    }

    /// This row's ``RollupValue`` (without devices) read in `layout`: see
    /// ``value(counts:sums:mins:maxes:tallyKeys:tallyCounts:deviceCodes:band:layout:)``.
    /// - Throws: ``VisitColumnsError`` for sums no set of visits could have.
    public func rollupValue(layout: Layout = .current) throws(VisitColumnsError) -> RollupValue {
        try contents(layout: layout).rollupValue()
    }

    /// What this row (one written or merged) holds, read in `layout`, statistics by storage id.
    /// - Throws: ``VisitColumnsError`` for sums no set of visits could have.
    /// - Complexity: O(*e* + *t* log *t*) for *e* layout elements and *t* tally entries.
    public func contents(layout: Layout) throws(VisitColumnsError) -> Contents {
        var tallies: [UInt64: [(key: Int, count: Int)]] = [:]
        for (key, tallyCount) in zip(tallyKeys, tallyCounts) where tallyCount > 0 {
            tallies[key >> 32, default: []].append((Int(key & 0xFFFF_FFFF), Int(clamping: tallyCount)))
        }
        func histogram(_ kind: UInt64) throws(VisitColumnsError) -> DurationHistogram {
            do {
                return try DurationHistogram(buckets: (tallies[kind] ?? []).sorted { $0.key < $1.key }.map { DurationHistogram.Bucket(index: $0.key, count: $0.count) })
            } catch { throw VisitColumnsError("histogram \(kind): \(error)") }
        }
        func tally(_ kind: UInt64) throws(VisitColumnsError) -> Tally {
            do {
                return try Tally(entries: (tallies[kind] ?? []).sorted { $0.key < $1.key }.map { Tally.Entry(key: $0.key, count: $0.count) })
            } catch { throw VisitColumnsError("tally \(kind): \(error)") }
        }
        var visits = 0
        var motionVisits = 0
        var parts = [FrameReport.StoredSums(), FrameReport.StoredSums()]
        func index(_ part: Part) -> Int { part == .whole ? 0 : 1 }
        var statistics: [Int: RatioStatistics] = [:]
        for (element, value) in zip(layout.counts, counts) {
            switch element {
            case .visits: visits = Int(clamping: value)
            case .motionVisits: motionVisits = Int(clamping: value)
            case .counter(let part, let counter): parts[index(part)][count: counter] = Int(clamping: value)
            case .seconds(let part, let counter):
                let product = value.multipliedFullWidth(by: 1_000_000_000)
                parts[index(part)][nanoseconds: counter] += NanosecondTotal(high: product.high, low: product.low)
            case .nanosecondsLeft(let part, let counter): parts[index(part)][nanoseconds: counter] += NanosecondTotal(value)
            case .statisticVisits(let id): statistics[id, default: RatioStatistics()].visits = Int(clamping: value)
            case .statisticZeroValues(let id): statistics[id, default: RatioStatistics()].zeroValues = Int(clamping: value)
            case .statisticSum, .shortestFrame, .longestFrame: preconditionFailure("\(element) in counts")
            }
        }
        for (element, value) in zip(layout.sums, sums) {
            guard case .statisticSum(let id, let sum) = element else { preconditionFailure("\(element) in sums") }
            switch sum {
            case .x: statistics[id, default: RatioStatistics()].sumX = value
            case .y: statistics[id, default: RatioStatistics()].sumY = value
            case .xx: statistics[id, default: RatioStatistics()].sumXX = value
            case .yy: statistics[id, default: RatioStatistics()].sumYY = value
            case .xy: statistics[id, default: RatioStatistics()].sumXY = value
            }
        }
        for (element, value) in zip(layout.mins, mins) {
            guard case .shortestFrame(let part) = element else { preconditionFailure("\(element) in mins") }
            parts[index(part)].minFrameDuration = value.isFinite ? value : nil
        }
        for (element, value) in zip(layout.maxes, maxes) {
            switch element {
            case .longestFrame(let part): parts[index(part)].maxFrameDuration = value.isFinite ? value : nil
            case .counter(let part, let counter): parts[index(part)][count: counter] = value.isFinite && value >= 0 && value < 9.0e18 ? Int(value) : 0
            default: preconditionFailure("\(element) in maxes")
            }
        }
        var kinds: [Distribution: UInt64] = [:]
        for tallyKind in layout.tallies { kinds[tallyKind.distribution] = tallyKind.kind }
        // Distributions are read only for a report or statistic the row has.
        func report(_ part: Part) throws(VisitColumnsError) -> FrameReport {
            var sums = parts[index(part)]
            if let kind = kinds[.frameDurations(part)] { sums.frameDurations = try histogram(kind) }
            if let kind = kinds[.windowFPS(part)] { sums.windowFPS = try tally(kind) }
            if let kind = kinds[.refreshRates(part)] { sums.refreshRates = try tally(kind) }
            sums.stabilityBand = band > 0 && band.isFinite ? band : 0.2
            do { return try FrameReport(storedSums: sums) } catch { throw VisitColumnsError("merged report: \(error)") }
        }
        let whole = try report(.whole)
        let motion = motionVisits > 0 ? try report(.motion) : nil
        var present: [Int: RatioStatistics] = [:]
        for id in layout.statisticIDs {
            guard var part = statistics[id], part.visits > 0 else { continue }
            if let kind = kinds[.statisticValues(id)] { part.positiveValues = try histogram(kind) }
            present[id] = part
        }
        return Contents(visits: visits, report: whole, motion: motion, statistics: present)
    }
}

/// Columns that cannot hold a visit, or merged columns no set of visits could give.
public struct VisitColumnsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
