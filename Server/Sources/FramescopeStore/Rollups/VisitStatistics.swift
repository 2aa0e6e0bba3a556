import FramescopeCore

/// The per-visit figures the collector keeps statistics for: the entries of Core's
/// vocabulary of figures that have a ``Figure/ratio`` (``Figure/withRatio``), each a ratio of
/// two sums, so the fleet value is Σ numerator / Σ denominator over the visits, and the
/// per-visit values give the spread (confidence intervals, median, p90).
///
/// The raw value is the figure's name in JSON, SQL and on the dashboard (``Figure/name``).
/// SQLite's rollup rows store each figure's statistics under this name (not the case's
/// position, so cases may be reordered or added freely); renaming a case needs a migration.
/// ClickHouse's rows store them by ``storageID`` (the figure's ``Figure/Ratio/storageID``)
/// at the places its frozen layout gives (`VisitColumns.Layout`): a new figure with a ratio
/// takes the next unused id, a case here and a new layout version.
public enum VisitMetric: String, CaseIterable, Sendable, Codable, Hashable {
    /// Hitch time per second of the whole visit (ms/s): ``Figure/hitchRatio``.
    case hitchRatio
    /// Hitch time per second while scrolling or animating (ms/s): ``Figure/motionHitchRatio``.
    case motionHitchRatio = "motion.hitchRatio"
    /// Hang time per hour (s/h): ``Figure/hangRate``.
    case hangRate
    /// Frames per second: ``Figure/averageFPS``.
    case averageFPS
    /// Frozen frames per 1 000 frames: ``Figure/frozenFramesPerThousand``.
    case frozenFramesPerThousand

    /// The figure of the vocabulary this statistic keeps (its name is the raw value).
    public var figure: Figure {
        switch self {
        case .hitchRatio: .hitchRatio
        case .motionHitchRatio: .motionHitchRatio
        case .hangRate: .hangRate
        case .averageFPS: .averageFPS
        case .frozenFramesPerThousand: .frozenFramesPerThousand
        }
    }

    /// The ratio the statistics sum: the figure's (every case's figure has one; a test holds
    /// the cases to ``Figure/withRatio``).
    var ratio: Figure.Ratio {
        guard let ratio = figure.ratio else { preconditionFailure("\(rawValue) is kept per visit but its figure has no ratio") }
        return ratio
    }

    /// The figure's permanent storage id, like a protobuf field number: how stored layouts
    /// that do not spell out names (the ClickHouse store's `VisitColumns.Layout`) refer to
    /// it; the registry's ``Figure/Ratio/storageID``. Never changed or reused, whatever the
    /// case's name or position; a new figure takes the next unused id (6).
    public var storageID: Int { ratio.storageID }

    /// The figure whose ``storageID`` is `storageID`, or `nil` when none has it (a figure
    /// a later release added).
    public init?(storageID: Int) {
        guard let metric = Self.allCases.first(where: { $0.storageID == storageID }) else { return nil }
        self = metric
    }

    /// The unit the value is in, as printed after numbers: the figure's.
    public var unit: String { figure.unit }

    /// Which way is better: the figure's.
    public var direction: Metric.Direction { figure.direction }

    /// The visit's numerator and denominator for this figure, or `nil` when the visit
    /// has none of the denominator (no frames, or no motion for the motion figure).
    public func parts(whole: FrameReport, motion: FrameReport?) -> (numerator: Double, denominator: Double)? {
        figure.parts(whole: whole, motion: motion)
    }
}

/// Sums over visits of one ratio figure y/x that give its value (Σy/Σx), the
/// standard error of that value, and the distribution of per-visit values.
///
/// All fields add when two sets of visits merge, so rollups keep them exactly.
public struct RatioStatistics: Sendable, Hashable, Codable {
    /// Visits that had a denominator.
    public var visits: Int = 0
    /// Σx, the denominators.
    public var sumX: Double = 0
    /// Σy, the numerators.
    public var sumY: Double = 0
    /// Σx².
    public var sumXX: Double = 0
    /// Σy².
    public var sumYY: Double = 0
    /// Σxy.
    public var sumXY: Double = 0
    /// Per-visit values (y/x) that were exactly zero.
    public var zeroValues: Int = 0
    /// Per-visit values above zero, log-bucketed (the frame-duration scheme, relative error ≤ 0.79 %).
    public var positiveValues = DurationHistogram()

