import FramescopeCore
import FramescopeStore

/// Where each stored figure sits in the `event_*` arrays: a frozen table per layout
/// version, naming figures by their permanent storage ids (``FrameReport/Counter/id``,
/// ``VisitMetric/storageID``), never by their place in `allCases` or ``FrameReport/counters``.
///
/// A stored row is read with the layout that wrote it or any later one: a later layout is
/// an earlier one with elements appended (``Layout/appending(version:counts:sums:mins:maxes:tallies:)``
/// is the only way to make one), the engine's `…ForEach` aggregates read a shorter array's
/// missing elements as absent, and so an old row reads its appended figures as zeros and
/// "none". The table of layout v1 is in docs/dev-notes/clickhouse-schema.md ("Layout of the
/// event arrays").
extension VisitColumns {
    /// A row's whole-visit report or its motion report.
    public enum Part: Sendable, Hashable, CaseIterable {
        /// The whole visit's report.
        case whole
        /// The report of the visit's frames in motion.
        case motion
    }

    /// One of ``RatioStatistics``' five sums.
    public enum StatisticSum: Sendable, Hashable, CaseIterable {
        /// Σx, the denominators.
        case x
        /// Σy, the numerators.
        case y
        /// Σx².
        case xx
        /// Σy².
        case yy
        /// Σxy.
        case xy
    }

    /// What one element of the `counts`, `sums`, `mins` or `maxes` array holds.
    public enum Element: Sendable, Hashable, CustomStringConvertible {
        /// `counts`: the visits the row stands for.
        case visits
        /// `counts`: the visits that had a motion report (0: the row has none).
        case motionVisits
        /// `counts`: a ``FrameReport/Counter/Kind/count`` counter of a part; `maxes`: a
        /// ``FrameReport/Counter/Kind/maximum`` counter of a part (as a double).
        case counter(Part, FrameReport.Counter)
        /// `counts`: a ``FrameReport/Counter/Kind/nanoseconds`` counter's whole seconds (a
        /// sum of 64-bit nanoseconds would wrap after 584 years; these sums stay exact).
        case seconds(Part, FrameReport.Counter)
        /// `counts`: the nanoseconds of that counter past its whole seconds (below 10⁹ per visit).
        case nanosecondsLeft(Part, FrameReport.Counter)
        /// `mins`: a part's shortest frame, seconds (+∞ for none).
        case shortestFrame(Part)
        /// `maxes`: a part's longest frame, seconds (−∞ for none).
        case longestFrame(Part)
        /// `counts`: the visits that had the statistic with this storage id.
        case statisticVisits(Int)
        /// `counts`: those of them whose value was zero.
        case statisticZeroValues(Int)
        /// `sums`: one of the statistic's sums.
        case statisticSum(Int, StatisticSum)

        /// The element as the layout table in the docs names it: `whole frames (1)`.
        public var description: String {
            switch self {
            case .visits: "visits"
            case .motionVisits: "motion visits"
            case .counter(let part, let counter): "\(part) \(counter)"
            case .seconds(let part, let counter): "\(part) \(counter), whole seconds"
            case .nanosecondsLeft(let part, let counter): "\(part) \(counter), nanoseconds left"
            case .shortestFrame(let part): "\(part) shortest frame, s"
            case .longestFrame(let part): "\(part) longest frame, s"
            case .statisticVisits(let id): "statistic \(id) visits"
            case .statisticZeroValues(let id): "statistic \(id) zero values"
            case .statisticSum(let id, let sum): "statistic \(id) Σ\(sum)"
            }
        }
    }

    /// A distribution kept in the `tallies` column (`sumMap` over `kind << 32 | key`).
    public enum Distribution: Sendable, Hashable, CustomStringConvertible {
        /// A part's ``FrameReport/windowFPS`` (keys in hundredths of FPS).
        case windowFPS(Part)
        /// A part's ``FrameReport/refreshRates`` (keys in whole Hz).
        case refreshRates(Part)
        /// A part's ``FrameReport/frameDurations`` (keys are bucket indexes).
        case frameDurations(Part)
        /// The positive per-visit values of the statistic with this storage id (bucket indexes).
        case statisticValues(Int)

