import Foundation
import FramescopeCore
import Hummingbird

/// The read routes, under `/v1/apps/{app}` with `Authorization: Bearer <read key>` of that
/// app (``ReadKeyAuthenticator``) and the common parameters `from`, `to` (ISO 8601; default
/// the last 30 days), the filters of ``screenQuery(_:now:)`` and one declared tag's filter
/// (``tagFilter(_:declared:)``):
/// - `GET …/screens?limit&after`: per-screen reports, a page at a time (``ScreensResponse``);
/// - `GET …/timeseries?metric&interval`: ``TimeSeriesResponse``;
/// - `GET …/compare?baseline&candidate`: ``ComparisonResponse``;
/// - `GET …/worst?by&limit&minVisits`: ``WorstScreensResponse``;
/// - `GET …/percentiles`: ``PercentilesResponse``;
/// - `GET …/metrickit`: Apple's figures per app version (``MetricKitVersionsResponse``);
/// - `GET …/tags`: the declared tag keys that `tag.KEY` filters may name (``TagKeysResponse``);
/// - `GET …/sample-rates`: visits per sample rate on the UTC days of `from`–`to`, which take
///   no filter (``SampleRatesResponse``).
struct QueryRoutes: Sendable {
    let store: any AppAccess
    let queries: CollectorQueries
    let clock: @Sendable () -> Double

    func addRoutes(to router: Router<CollectorRequestContext>) {
        let group = router.group("/v1/apps/:app").add(middleware: ReadKeyAuthenticator(store: store, clock: clock))
        group.get("screens") { request, context -> ScreensResponse in
            let (app, query) = try await readQuery(request, context)
            let parameters = request.uri.queryParameters
            let limit = try integerParameter(parameters, name: "limit", default: ScreensResponse.defaultLimit, range: 1...ScreensResponse.maximumLimit)
            var after: String?
            if let text = parameters["after"].map(String.init) {
                guard let screen = ScreenCursor.screen(of: text) else {
                    throw CollectorError(.badRequest, .invalidParameter, field: "after",
                                         message: "after must be a cursor from an earlier answer's cursor field")
                }
                after = screen
            }
            return try await queries.screens(app: app, query: query, after: after, limit: limit)
        }

        group.get("timeseries") { request, context -> TimeSeriesResponse in
            let (app, query) = try await readQuery(request, context)
            let parameters = request.uri.queryParameters
            let figure = try figureParameter(parameters, name: "metric", default: "hitchRatio")
            let intervalText = parameters["interval"].map(String.init) ?? "day"
            guard let interval = BucketInterval(rawValue: intervalText) else {
                throw CollectorError(.badRequest, .invalidParameter, field: "interval", message: "interval must be hour or day")
            }
            guard (query.to - query.from) / interval.seconds <= 10_000 else {
                throw CollectorError(.badRequest, .invalidParameter, field: "interval", message: "the range has more than 10 000 \(interval.rawValue)s; use day or a shorter range")
            }
            return try await queries.timeSeries(app: app, query: query, figure: figure, interval: interval)
        }

        group.get("compare") { request, context -> ComparisonResponse in
            let (app, query) = try await readQuery(request, context)
            let parameters = request.uri.queryParameters
            guard let baseline = parameters["baseline"].map({ CanonicalText.nfc(String($0)) }), !baseline.isEmpty else {
                throw CollectorError(.badRequest, .missingParameter, field: "baseline", message: "name the baseline app version: baseline=3.0")
            }
            guard let candidate = parameters["candidate"].map({ CanonicalText.nfc(String($0)) }), !candidate.isEmpty else {
                throw CollectorError(.badRequest, .missingParameter, field: "candidate", message: "name the candidate app version: candidate=3.1")
            }
            // The app's minimum change and sample decide the verdicts (its thresholds, or the defaults).
            let rules = (try await queries.thresholds(app: app) ?? AppThresholds()).verdictRules
            return try await queries.compare(app: app, query: query, baseline: baseline, candidate: candidate, rules: rules)
        }

        group.get("worst") { request, context -> WorstScreensResponse in
            let (app, query) = try await readQuery(request, context)
            let parameters = request.uri.queryParameters
            let figure = try figureParameter(parameters, name: "by", default: "hitchRatio")
            let limit = try integerParameter(parameters, name: "limit", default: 10, range: 1...1000)
            let minimumVisits = try integerParameter(parameters, name: "minVisits", default: 20, range: 0...1_000_000_000)
            return try await queries.worstScreens(app: app, query: query, figure: figure, limit: limit, minimumVisits: minimumVisits)
        }

        group.get("percentiles") { request, context -> PercentilesResponse in
            let (app, query) = try await readQuery(request, context)
            return try await queries.percentiles(app: app, query: query)
        }

        group.get("metrickit") { request, context -> MetricKitVersionsResponse in
            let (app, query) = try await readQuery(request, context)
            return MetricKitVersionsResponse(versions: try await queries.metricKitVersions(app: app, query: query))
        }

        group.get("sample-rates") { request, context -> SampleRatesResponse in
            let app = try context.authenticatedApp()
            let parameters = request.uri.queryParameters
            // Counted per app and day: a filter cannot apply, so none is taken silently.
            if let filter = parameters.first(where: { QueryDimension(queryName: String($0.key)) != nil || DeclaredTags.key(inParameter: $0.key) != nil }) {
                throw CollectorError(.badRequest, .invalidParameter, field: String(filter.key),
                                     message: "visits per sample rate are counted per app and UTC day: this route takes from and to, no filter")
            }
            let query = try screenQuery(parameters, now: clock())
            return SampleRatesResponse(sampleRates: try await queries.sampleRates(app: app, from: query.from, to: query.to))
        }

        group.get("tags") { _, context -> TagKeysResponse in
            let app = try context.authenticatedApp()
            return TagKeysResponse(try await queries.tagKeys(app: app) ?? [])
        }
    }

