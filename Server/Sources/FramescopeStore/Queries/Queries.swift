import Foundation
import FramescopeCore

/// A figure a query can ask for by name: an entry of Core's vocabulary of figures
/// (``Figure/all``): a report metric (`hitchRatio`, `frameDuration.p95`), the same metric of
/// the motion report (`motion.hitchRatio`), or `frozenFramesPerThousand`. Every value is
/// computed from merged sums (Σ/Σ).
public typealias QueryFigure = Figure

extension Figure {
    /// A metric of the whole report.
    public init(report metric: Metric) {
        self = Figure.report(metric)
    }

    /// The figure of a ``VisitMetric``.
    public init(_ metric: VisitMetric) {
        self = metric.figure
    }

    /// Every name a query accepts, in ``Figure/all``'s order.
    public static var allNames: [String] { all.map(\.name) }

    /// The figure's value for merged visits, or `nil` where there is no data.
    public func value(of rollup: RollupValue) -> Double? {
        value(whole: rollup.report, motion: rollup.motion)
    }
}

/// One point of a time series.
public struct SeriesPoint: Sendable, Hashable, Codable {
    /// Start of the bucket, ISO 8601 UTC.
    public var start: String
    /// The figure over the bucket, `null` without data.
    public var value: Double?
    /// Screen visits in the bucket.
    public var visits: Int
    /// Estimated distinct devices in the bucket.
    public var devices: Int
    /// Frames in the bucket.
    public var frames: Int
}

/// `GET /v1/apps/{app}/timeseries`: one figure per hour or day.
public struct TimeSeriesResponse: Sendable, Hashable, Codable {
    /// The figure's name (`hitchRatio`).
    public var metric: String
    /// Its unit (`ms/s`).
    public var unit: String
    /// Bucket length.
    public var interval: BucketInterval
    /// Every bucket of the range in order, empty buckets included (value `null`, visits 0).
    public var points: [SeriesPoint]
}

/// One figure's change from baseline to candidate.
public struct FigureChange: Sendable, Hashable, Codable {
    /// The figure (`hitchRatio`).
    public var metric: String
    /// Its unit.
    public var unit: String
    /// Baseline value (Σ/Σ over the baseline's visits).
    public var baseline: Double?
    /// Candidate value.
    public var candidate: Double?
    /// candidate − baseline, in the figure's unit.
    public var change: Double?
    /// change / baseline (0.5 = 50 % more), `nil` when the baseline is 0 or missing.
    public var relativeChange: Double?
    /// Lower end of the 95 % confidence interval of ``change``.
    public var changeLow: Double?
    /// Upper end of the 95 % confidence interval of ``change``.
    public var changeHigh: Double?
    /// Visits the baseline value rests on.
    public var baselineVisits: Int
    /// Visits the candidate value rests on.
    public var candidateVisits: Int
    /// Regressed, improved, or no significant change.
    public var verdict: Verdict

    /// A value with every field given.
    public init(metric: String, unit: String, baseline: Double? = nil, candidate: Double? = nil, change: Double? = nil, relativeChange: Double? = nil,
                changeLow: Double? = nil, changeHigh: Double? = nil, baselineVisits: Int, candidateVisits: Int, verdict: Verdict) {
        self.metric = metric
        self.unit = unit
        self.baseline = baseline
        self.candidate = candidate
        self.change = change
        self.relativeChange = relativeChange
        self.changeLow = changeLow
        self.changeHigh = changeHigh
        self.baselineVisits = baselineVisits
        self.candidateVisits = candidateVisits
        self.verdict = verdict
    }
}

/// One screen in a version comparison.
public struct ScreenComparison: Sendable, Hashable, Codable {
    /// The screen's name.
    public var screen: String
    /// Regressed if any figure regressed; improved if any improved and none regressed.
    public var verdict: Verdict
    /// One entry per ``VisitMetric``.
    public var metrics: [FigureChange]
}

/// `GET /v1/apps/{app}/compare`: per screen, each figure's change between two versions.
public struct ComparisonResponse: Sendable, Hashable, Codable {
    /// The baseline app version.
    public var baseline: String
    /// The candidate app version.
    public var candidate: String
    /// Screens, regressions first, then improvements, then the rest; by name within each.
    public var screens: [ScreenComparison]
}