        /// The distribution as the layout table in the docs names it.
        public var description: String {
            switch self {
            case .windowFPS(let part): "\(part) windowFPS"
            case .refreshRates(let part): "\(part) refreshRates"
            case .frameDurations(let part): "\(part) frameDurations"
            case .statisticValues(let id): "statistic \(id) positive values"
            }
        }
    }

    /// A distribution and its tally kind, the high 32 bits of its tally keys.
    public struct TallyKind: Sendable, Hashable {
        /// The distribution.
        public var distribution: Distribution
        /// Its kind, below 2³²: a report's in 0..<6 (v1) or from ``Layout/reportKindsFrom``
        /// upward, a statistic's in ``Layout/statisticKinds``.
        public var kind: UInt64

        /// `distribution` under `kind`.
        public init(_ distribution: Distribution, kind: UInt64) {
            self.distribution = distribution
            self.kind = kind
        }
    }

    /// A frozen layout of the `event_*` arrays: what each element of each array holds and
    /// which tally kind each distribution has.
    ///
    /// ``v1`` is the layout every release until issue 31 wrote, spelled out element by
    /// element; ``current`` is what this release writes and reads. To store a new figure,
    /// declare `static let v2 = v1.appending(version: 2, …)` with its elements (a statistic:
    /// its visits and zero values in `counts`, its five sums, its values' tally kind, the next
    /// free one in ``statisticKinds``; a report counter: its elements for both parts; a report
    /// distribution: kinds from ``reportKindsFrom`` upward), make ``current`` `.v2`, add a
    /// fixture for it, and add its rows to the docs' table.
    public struct Layout: Sendable, Hashable, CustomStringConvertible {
        /// The layout's version.
        public let version: Int
        /// What each `counts` element holds (`sumForEach`, UInt64).
        public let counts: [Element]
        /// What each `sums` element holds (`sumForEach`, Float64).
        public let sums: [Element]
        /// What each `mins` element holds (`minForEach`, Float64).
        public let mins: [Element]
        /// What each `maxes` element holds (`maxForEach`, Float64).
        public let maxes: [Element]
        /// The distributions in the order their tallies are written, with their kinds.
        public let tallies: [TallyKind]

        /// The tally kinds of statistics: v1 gave its five 6–10, and later ones take the
        /// next free kind below 2¹⁶.
        public static let statisticKinds: Range<UInt64> = 6..<(1 << 16)
        /// The first tally kind of report distributions added after v1 (v1's are 0–5).
        public static let reportKindsFrom: UInt64 = 1 << 16

        /// The positions (0-based) of `counts` that `rollups_*_mv` reads for its band
        /// condition (`event_counts[2] + event_counts[5] + event_counts[17] > 0` in
        /// ClickHouse's 1-based indexes; migration v1, frozen): the whole report's frames,
        /// first frames and rejected ticks.
        public static let bandConditionPositions: [(position: Int, element: Element)] = [
            (1, .counter(.whole, .frames)), (4, .counter(.whole, .firstFrames)), (16, .counter(.whole, .rejectedTicks)),
        ]

