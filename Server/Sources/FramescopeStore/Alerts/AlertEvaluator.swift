import Foundation
import FramescopeCore

/// Finds regressions between consecutive app versions and raises one alert for each
/// screen and figure that regressed.
///
/// For each app, over the range the dashboard shows by default (the ``window``, 30 days,
/// up to the end of the current hour), the app versions that at least the app's minimum
/// of distinct installations sent (``AlertRules/minimumInstallations``, 20 by default,
/// counted by the rollups' ``DeviceSketch``) are put in version order
/// (``AlertEvaluator/versionOrder(_:_:)``: numeric runs compare as numbers, so `3.10.0`
/// follows `3.9.0`) and every consecutive pair is compared, older as baseline,
/// newer as candidate, with the compare route's call and the app's verdict rules
/// (``CollectorQueries/compare(app:query:baseline:candidate:rules:)``: the interval
/// must exclude zero, the change must be at least the app's minimum change of the
/// baseline, and each side must rest on at least the app's minimum sample of visits).
/// Each figure judged ``Verdict/regressed`` becomes a ``NewAlert``; the store keeps one
/// per (app, screen, metric, baseline, candidate), so evaluating again raises nothing new.
///
/// One pass raises at most ``maximumAlertsPerPass`` alerts per app (10): each is a webhook
/// POST to every receiver, so a burst of regressions, real or sent by whoever holds the
/// ingest key, reaches receivers at that pace. The rest are held back, counted in
/// ``AlertEvaluation/heldBack``, and raised by the next passes (each finds them again),
/// those of the versions most installations sent first.
///
/// Walking every consecutive pair, not only the newest, means a regression that shipped
/// and was fixed within the window (the demo's Feed in 3.1.0, fixed in 3.2.0) is still
/// raised, once; the fix itself is an improvement and raises none. Screens folded into
/// `(other)` and the `(other)` version are skipped: they are not one screen or release.
public struct AlertEvaluator: Sendable {
    /// What an evaluation needs from the store: the apps, their alerts, and the reads of
    /// ``CollectorQueries``.
    public typealias Store = AppAccess & AlertStore & CollectorQueries.Store
    /// The store read from (through ``CollectorQueries``) and written to.
    public var store: any Store
    /// The length of the range evaluated, in seconds (30 days, the dashboard's default range).
    public var window: Double
    /// The most alerts one pass raises for one app.
    public var maximumAlertsPerPass: Int

    /// The most alerts a pass raises for one app by default: 10, two regressed figures on
    /// each of five screens (the demo's regression raises 2).
    public static let maximumAlertsPerPass = 10

    /// An evaluator over `store`.
    /// - Parameters:
    ///   - window: The range evaluated, in seconds up to the end of the current hour.
    ///   - maximumAlertsPerPass: The most alerts one pass raises for one app (at least 1).
    public init(store: any Store, window: Double = 30 * 86_400, maximumAlertsPerPass: Int = Self.maximumAlertsPerPass) {
        precondition(maximumAlertsPerPass >= 1, "a pass must be able to raise an alert")
        self.store = store
        self.window = window
        self.maximumAlertsPerPass = maximumAlertsPerPass
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
        try await evaluations(now: now).flatMap(\.raised)
    }

    /// Evaluates every app that is not revoked and raises what regressed, at most
    /// ``maximumAlertsPerPass`` per app; returns what each evaluation did, by app.
    public func evaluations(now: Double) async throws -> [AlertEvaluation] {
        var evaluations: [AlertEvaluation] = []
        for app in try await store.apps() where !app.revoked {
            evaluations.append(try await evaluation(app: app.app, now: now))
        }
        return evaluations
    }

    /// Evaluates `app` at `now` and raises what regressed; returns the alerts raised now.
    public func evaluate(app: String, now: Double) async throws -> [RegressionAlert] {
        try await evaluation(app: app, now: now).raised
    }

    /// Evaluates `app` at `now` and raises the first ``maximumAlertsPerPass`` regressions
    /// not raised before, in the order of ``findings(app:now:)``; the others are counted as
    /// held back (a later pass finds and raises them).
    public func evaluation(app: String, now: Double) async throws -> AlertEvaluation {
        let (found, left) = try await search(app: app, now: now)
        // Few enough to raise at once: the store skips those raised before.
        guard found.count > maximumAlertsPerPass else {
            return AlertEvaluation(app: app, raised: try await store.raiseAlerts(found, now: now), heldBack: 0, versionsLeftOut: left)
        }
        let raisedBefore = Set(try await store.alerts(app: app, limit: Int.max).map {
            AlertKey(screen: $0.screen, metric: $0.metric, baseline: $0.baseline, candidate: $0.candidate)
        })
        let fresh = found.filter { !raisedBefore.contains(AlertKey(screen: $0.screen, metric: $0.figures.metric, baseline: $0.baseline, candidate: $0.candidate)) }
        let raised = try await store.raiseAlerts(Array(fresh.prefix(maximumAlertsPerPass)), now: now)
        return AlertEvaluation(app: app, raised: raised, heldBack: max(0, fresh.count - maximumAlertsPerPass), versionsLeftOut: left)
    }