/// One screen in a worst-screens list.
public struct RankedScreen: Sendable, Hashable, Codable {
    /// The screen's name.
    public var screen: String
    /// The ranking figure's value.
    public var value: Double
    /// Screen visits it rests on.
    public var visits: Int
    /// Frames it rests on.
    public var frames: Int
}

/// `GET /v1/apps/{app}/worst`: screens ranked worst first by one figure.
public struct WorstScreensResponse: Sendable, Hashable, Codable {
    /// The figure ranked by.
    public var metric: String
    /// Its unit.
    public var unit: String
    /// Screens with at least the minimum visits, worst first.
    public var screens: [RankedScreen]
}

/// One figure's fleet value and the spread of its per-visit values.
public struct FigurePercentiles: Sendable, Hashable, Codable {
    /// The figure.
    public var metric: String
    /// Its unit.
    public var unit: String
    /// Σ/Σ over all visits.
    public var value: Double?
    /// Median of the per-visit values.
    public var median: Double?
    /// 90th percentile of the per-visit values.
    public var p90: Double?
    /// Visits that had the figure (the motion figure only counts visits that moved).
    public var visits: Int
}

/// `GET /v1/apps/{app}/percentiles`: median and p90 of per-visit figures, as Apple's Organizer reports them.
public struct PercentilesResponse: Sendable, Hashable, Codable {
    /// Screen visits in the range.
    public var visits: Int
    /// Estimated distinct devices in the range (``DeviceSketch``, ±5 %).
    public var devices: Int
    /// Frames in the range.
    public var frames: Int
    /// One entry per ``VisitMetric``.
    public var metrics: [FigurePercentiles]
}

/// The collector's read queries, on top of ``RollupReader/aggregate(app:query:)``,
/// so every store answers them the same way: the one door through which the query API
/// and the dashboard read an app's data (rollups, filter menus, MetricKit, thresholds,
/// declared tags, hangs with their symbols, visits per sample rate).
public struct CollectorQueries: Sendable {
    /// What a read needs from the store: the rollups, the app's settings, MetricKit, hangs,
    /// symbols and the visits per sample rate.
    public typealias Store = RollupReader & SettingsStore & MetricKitStore & HangStore & SymbolStore & SampleRateStore
    /// The store read from.
    public var store: any Store
    /// The symbol tables the hang reads name frames with, kept between requests.
    public let symbols: SymbolCache
    /// The family-wise confidence of a comparison's intervals: 0.95 means that, when
    /// nothing changed, all of a comparison's figures × screens intervals include 0 with
    /// at least 95 % probability (Bonferroni: each interval is at 1 − 0.05/m).
    public var confidence = 0.95
    /// A change smaller than this fraction of the baseline is never called significant.
    public var minimumRelativeChange = 0.05
    /// How long a hang read may take, in seconds, before it is cancelled and answered 503;
    /// nil: no bound. A serving policy: `framescope serve` sets ``HangsResponse/timeLimit``
    /// (through ``Collector`` and the dashboard); the library leaves reads unbounded, since a
    /// starved test run can wait longer than that for a thread.
    public var hangsTimeLimit: Double?

    /// Queries over `store`.
    public init(store: any Store) {
        self.store = store
        symbols = SymbolCache()
    }

    /// `app`'s hangs over `query`, grouped by their dominant app frame, named from the
    /// uploaded symbols and merged by function (``HangsResponse``), at most `limit` groups
    /// per source. Groups of images without uploaded symbols cannot merge: only `limit` of
    /// them are read; those whose image has symbols are read up to
    /// ``HangsResponse/maximumLimit`` per source, merged, and the whole cut to `limit`.
    ///
    /// The whole read is bounded by ``hangsTimeLimit``: past it the read is
    /// cancelled (SQLite's statement interrupted) and the answer is 503 `store_unavailable`
    /// with `Retry-After`, never a request that holds the store for minutes.
    public func hangs(app: String, query: EventQuery, limit: Int) async throws -> HangsResponse {
        let store = store, symbols = symbols
        let read: @Sendable () async throws -> HangsResponse = {
            let uploaded = try await symbols.uploadedImages(app: app, store: store)
            let mergeable = Set(uploaded.keys)
            async let sdk = store.hangGroups(app: app, query: query, source: .sdk, limit: limit, mergeable: mergeable)
            async let metricKit = store.hangGroups(app: app, query: query, source: .metrickit, limit: limit, mergeable: mergeable)
            let (sdkGroups, metricKitGroups) = try await (sdk, metricKit)
            let tables = try await symbols.tables(app: app, lookups: HangGroup.lookups(sdkGroups + metricKitGroups), store: store)
            return HangsResponse(sdk: sdkGroups, metricKit: metricKitGroups, tables: tables, uploadedNames: uploaded, limit: limit)
        }
        guard let hangsTimeLimit else { return try await read() }
        return try await Self.within(seconds: hangsTimeLimit, read)
    }

