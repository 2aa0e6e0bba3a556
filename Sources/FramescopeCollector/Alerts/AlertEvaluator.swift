import Foundation
import FramescopeCore

/// Finds regressions between consecutive app versions and raises one alert for each
/// screen and figure that regressed.
///
/// For each app, over the range the dashboard shows by default (the ``window``, 30 days,
/// up to the end of the current hour), the app versions with data are put in version
/// order (``AlertEvaluator/versionOrder(_:_:)``: numeric runs compare as numbers, so
/// `3.10.0` follows `3.9.0`) and every consecutive pair is compared, older as baseline,
/// newer as candidate, with the compare route's call and the app's verdict rules
/// (``CollectorQueries/compare(app:query:baseline:candidate:rules:)``: the interval
/// must exclude zero, the change must be at least the app's minimum change of the
/// baseline, and each side must rest on at least the app's minimum sample of visits).
/// Each figure judged ``Verdict/regressed`` becomes a ``NewAlert``; the store keeps one
/// per (app, screen, metric, baseline, candidate), so evaluating again raises nothing new.
///
/// Walking every consecutive pair, not only the newest, means a regression that shipped
/// and was fixed within the window (the demo's Feed in 3.1.0, fixed in 3.2.0) is still
/// raised, once; the fix itself is an improvement and raises none. Screens folded into
/// `(other)` and the `(other)` version are skipped: they are not one screen or release.
public struct AlertEvaluator: Sendable {
    /// The store read from and written to.
    public var store: any CollectorStore
    /// The length of the range evaluated, in seconds (30 days, the dashboard's default range).
    public var window: Double

    /// An evaluator over `store`.
    /// - Parameter window: The range evaluated, in seconds up to the end of the current hour.
    public init(store: any CollectorStore, window: Double = 30 * 86_400) {
        self.store = store
        self.window = window
    }

    /// The range evaluated at `now` (Unix seconds): `window` seconds up to the end of the
    /// current hour, as the dashboard's range of the same length.
    public func range(now: Double) -> (from: Double, to: Double) {
        let to = (now / 3600).rounded(.up) * 3600
        return (to - window, to)
    }

    /// Whether version `a` comes before `b`: compared as text with numeric runs compared as
    /// numbers (`3.9.0` < `3.10.0`), the order of the dashboard's version menus.
    public static func versionOrder(_ a: String, _ b: String) -> Bool {
        switch a.compare(b, options: .numeric) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a < b
        }
    }

    /// Evaluates every app that is not revoked and raises what regressed; returns the alerts
    /// raised now (none already raised before).
    public func evaluate(now: Double) async throws -> [RegressionAlert] {
        var raised: [RegressionAlert] = []
        for app in try await store.apps() where !app.revoked {
            raised += try await evaluate(app: app.app, now: now)
        }
        return raised
    }

    /// Evaluates `app` at `now` and raises what regressed; returns the alerts raised now.
    public func evaluate(app: String, now: Double) async throws -> [RegressionAlert] {
        try await store.raiseAlerts(try await findings(app: app, now: now), now: now)
    }

    /// Every figure of every screen that regressed between consecutive versions of `app`
    /// at `now`, whether or not it was raised before.
    ///
    /// Versions are consecutive per screen among those with at least the app's minimum
    /// sample of visits on that screen: a version a device sent only a visit or two of (a
    /// test build, or a hostile device holding the ingest key) is skipped rather than
    /// breaking the chain, so 3.0.0 is still compared with 3.1.0 across a stray 3.0.1.
    public func findings(app: String, now: Double) async throws -> [NewAlert] {
        let (from, to) = range(now: now)
        let rules = (try await store.thresholds(app: app) ?? AppThresholds()).verdictRules
        let query = ScreenQuery(from: from, to: to)
        // Visits per screen and version, in one read of the rollups.
        var versionsByScreen: [String: [String]] = [:]
        for group in try await store.aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true, dimension: .appVersion)) {
            guard let screen = group.screen, let version = group.dimensionValue, screen != CardinalityLimits.other,
                  version != CardinalityLimits.other, group.visits >= rules.minimumVisits else { continue }
            versionsByScreen[screen, default: []].append(version)
        }
        // The screens each pair of consecutive versions is judged on.
        var screensByPair: [VersionPair: Set<String>] = [:]
        for (screen, versions) in versionsByScreen {
            let ordered = versions.sorted(by: Self.versionOrder)
            for (baseline, candidate) in zip(ordered, ordered.dropFirst()) {
                screensByPair[VersionPair(baseline: baseline, candidate: candidate), default: []].insert(screen)
            }
        }
        let queries = CollectorQueries(store: store)
        var found: [NewAlert] = []
        for (pair, screens) in screensByPair.sorted(by: { $0.key.comesBefore($1.key) }) {
            let comparison = try await queries.compare(app: app, query: query, baseline: pair.baseline, candidate: pair.candidate, rules: rules)
            for screen in comparison.screens where screen.verdict == .regressed && screens.contains(screen.screen) {
                for change in screen.metrics where change.verdict == .regressed {
                    found.append(NewAlert(app: app, screen: screen.screen, baseline: pair.baseline, candidate: pair.candidate, figures: change, from: from, to: to))
                }
            }
        }
        return found
    }

    /// Two versions compared, the older first.
    struct VersionPair: Hashable {
        var baseline: String
        var candidate: String

        /// By candidate, then baseline, in version order.
        func comesBefore(_ other: VersionPair) -> Bool {
            candidate != other.candidate ? AlertEvaluator.versionOrder(candidate, other.candidate) : AlertEvaluator.versionOrder(baseline, other.baseline)
        }
    }
}