    /// No visits.
    public init() {}

    /// Adds one visit's numerator `y` and denominator `x` (> 0).
    public mutating func add(numerator y: Double, denominator x: Double) {
        guard x > 0, x.isFinite, y.isFinite else { return }
        visits += 1
        sumX += x
        sumY += y
        sumXX += x * x
        sumYY += y * y
        sumXY += x * y
        let value = y / x
        if value <= 0 { zeroValues += 1 } else { positiveValues.record(seconds: value) }
    }

    /// Adds every visit of `other`.
    public mutating func merge(_ other: RatioStatistics) {
        visits += other.visits
        sumX += other.sumX
        sumY += other.sumY
        sumXX += other.sumXX
        sumYY += other.sumYY
        sumXY += other.sumXY
        zeroValues += other.zeroValues
        positiveValues.merge(other.positiveValues)
    }

    /// Σy / Σx, or `nil` without visits.
    public var value: Double? { sumX > 0 ? sumY / sumX : nil }

    /// The standard error of ``value`` with visits as the sampling unit (the delta
    /// method for a ratio estimator): √(Σ(yᵢ − R·xᵢ)² / (n(n−1)·x̄²)), or `nil` with
    /// fewer than two visits.
    public var standardError: Double? {
        guard visits >= 2, let ratio = value else { return nil }
        let n = Double(visits)
        let residualSquares = max(0, sumYY - 2 * ratio * sumXY + ratio * ratio * sumXX)
        let meanX = sumX / n
        return (residualSquares / (n * (n - 1) * meanX * meanX)).squareRoot()
    }

    /// The per-visit value at quantile `q` (0.5 = median, 0.9 = p90; nearest rank),
    /// or `nil` without visits.
    public func visitValue(atQuantile q: Double) -> Double? {
        let total = zeroValues + positiveValues.count
        guard total > 0 else { return nil }
        let clamped = q.isNaN ? 0 : min(max(q, 0), 1)
        let rank = max(1, Int((clamped * Double(total)).rounded(.up)))
        if rank <= zeroValues { return 0 }
        let positiveRank = rank - zeroValues
        return positiveValues.value(atQuantile: Double(positiveRank) / Double(positiveValues.count))
    }

    enum CodingKeys: String, CodingKey {
        case visits, sumX, sumY, sumXX, sumYY, sumXY, zeroValues, positiveValues
    }

    /// Decodes the sums and the `[[index, count], …]` buckets, checking the buckets.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        visits = try container.decode(Int.self, forKey: .visits)
        sumX = try container.decode(Double.self, forKey: .sumX)
        sumY = try container.decode(Double.self, forKey: .sumY)
        sumXX = try container.decode(Double.self, forKey: .sumXX)
        sumYY = try container.decode(Double.self, forKey: .sumYY)
        sumXY = try container.decode(Double.self, forKey: .sumXY)
        zeroValues = try container.decode(Int.self, forKey: .zeroValues)
        let pairs = try container.decode([[Int]].self, forKey: .positiveValues)
        do {
            positiveValues = try DurationHistogram(buckets: pairs.map { pair in
                DurationHistogram.Bucket(index: pair.first ?? -1, count: pair.count == 2 ? pair[1] : 0)
            })
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .positiveValues, in: container, debugDescription: error.description)
        }
    }

    /// Encodes the sums and the non-empty buckets as `[[index, count], …]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(visits, forKey: .visits)
        try container.encode(sumX, forKey: .sumX)
        try container.encode(sumY, forKey: .sumY)
        try container.encode(sumXX, forKey: .sumXX)
        try container.encode(sumYY, forKey: .sumYY)
        try container.encode(sumXY, forKey: .sumXY)
        try container.encode(zeroValues, forKey: .zeroValues)
        try container.encode(positiveValues.buckets.map { [$0.index, $0.count] }, forKey: .positiveValues)
    }
}