    /// `work`'s answer, or 503 `store_unavailable` (`Retry-After` the limit) once `seconds`
    /// have passed, `work` cancelled.
    static func within<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let answer = first else {
                throw HangsResponse.tookTooLong(seconds: seconds)
            }
            return answer
        }
    }

    /// The rollups over `query`'s range and filters, merged per group
    /// (``RollupReader/aggregate(app:query:)``).
    public func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate] {
        try await store.aggregate(app: app, query: query)
    }

    /// Per-screen reports over `query`'s range and filters, by screen name.
    public func screens(app: String, query: ScreenQuery) async throws -> [ScreenSummary] {
        try await store.screens(app: app, query: query)
    }

    /// A filter menu's values of `dimension`: most visits first, matching `search`, at most `limit`.
    public func topDimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits] {
        try await store.topDimensionValues(app: app, dimension: dimension, from: from, to: to, search: search, limit: limit)
    }

    /// A filter menu's values of the declared tag `key`, as ``topDimensionValues(app:dimension:from:to:search:limit:)``.
    public func topTagValues(app: String, key: String, from: Double, to: Double, search: String?, limit: Int) async throws -> [ValueVisits] {
        try await store.topTagValues(app: app, key: key, from: from, to: to, search: search, limit: limit)
    }

    /// Apple's figures per app version over `query` (``MetricKitStore/metricKitVersions(app:query:)``).
    public func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary] {
        try await store.metricKitVersions(app: app, query: query)
    }

    /// `app`'s visits per sample rate on the UTC days `[from, to)` touches, by rate
    /// (``SampleRateStore/sampleRates(app:from:to:)``): which rates the figures come from.
    public func sampleRates(app: String, from: Double, to: Double) async throws -> [SampleRateVisits] {
        try await store.sampleRates(app: app, from: from, to: to)
    }

    /// The thresholds `app` set, or `nil` for an unknown app.
    public func thresholds(app: String) async throws -> AppThresholds? {
        try await store.thresholds(app: app)
    }

    /// The tag keys `app` declared, or `nil` for an unknown app.
    public func tagKeys(app: String) async throws -> [DeclaredTagKey]? {
        try await store.tagKeys(app: app)
    }

    /// One ``SeriesPoint`` per bucket of `query`'s range.
    public func timeSeries(app: String, query: ScreenQuery, figure: QueryFigure, interval: BucketInterval) async throws -> TimeSeriesResponse {
        try await timeSeries(app: app, query: query, figures: [figure], interval: interval)[0]
    }

    /// One series per figure, from one read of the rollups: one ``SeriesPoint`` per bucket
    /// of `query`'s range, empty buckets included (value `nil`, visits 0), in `figures` order.
    public func timeSeries(app: String, query: ScreenQuery, figures: [QueryFigure], interval: BucketInterval) async throws -> [TimeSeriesResponse] {
        let groups = try await store.aggregate(app: app, query: AggregateQuery(filter: query, interval: interval))
        var byStart: [Double: RollupValue] = [:]
        for group in groups { if let start = group.bucketStart { byStart[start] = group.rollup } }
        let buckets = interval.starts(from: query.from, to: query.to).map { ($0, byStart[$0] ?? RollupValue()) }
        return figures.map { figure in
            let points = buckets.map { start, rollup in
                SeriesPoint(start: ISO8601.format(unixSeconds: start), value: figure.value(of: rollup),
                            visits: rollup.visits, devices: rollup.devices.estimate, frames: rollup.report.frames)
            }
            return TimeSeriesResponse(metric: figure.name, unit: figure.unit, interval: interval, points: points)
        }
    }

    /// The merged visits of each ``DisplayClass`` in `query` (classes without visits left
    /// out), in the enum's order. A device model is ProMotion when its visits outside
    /// low-power mode show frames above 60 Hz (``DisplayClass/isProMotion(refreshRates:)``).
    public func displayClasses(app: String, query: ScreenQuery) async throws -> [(displayClass: DisplayClass, rollup: RollupValue)] {
        var normal = query
        normal[.lowPower] = "false"
        var saving = query
        saving[.lowPower] = "true"
        async let lowPowerGroups = store.aggregate(app: app, query: AggregateQuery(filter: saving, dimension: .deviceModel))
        let normalGroups = try await store.aggregate(app: app, query: AggregateQuery(filter: normal, dimension: .deviceModel))
        let proMotion = Set(normalGroups.filter { DisplayClass.isProMotion(refreshRates: $0.report.refreshRates) }.compactMap(\.dimensionValue))
        var classes = Dictionary(uniqueKeysWithValues: DisplayClass.allCases.map { ($0, RollupValue()) })
        for group in normalGroups {
            classes[proMotion.contains(group.dimensionValue ?? "") ? .proMotion : .sixtyHertz]?.merge(group.rollup)
        }
        for group in try await lowPowerGroups {
            classes[proMotion.contains(group.dimensionValue ?? "") ? .proMotionCapped : .sixtyHertz]?.merge(group.rollup)
        }
        return DisplayClass.allCases.compactMap { displayClass in
            classes[displayClass].flatMap { $0.visits > 0 ? (displayClass, $0) : nil }
        }
    }

    /// Each screen's ``VisitMetric`` figures in `candidate` against `baseline`.
    public func compare(app: String, query: ScreenQuery, baseline: String, candidate: String) async throws -> ComparisonResponse {
        let base = try await store.aggregate(app: app, query: AggregateQuery(filter: query.fixing(.appVersion, to: baseline), byScreen: true))
        let cand = try await store.aggregate(app: app, query: AggregateQuery(filter: query.fixing(.appVersion, to: candidate), byScreen: true))
        var baseByScreen: [String: RollupValue] = [:]
        var candByScreen: [String: RollupValue] = [:]
        for group in base { baseByScreen[group.screen ?? ""] = group.rollup }
        for group in cand { candByScreen[group.screen ?? ""] = group.rollup }
        let names = Set(baseByScreen.keys).union(candByScreen.keys)
        let z = zScore(comparisons: max(1, names.count * VisitMetric.allCases.count))
        var screens: [ScreenComparison] = names.map { name in
            let metrics = VisitMetric.allCases.map {
                change($0, baseline: baseByScreen[name] ?? RollupValue(), candidate: candByScreen[name] ?? RollupValue(), z: z)
            }
            let verdict: Verdict = metrics.contains { $0.verdict == .regressed } ? .regressed
                : metrics.contains { $0.verdict == .improved } ? .improved : .noSignificantChange
            return ScreenComparison(screen: name, verdict: verdict, metrics: metrics)
        }
        func rank(_ verdict: Verdict) -> Int { verdict == .regressed ? 0 : verdict == .improved ? 1 : 2 }
        screens.sort { (rank($0.verdict), $0.screen) < (rank($1.verdict), $1.screen) }
        return ComparisonResponse(baseline: baseline, candidate: candidate, screens: screens)
    }

    /// The two-sided z of one interval among `comparisons` that share ``confidence``
    /// (Bonferroni): the normal quantile at 1 − (1 − confidence) / (2 · comparisons).
    public func zScore(comparisons: Int) -> Double {
        normalQuantile(1 - (1 - confidence) / (2 * Double(max(1, comparisons))))
    }

    /// The change of one figure with its confidence interval and verdict.
    ///
    /// The value of each side is Σy/Σx over its visits; its standard error comes from
    /// the per-visit sums of squares (``RatioStatistics/standardError``). The change's
    /// interval is `change ± z·√(se_b² + se_c²)`. A figure is significant when the
    /// interval excludes 0 and the change is at least ``minimumRelativeChange`` of the
    /// baseline; with fewer than two visits on a side there is no interval and no verdict.
    /// - Parameter z: The interval's z; by default that of one comparison alone.
    public func change(_ metric: VisitMetric, baseline: RollupValue, candidate: RollupValue, z: Double? = nil) -> FigureChange {
        let z = z ?? zScore(comparisons: 1)
        let figure = QueryFigure(metric)
        let baseStatistics = baseline.statistics[metric]
        let candStatistics = candidate.statistics[metric]
        let baseValue = figure.value(of: baseline)
        let candValue = figure.value(of: candidate)
        var result = FigureChange(metric: metric.rawValue, unit: metric.unit, baseline: baseValue, candidate: candValue,
                                  change: nil, relativeChange: nil, changeLow: nil, changeHigh: nil,
                                  baselineVisits: baseStatistics.visits, candidateVisits: candStatistics.visits, verdict: .noSignificantChange)
        guard let baseValue, let candValue else { return result }
        let change = candValue - baseValue
        result.change = change
        result.relativeChange = baseValue != 0 ? change / baseValue : nil
        guard let baseError = baseStatistics.standardError, let candError = candStatistics.standardError else { return result }
        let margin = z * (baseError * baseError + candError * candError).squareRoot()
        result.changeLow = change - margin
        result.changeHigh = change + margin
        let excludesZero = change - margin > 0 || change + margin < 0
        let largeEnough = abs(change) >= minimumRelativeChange * abs(baseValue)
        if excludesZero && largeEnough {
            result.verdict = figure.direction.verdict(change: change)
        }
        return result
    }

    /// One page of the per-screen reports over `query`: the screens after `after` by name
    /// (bytewise, as the stores order text), at most `limit`, with `more` and the cursor of
    /// the last one when screens are left out.
    public func screens(app: String, query: ScreenQuery, after: String? = nil, limit: Int = ScreensResponse.defaultLimit) async throws -> ScreensResponse {
        var screens = try await store.screens(app: app, query: query).sorted { StoredText($0.screen) < StoredText($1.screen) }
        if let after {
            let start = StoredText(after)
            screens.removeAll { StoredText($0.screen) <= start }
        }
        let page = Array(screens.prefix(max(0, limit)))
        let more = screens.count > page.count
        return ScreensResponse(screens: page, more: more, cursor: more ? page.last.map { ScreenCursor.cursor(after: $0.screen) } : nil)
    }

    /// Screens with at least `minimumVisits` visits, worst first by `figure`, at most `limit`.
    public func worstScreens(app: String, query: ScreenQuery, figure: QueryFigure, limit: Int, minimumVisits: Int) async throws -> WorstScreensResponse {
        let groups = try await store.aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true))
        let worseFirst = figure.higherIsWorse ?? true
        let ranked = groups.compactMap { group -> RankedScreen? in
            guard group.visits >= minimumVisits, let value = figure.value(of: group.rollup) else { return nil }
            return RankedScreen(screen: group.screen ?? "", value: value, visits: group.visits, frames: group.report.frames)
        }.sorted { worseFirst ? ($0.value, $1.screen) > ($1.value, $0.screen) : ($0.value, $0.screen) < ($1.value, $1.screen) }
        return WorstScreensResponse(metric: figure.name, unit: figure.unit, screens: Array(ranked.prefix(max(0, limit))))
    }

    /// Median and p90 of the per-visit ``VisitMetric`` figures over `query`.
    public func percentiles(app: String, query: ScreenQuery) async throws -> PercentilesResponse {
        let total = try await store.aggregate(app: app, query: AggregateQuery(filter: query)).first?.rollup ?? RollupValue()
        return PercentilesResponse(visits: total.visits, devices: total.devices.estimate, frames: total.report.frames, metrics: VisitMetric.allCases.map { metric in
            let statistics = total.statistics[metric]
            return FigurePercentiles(metric: metric.rawValue, unit: metric.unit, value: QueryFigure(metric).value(of: total),
                                     median: statistics.visitValue(atQuantile: 0.5), p90: statistics.visitValue(atQuantile: 0.9),
                                     visits: statistics.visits)
        })
    }
}

/// A position in a list of screens, as a client sees it: opaque text (the screen name's
/// UTF-8 bytes in base64url, without padding), which `after=` resumes after.
public enum ScreenCursor {
    /// The bytes of base64url: letters, digits, `-` and `_`.
    static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The cursor of the position just after `screen`.
    public static func cursor(after screen: String) -> String {
        Data(screen.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The screen a cursor names, or `nil` when `cursor` is not one (not base64url, not UTF-8,
    /// or longer than a screen name may be).
    public static func screen(of cursor: String) -> String? {
        guard cursor.utf8.count <= 256, cursor.utf8.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let screen = String(data: data, encoding: .utf8),
              Array(screen.utf8) == Array(data) else { return nil }
        return screen
    }
}