    /// The authenticated app and the query's time range and filters, with a declared tag's
    /// filter (``tagFilter(_:declared:)``; the app's keys are read only when one is given).
    func readQuery(_ request: Request, _ context: CollectorRequestContext) async throws -> (app: String, query: ScreenQuery) {
        let app = try context.authenticatedApp()
        let parameters = request.uri.queryParameters
        var query = try screenQuery(parameters, now: clock())
        if parameters.contains(where: { DeclaredTags.key(inParameter: $0.key) != nil }) {
            let declared = try await queries.tagKeys(app: app)?.map(\.key) ?? []
            query.tag = try tagFilter(parameters, declared: declared)
        }
        return (app, query)
    }
}


/// `{"versions": [...]}`: Apple's figures from MetricKit payloads, per app version.
public struct MetricKitVersionsResponse: ResponseEncodable, Decodable, Sendable {
    /// One entry per app version, by version.
    public var versions: [MetricKitVersionSummary]
}

/// `{"sampleRates": [{"sampleRate": 0.1, "visits": 1200}, {"sampleRate": 1, "visits": 300}], "otherRates": 0, "otherVisits": 0}`:
/// how many screen visits arrived at each sample rate (``SampleRate``) on the UTC days the
/// range touches, by rate (lowest first): the ``maximumRates`` rates with the most visits,
/// and how many rates and visits the others hold. Visits are counted as they arrived, never
/// scaled: the figures of every other route are the same sums, so this says which rates they come from.
public struct SampleRatesResponse: ResponseEncodable, Codable, Sendable, Hashable {
    /// One entry per rate with visits, by rate: at most ``maximumRates``, those with the most visits.
    public var sampleRates: [SampleRateVisits]
    /// How many rates with visits are left out of ``sampleRates``.
    public var otherRates: Int
    /// How many visits those rates hold.
    public var otherVisits: Int

    /// Most rates an answer lists (a device may claim any of a million).
    public static let maximumRates = 100

    /// The answer for `sampleRates` (any number, any order), at most ``maximumRates`` listed.
    public init(sampleRates: [SampleRateVisits]) {
        let bounded = SampleRateVisits.mostVisited(sampleRates, limit: Self.maximumRates)
        self.sampleRates = bounded.kept
        otherRates = bounded.otherRates
        otherVisits = bounded.otherVisits
    }
}

/// `{"tags": [{"key": "experiment", "declaredAt": "2026-11-25T14:00:00Z"}]}`: an app's
/// declared tag keys (``DeclaredTags``), by key.
public struct TagKeysResponse: ResponseEncodable, Codable, Sendable, Hashable {
    /// One declared key.
    public struct Tag: Codable, Sendable, Hashable {
        /// The key, as `tag.KEY` filters name it.
        public var key: String
        /// When it was declared (ISO 8601, UTC): its rollups count visits stored from then on.
        public var declaredAt: String
    }
    /// The keys, by key.
    public var tags: [Tag]

    /// The answer for `keys`.
    public init(_ keys: [DeclaredTagKey]) {
        tags = keys.map { Tag(key: $0.key, declaredAt: ISO8601.format(unixSeconds: $0.declaredAt)) }
    }
}

extension MetricKitResponse: ResponseEncodable {}
extension TimeSeriesResponse: ResponseEncodable {}
extension ComparisonResponse: ResponseEncodable {}
extension WorstScreensResponse: ResponseEncodable {}
extension PercentilesResponse: ResponseEncodable {}