/// The ``RatioStatistics`` of every ``VisitMetric`` over a set of visits.
public struct VisitStatistics: Sendable, Hashable {
    /// Statistics per figure; a figure no visit had is absent.
    public var metrics: [VisitMetric: RatioStatistics] = [:]

    /// No visits.
    public init() {}

    /// The statistics of one visit.
    public init(whole: FrameReport, motion: FrameReport?) {
        for metric in VisitMetric.allCases {
            guard let parts = metric.parts(whole: whole, motion: motion) else { continue }
            var statistics = RatioStatistics()
            statistics.add(numerator: parts.numerator, denominator: parts.denominator)
            metrics[metric] = statistics
        }
    }

    /// Adds every visit of `other`.
    public mutating func merge(_ other: VisitStatistics) {
        for (metric, statistics) in other.metrics {
            metrics[metric, default: RatioStatistics()].merge(statistics)
        }
    }

    /// The statistics of `metric`, empty when no visit had it.
    public subscript(metric: VisitMetric) -> RatioStatistics {
        metrics[metric] ?? RatioStatistics()
    }
}

extension VisitStatistics {
    /// The statistics in the compact binary form stored in rollup rows: the number of
    /// figures present, then per figure its stable name (``VisitMetric``'s raw value, as
    /// UTF-8 with its length), the visit count, the five sums as doubles, the zero count
    /// and the delta-coded histogram buckets.
    public func binaryEncoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.unsigned(UInt64(metrics.count))
        for metric in VisitMetric.allCases {
            guard let statistics = metrics[metric] else { continue }
            writer.name(metric.rawValue)
            writer.unsigned(UInt64(statistics.visits))
            for sum in [statistics.sumX, statistics.sumY, statistics.sumXX, statistics.sumYY, statistics.sumXY] { writer.double(sum) }
            writer.unsigned(UInt64(statistics.zeroValues))
            writer.pairs(statistics.positiveValues.buckets.map { ($0.index, $0.count) })
        }
        return writer.bytes
    }

    /// Each figure's stored name as UTF-8, in ``VisitMetric/allCases`` order.
    private static let storedNames: [[UInt8]] = VisitMetric.allCases.map { Array($0.rawValue.utf8) }

    /// Decodes ``binaryEncoded()`` output.
    /// - Throws: ``BinaryReportError`` for short, malformed or out-of-range bytes, a name
    ///   that is no ``VisitMetric``, or a figure given twice.
    public init(binary bytes: [UInt8]) throws(BinaryReportError) {
        var reader = BinaryReader(bytes: bytes)
        let count = try reader.count()
        guard count <= VisitMetric.allCases.count else { throw BinaryReportError("too many statistics") }
        for _ in 0..<count {
            let name = try reader.name(maximumLength: 64)
            guard let index = Self.storedNames.firstIndex(where: { $0.elementsEqual(name) }) else {
                throw BinaryReportError("unknown statistic \(String(decoding: name, as: UTF8.self))")
            }
            let metric = VisitMetric.allCases[index]
            guard metrics[metric] == nil else { throw BinaryReportError("statistic \(metric.rawValue) given twice") }
            var statistics = RatioStatistics()
            statistics.visits = try reader.count()
            statistics.sumX = try reader.double()
            statistics.sumY = try reader.double()
            statistics.sumXX = try reader.double()
            statistics.sumYY = try reader.double()
            statistics.sumXY = try reader.double()
            statistics.zeroValues = try reader.count()
            statistics.positiveValues = try reader.histogram()
            metrics[metric] = statistics
        }
        guard reader.isAtEnd else { throw BinaryReportError("trailing bytes after the statistics") }
    }
}