        /// The layout every release wrote until issue 31 (then computed from
        /// `VisitMetric.allCases`; here frozen): 44 counts, 25 sums, 2 mins, 4 maxes, tally
        /// kinds 0–10.
        public static let v1: Layout = {
            func report(_ part: Part) -> [Element] {
                [.counter(part, .frames), .seconds(part, .durationNanoseconds), .nanosecondsLeft(part, .durationNanoseconds),
                 .counter(part, .firstFrames), .seconds(part, .firstDurationNanoseconds), .nanosecondsLeft(part, .firstDurationNanoseconds),
                 .counter(part, .droppedFrames), .counter(part, .dropEvents),
                 .seconds(part, .hitchTimeNanoseconds), .nanosecondsLeft(part, .hitchTimeNanoseconds),
                 .counter(part, .hangs), .seconds(part, .hangTimeNanoseconds), .nanosecondsLeft(part, .hangTimeNanoseconds),
                 .counter(part, .slowFrames), .counter(part, .frozenFrames), .counter(part, .rejectedTicks)]
            }
            // v1's statistics, in the order they were written: hitchRatio, motion.hitchRatio,
            // hangRate, averageFPS, frozenFramesPerThousand.
            let statistics = [1, 2, 3, 4, 5]
            let counts: [Element] = [.visits] + report(.whole) + [.motionVisits] + report(.motion)
                + statistics.map { .statisticVisits($0) } + statistics.map { .statisticZeroValues($0) }
            let sums: [Element] = statistics.flatMap { id in StatisticSum.allCases.map { .statisticSum(id, $0) } }
            let tallies: [TallyKind] = [
                TallyKind(.windowFPS(.whole), kind: 0), TallyKind(.refreshRates(.whole), kind: 2), TallyKind(.frameDurations(.whole), kind: 4),
                TallyKind(.windowFPS(.motion), kind: 1), TallyKind(.refreshRates(.motion), kind: 3), TallyKind(.frameDurations(.motion), kind: 5),
                TallyKind(.statisticValues(1), kind: 6), TallyKind(.statisticValues(2), kind: 7), TallyKind(.statisticValues(3), kind: 8),
                TallyKind(.statisticValues(4), kind: 9), TallyKind(.statisticValues(5), kind: 10),
            ]
            return Layout(version: 1, counts: counts, sums: sums,
                          mins: [.shortestFrame(.whole), .shortestFrame(.motion)],
                          maxes: [.longestFrame(.whole), .longestFrame(.motion), .counter(.whole, .maxDroppedFrames), .counter(.motion, .maxDroppedFrames)],
                          tallies: tallies)
        }()

        /// The layout this release writes and reads. It stores every ``FrameReport/counters``
        /// entry and every ``VisitMetric`` (checked when first used, and by a test).
        public static let current: Layout = {
            let layout = v1
            let missing = layout.missingFigures
            precondition(missing.isEmpty, "VisitColumns.Layout.current stores no \(missing.joined(separator: ", ")): append them in a new layout version")
            return layout
        }()

        private init(version: Int, counts: [Element], sums: [Element], mins: [Element], maxes: [Element], tallies: [TallyKind]) {
            self.version = version
            self.counts = counts
            self.sums = sums
            self.mins = mins
            self.maxes = maxes
            self.tallies = tallies
            if let problem { preconditionFailure("VisitColumns.Layout v\(version): \(problem)") }
        }

        /// This layout with elements and tally kinds appended: the next version.
        /// - Precondition: `version` is greater than this one's; each element is in the array
        ///   that can hold it and nowhere else; a nanosecond counter has both its elements, a
        ///   statistic all of its elements and its tally kind; kinds are unique and in their
        ///   ranges (``statisticKinds``, ``reportKindsFrom``).
        public func appending(version: Int, counts: [Element] = [], sums: [Element] = [], mins: [Element] = [], maxes: [Element] = [],
                              tallies: [TallyKind] = []) -> Layout {
            precondition(version > self.version, "a new layout has a later version than \(self.version)")
            return Layout(version: version, counts: self.counts + counts, sums: self.sums + sums, mins: self.mins + mins,
                          maxes: self.maxes + maxes, tallies: self.tallies + tallies)
        }

