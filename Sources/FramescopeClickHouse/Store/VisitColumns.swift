import FramescopeCollector
import FramescopeCore

/// One visit's ``RollupValue`` as the raw event row's `event_*` columns, laid out so that
/// the engine's element-wise aggregates merge rows exactly as ``RollupValue/merge(_:)``
/// does (docs/dev-notes/clickhouse-schema.md §1), and the merged columns back as a
/// ``RollupValue``.
///
/// - `counts` (`sumForEach`): visits; the whole report's 16 counters, each nanosecond total
///   as whole seconds and the nanoseconds left (both sums stay exact where a 64-bit sum of
///   nanoseconds would wrap after 584 years); visits with a motion report; the motion
///   report's 16 counters; then each ``VisitMetric``'s visits and zero values.
/// - `sums` (`sumForEach`): each ``VisitMetric``'s Σx, Σy, Σx², Σy², Σxy.
/// - `mins` (`minForEach`): the whole and motion shortest frame, seconds (+∞ for none).
/// - `maxes` (`maxForEach`): the whole and motion longest frame, seconds (−∞ for none), then
///   their most frames dropped at once.
/// - tallies (`sumMap`): every histogram and tally as `kind << 32 | key` → count.
public struct VisitColumns: Sendable, Hashable {
    /// The counters (44).
    public var counts: [UInt64]
    /// The statistics' sums (25).
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

    /// Number of `counts` elements: visits, 16 whole counters, motion visits, 16 motion
    /// counters, and two per ``VisitMetric``.
    public static let countElements = 1 + 16 + 1 + 16 + 2 * VisitMetric.allCases.count

    /// The tally kinds, the high 32 bits of a tally key.
    enum TallyKind: UInt64 {
        case windowFPS = 0, motionWindowFPS, refreshRates, motionRefreshRates, frameDurations, motionFrameDurations
        /// The first of one kind per ``VisitMetric`` (its per-visit values' buckets).
        case statistics = 6
    }

    /// The columns of one visit.
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
    public init(value: RollupValue) throws(VisitColumnsError) {
        let statistics = value.statistics
        counts = [UInt64(clamping: value.visits)]
        counts.reserveCapacity(Self.countElements)
        try Self.appendCounters(of: value.report, to: &counts)
        counts.append(value.motion == nil ? 0 : UInt64(clamping: max(1, value.visits)))
        try Self.appendCounters(of: value.motion ?? FrameReport(), to: &counts)
        for metric in VisitMetric.allCases { counts.append(UInt64(clamping: statistics[metric].visits)) }
        for metric in VisitMetric.allCases { counts.append(UInt64(clamping: statistics[metric].zeroValues)) }
        sums = []
        for metric in VisitMetric.allCases {
            let part = statistics[metric]
            sums += [part.sumX, part.sumY, part.sumXX, part.sumYY, part.sumXY]
        }
        mins = [value.report.minFrameDuration ?? .infinity, value.motion?.minFrameDuration ?? .infinity]
        maxes = [value.report.maxFrameDuration ?? -.infinity, value.motion?.maxFrameDuration ?? -.infinity,
                 Double(value.report.maxDroppedFrames), Double(value.motion?.maxDroppedFrames ?? 0)]
        var keys: [UInt64] = []
        var values: [UInt64] = []
        func add(_ kind: UInt64, _ key: Int, _ count: Int) throws(VisitColumnsError) {
            guard key >= 0, key < 1 << 32 else { throw VisitColumnsError("tally key \(key) is outside 0..<2³²") }
            keys.append(kind << 32 | UInt64(key))
            values.append(UInt64(clamping: count))
        }
        for (report, offset) in [(value.report, UInt64(0)), (value.motion ?? FrameReport(), 1)] {
            for entry in report.windowFPS.entries { try add(TallyKind.windowFPS.rawValue + offset, entry.key, entry.count) }
            for entry in report.refreshRates.entries { try add(TallyKind.refreshRates.rawValue + offset, entry.key, entry.count) }
            for bucket in report.frameDurations.buckets { try add(TallyKind.frameDurations.rawValue + offset, bucket.index, bucket.count) }
        }
        for (position, metric) in VisitMetric.allCases.enumerated() {
            for bucket in statistics[metric].positiveValues.buckets {
                try add(TallyKind.statistics.rawValue + UInt64(position), bucket.index, bucket.count)
            }
        }
        tallyKeys = keys
        tallyCounts = values
        band = value.report.stabilityBand
    }