    /// Every figure of every screen that regressed between consecutive versions of `app`
    /// at `now`, whether or not it was raised before, in the order a pass raises them:
    /// the pairs of versions whose less installed side has the most installations first
    /// (a real release before a version few devices sent), then the newest candidate;
    /// within a pair, regressed screens by name and figures in the compare route's order.
    ///
    /// Only versions that at least the app's minimum of distinct installations sent over
    /// the range take part (``AlertRules/minimumInstallations``): sixty visits of a
    /// version one installation invented neither break the chain nor raise alerts. Among
    /// them, versions are consecutive per screen among those with at least the app's
    /// minimum sample of visits on that screen: a version with only a visit or two of a
    /// screen is skipped there rather than breaking the chain, so 3.0.0 is still compared
    /// with 3.1.0 across a stray 3.0.1.
    public func findings(app: String, now: Double) async throws -> [NewAlert] {
        try await search(app: app, now: now).found
    }

    /// ``findings(app:now:)``, and the versions with visits left out of the chain for
    /// having fewer installations than the app's minimum.
    func search(app: String, now: Double) async throws -> (found: [NewAlert], versionsLeftOut: [String]) {
        let (from, to) = range(now: now)
        let queries = CollectorQueries(store: store)
        let settings = try await queries.thresholds(app: app) ?? AppThresholds()
        let rules = settings.verdictRules
        let query = ScreenQuery(from: from, to: to)
        // Distinct installations per version over the whole range, merged across screens
        // and hours by the device sketches (a device counts once).
        var installations: [String: Int] = [:]
        var versionsLeftOut: [String] = []
        for group in try await queries.aggregate(app: app, query: AggregateQuery(filter: query, dimension: .appVersion)) {
            guard let version = group.dimensionValue, version != CardinalityLimits.other else { continue }
            let count = group.rollup.devices.estimate
            if count >= settings.alertRules.minimumInstallations {
                installations[version] = count
            } else {
                versionsLeftOut.append(version)
            }
        }
        // Visits per screen and version, in one read of the rollups.
        var versionsByScreen: [String: [String]] = [:]
        for group in try await queries.aggregate(app: app, query: AggregateQuery(filter: query, byScreen: true, dimension: .appVersion)) {
            guard let screen = group.screen, let version = group.dimensionValue, screen != CardinalityLimits.other,
                  installations[version] != nil, group.visits >= rules.minimumVisits else { continue }
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
        var found: [NewAlert] = []
        func installed(_ pair: VersionPair) -> Int { min(installations[pair.baseline] ?? 0, installations[pair.candidate] ?? 0) }
        let pairs = screensByPair.sorted { a, b in
            installed(a.key) != installed(b.key) ? installed(a.key) > installed(b.key) : b.key.comesBefore(a.key)
        }
        for (pair, screens) in pairs {
            let comparison = try await queries.compare(app: app, query: query, baseline: pair.baseline, candidate: pair.candidate, rules: rules)
            for screen in comparison.screens where screen.verdict == .regressed && screens.contains(screen.screen) {
                for change in screen.metrics where change.verdict == .regressed {
                    found.append(NewAlert(app: app, screen: screen.screen, baseline: pair.baseline, candidate: pair.candidate, figures: change, from: from, to: to))
                }
            }
        }
        return (found, versionsLeftOut.sorted(by: Self.versionOrder))
    }

    /// What identifies an alert: the store raises one per key.
    struct AlertKey: Hashable {
        var screen: String
        var metric: String
        var baseline: String
        var candidate: String
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

/// What one evaluation of one app did: the alerts it raised, how many more regressions it
/// found and held back for later passes, and which versions it left out for too few installations.
public struct AlertEvaluation: Sendable, Hashable {
    /// The app evaluated.
    public var app: String
    /// The alerts raised now, at most ``AlertEvaluator/maximumAlertsPerPass``.
    public var raised: [RegressionAlert]
    /// Regressions found and not raised before that this pass did not raise, being over
    /// ``AlertEvaluator/maximumAlertsPerPass``: the next passes raise them while they are found.
    public var heldBack: Int
    /// The versions with visits in the range that fewer distinct installations sent than the
    /// app's ``AlertRules/minimumInstallations``, in version order: they took no part.
    public var versionsLeftOut: [String]

    /// An evaluation's outcome.
    public init(app: String, raised: [RegressionAlert], heldBack: Int, versionsLeftOut: [String]) {
        self.app = app
        self.raised = raised
        self.heldBack = heldBack
        self.versionsLeftOut = versionsLeftOut
    }
}