        /// What is wrong with the layout, or `nil`.
        private var problem: String? {
            var seen: Set<Element> = []
            for (array, elements) in [("counts", counts), ("sums", sums), ("mins", mins), ("maxes", maxes)] {
                for element in elements {
                    guard seen.insert(element).inserted else { return "\(element) is stored twice" }
                    guard Self.array(holding: element) == array else { return "\(element) cannot be in \(array)" }
                }
            }
            for element in seen {
                switch element {
                case .seconds(let part, let counter), .nanosecondsLeft(let part, let counter):
                    guard seen.contains(.seconds(part, counter)), seen.contains(.nanosecondsLeft(part, counter)) else {
                        return "\(part) \(counter) needs both its seconds and its nanoseconds left"
                    }
                case .statisticVisits(let id), .statisticZeroValues(let id), .statisticSum(let id, _):
                    let parts: [Element] = [.statisticVisits(id), .statisticZeroValues(id)] + StatisticSum.allCases.map { .statisticSum(id, $0) }
                    guard parts.allSatisfy(seen.contains), tallies.contains(where: { $0.distribution == .statisticValues(id) }) else {
                        return "statistic \(id) needs its visits, zero values, five sums and values"
                    }
                default: break
                }
            }
            var kinds: Set<UInt64> = []
            var distributions: Set<Distribution> = []
            for tally in tallies {
                guard kinds.insert(tally.kind).inserted, distributions.insert(tally.distribution).inserted else {
                    return "tally kind \(tally.kind) or \(tally.distribution) given twice"
                }
                guard tally.kind < 1 << 32 else { return "tally kind \(tally.kind) is not below 2³²" }
                switch tally.distribution {
                case .statisticValues(let id):
                    guard Self.statisticKinds.contains(tally.kind) else { return "statistic \(id)'s kind \(tally.kind) is outside \(Self.statisticKinds)" }
                    guard seen.contains(.statisticVisits(id)) else { return "statistic \(id) has values but no visits" }
                default:
                    guard tally.kind < Self.statisticKinds.lowerBound || tally.kind >= Self.reportKindsFrom else {
                        return "\(tally.distribution)'s kind \(tally.kind) is in the statistics' range"
                    }
                }
            }
            for (position, element) in Self.bandConditionPositions where position >= counts.count || counts[position] != element {
                return "counts[\(position)] must be \(element): the materialized views read it"
            }
            return nil
        }

        /// The array an element belongs in.
        private static func array(holding element: Element) -> String {
            switch element {
            case .visits, .motionVisits, .statisticVisits, .statisticZeroValues: "counts"
            case .seconds(_, let counter), .nanosecondsLeft(_, let counter): counter.kind == .nanoseconds ? "counts" : "none"
            case .counter(_, let counter): counter.kind == .maximum ? "maxes" : counter.kind == .count ? "counts" : "none"
            case .statisticSum: "sums"
            case .shortestFrame: "mins"
            case .longestFrame: "maxes"
            }
        }

        /// The figures this build knows that the layout does not store (each counter of each
        /// part, each ``VisitMetric``, each report distribution), by name; empty for a layout
        /// this build can write.
        public var missingFigures: [String] {
            let stored = Set(counts + sums + mins + maxes)
            let distributions = Set(tallies.map(\.distribution))
            var missing: [String] = []
            for part in Part.allCases {
                for counter in FrameReport.counters {
                    let elements: [Element] = counter.kind == .nanoseconds ? [.seconds(part, counter), .nanosecondsLeft(part, counter)] : [.counter(part, counter)]
                    if !elements.allSatisfy(stored.contains) { missing.append("\(part) \(counter)") }
                }
                for element: Element in [.shortestFrame(part), .longestFrame(part)] where !stored.contains(element) { missing.append("\(element)") }
                for distribution: Distribution in [.windowFPS(part), .refreshRates(part), .frameDurations(part)] where !distributions.contains(distribution) {
                    missing.append("\(distribution)")
                }
            }
            if !stored.contains(.motionVisits) { missing.append("motion visits") }
            if !stored.contains(.visits) { missing.append("visits") }
            for metric in VisitMetric.allCases where !stored.contains(.statisticVisits(metric.storageID)) {
                missing.append("statistic \(metric.storageID) (\(metric.rawValue))")
            }
            return missing
        }

        /// The statistics' storage ids, in the order of their visits in `counts`.
        public var statisticIDs: [Int] {
            counts.compactMap { if case .statisticVisits(let id) = $0 { id } else { nil } }
        }

        /// The layout as a table, one line per element: `counts[0]  visits`, …, then
        /// `tallies kind 0  whole windowFPS`, …
        public var description: String {
            var lines = ["layout v\(version)"]
            for (array, elements) in [("counts", counts), ("sums", sums), ("mins", mins), ("maxes", maxes)] {
                for (position, element) in elements.enumerated() { lines.append("\(array)[\(position)]  \(element)") }
            }
            for tally in tallies { lines.append("tallies kind \(tally.kind)  \(tally.distribution)") }
            return lines.joined(separator: "\n")
        }
    }
}