    /// A report's 16 counters in `counts` order.
    private static func appendCounters(of report: FrameReport, to counts: inout [UInt64]) throws(VisitColumnsError) {
        func split(_ total: NanosecondTotal) throws(VisitColumnsError) -> [UInt64] {
            guard total.high == 0 else { throw VisitColumnsError("a nanosecond total of one visit reaches 2⁶⁴ ns") }
            return [total.low / 1_000_000_000, total.low % 1_000_000_000]
        }
        counts.append(UInt64(clamping: report.frames))
        counts += try split(report.durationNanoseconds)
        counts.append(UInt64(clamping: report.firstFrames))
        counts += try split(report.firstDurationNanoseconds)
        counts.append(UInt64(clamping: report.droppedFrames))
        counts.append(UInt64(clamping: report.dropEvents))
        counts += try split(report.hitchTimeNanoseconds)
        counts.append(UInt64(clamping: report.hangs))
        counts += try split(report.hangTimeNanoseconds)
        counts.append(UInt64(clamping: report.slowFrames))
        counts.append(UInt64(clamping: report.frozenFrames))
        counts.append(UInt64(clamping: report.rejectedTicks))
    }

    /// The ``RollupValue`` of merged columns: what `sumForEachMerge`, `minForEachMerge`,
    /// `maxForEachMerge`, `sumMapMerge`, `groupUniqArrayMerge` and `argMinIfMerge` return for
    /// a group of rows. Shorter arrays (rows written before an element was appended) read
    /// as zeros and "none".
    /// - Parameter deviceCodes: The device sketch's `register·64 + rank` codes.
    /// - Throws: ``VisitColumnsError`` for sums no set of visits could have.
    public static func value(counts: [UInt64], sums: [Double], mins: [Double], maxes: [Double], tallyKeys: [UInt64], tallyCounts: [UInt64],
                             deviceCodes: [UInt16], band: Double) throws(VisitColumnsError) -> RollupValue {
        func count(_ index: Int) -> Int { index < counts.count ? Int(clamping: counts[index]) : 0 }
        func element(_ array: [Double], _ index: Int, _ none: Double) -> Double { index < array.count ? array[index] : none }
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
        func total(_ index: Int) -> NanosecondTotal {
            let seconds = index < counts.count ? counts[index] : 0
            let rest = index + 1 < counts.count ? counts[index + 1] : 0
            let product = seconds.multipliedFullWidth(by: 1_000_000_000)
            return NanosecondTotal(high: product.high, low: product.low) + NanosecondTotal(rest)
        }
        func report(base: Int, extremes: Int, offset: UInt64) throws(VisitColumnsError) -> FrameReport {
            var sums = FrameReport.StoredSums()
            sums.frames = count(base)
            sums.durationNanoseconds = total(base + 1)
            sums.firstFrames = count(base + 3)
            sums.firstDurationNanoseconds = total(base + 4)
            sums.droppedFrames = count(base + 6)
            sums.dropEvents = count(base + 7)
            sums.hitchTimeNanoseconds = total(base + 8)
            sums.hangs = count(base + 10)
            sums.hangTimeNanoseconds = total(base + 11)
            sums.slowFrames = count(base + 13)
            sums.frozenFrames = count(base + 14)
            sums.rejectedTicks = count(base + 15)
            let low = element(mins, extremes, .infinity)
            let high = element(maxes, extremes, -.infinity)
            sums.minFrameDuration = low.isFinite ? low : nil
            sums.maxFrameDuration = high.isFinite ? high : nil
            let dropped = element(maxes, extremes + 2, 0)
            sums.maxDroppedFrames = dropped.isFinite && dropped >= 0 && dropped < 9.0e18 ? Int(dropped) : 0
            sums.frameDurations = try histogram(TallyKind.frameDurations.rawValue + offset)
            sums.windowFPS = try tally(TallyKind.windowFPS.rawValue + offset)
            sums.refreshRates = try tally(TallyKind.refreshRates.rawValue + offset)
            sums.stabilityBand = band > 0 && band.isFinite ? band : 0.2
            do { return try FrameReport(storedSums: sums) } catch { throw VisitColumnsError("merged report: \(error)") }
        }
        let whole = try report(base: 1, extremes: 0, offset: 0)
        let motion = count(17) > 0 ? try report(base: 18, extremes: 1, offset: 1) : nil
        var statistics = VisitStatistics()
        for (position, metric) in VisitMetric.allCases.enumerated() {
            let visits = count(34 + position)
            guard visits > 0 else { continue }
            var part = RatioStatistics()
            part.visits = visits
            part.zeroValues = count(34 + VisitMetric.allCases.count + position)
            part.sumX = element(sums, 5 * position, 0)
            part.sumY = element(sums, 5 * position + 1, 0)
            part.sumXX = element(sums, 5 * position + 2, 0)
            part.sumYY = element(sums, 5 * position + 3, 0)
            part.sumXY = element(sums, 5 * position + 4, 0)
            part.positiveValues = try histogram(TallyKind.statistics.rawValue + UInt64(position))
            statistics.metrics[metric] = part
        }
        let devices: DeviceSketch
        do {
            devices = try DeviceSketch(registerRanks: deviceCodes.map { (Int($0 >> 6), UInt8($0 & 63)) })
        } catch { throw VisitColumnsError("device sketch: \(error)") }
        return RollupValue(visits: count(0), report: whole, motion: motion, statistics: statistics, devices: devices)
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
