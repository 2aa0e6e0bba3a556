import FramescopeCore

/// A figure that an app can judge with bands of its own, named as the query API names it:
/// the entries of Core's vocabulary of figures with a ``Figure/bandMaximum``.
public enum ThresholdFigure: String, CaseIterable, Sendable, Hashable, Codable {
    /// Hitch time per second of the whole visit, in ms/s.
    case hitchRatio
    /// Hitch time per second while scrolling or animating, in ms/s.
    case motionHitchRatio = "motion.hitchRatio"
    /// Hang time per hour, in s/h.
    case hangRate
    /// Frozen frames per 1,000 frames.
    case frozenFramesPerThousand
    /// The 95th-percentile frame duration, in seconds (the API's unit for durations).
    case frameDurationP95 = "frameDuration.p95"

    /// The band figure of a comparison figure; `nil` for ``VisitMetric/averageFPS``, which has no bands.
    public init?(_ metric: VisitMetric) {
        guard let found = Self.allCases.first(where: { $0.figure == metric.figure }) else { return nil }
        self = found
    }

    /// The figure of the vocabulary whose value the bands judge.
    public var figure: QueryFigure {
        switch self {
        case .hitchRatio: .hitchRatio
        case .motionHitchRatio: .motionHitchRatio
        case .hangRate: .hangRate
        case .frozenFramesPerThousand: .frozenFramesPerThousand
        case .frameDurationP95: .frameDurationP95
        }
    }

    /// The unit the limits are in (`ms/s`, `s/h`, `per 1000 frames`, `s`).
    public var unit: String { figure.unit }

    /// The figure's label ("Hitch ratio in motion").
    public var label: String { figure.label }

    /// The largest value the figure can take, in ``unit``: a limit above it could never be
    /// reached (the figure's ``Figure/bandMaximum``: hitch time cannot exceed the time it is
    /// measured over, 1,000 ms/s; hang time the hour, 3,600 s/h; frozen frames the frames,
    /// 1,000 per 1,000; a frame the longest visit the collector accepts, 86,400 s).
    public var maximum: Double {
        guard let maximum = figure.bandMaximum else { preconditionFailure("\(rawValue) takes bands but its figure has no band maximum") }
        return maximum
    }

    /// The bands that apply when the app sets none: the figure's ``Figure/defaultBands``
    /// (Apple's guidance for the hitch ratio whole and in motion: good below 5 ms/s,
    /// critical above 10); `nil` (no bands) for the other figures.
    public var defaultBands: BandLimits? {
        figure.defaultBands.map { BandLimits(goodBelow: $0.warning, criticalAbove: $0.critical) }
    }
}

/// The bands of one figure, in the figure's unit: *good* below ``goodBelow``, *warning*
/// from it up to and including ``criticalAbove``, *critical* above that (the rule of
/// Core's ``Metric/band(of:)``).
public struct BandLimits: Sendable, Hashable, Codable {
    /// Values below this are good.
    public var goodBelow: Double
    /// Values above this are critical.
    public var criticalAbove: Double

    /// Bands with these limits, in the figure's unit.
    public init(goodBelow: Double, criticalAbove: Double) {
        self.goodBelow = goodBelow
        self.criticalAbove = criticalAbove
    }

    /// The band of `value` (in the figure's unit); `nil` without a finite value.
    public func band(of value: Double?) -> Band? {
        guard let value, value.isFinite else { return nil }
        return value < goodBelow ? .good : value <= criticalAbove ? .warning : .critical
    }

    /// What is wrong with the limits for `figure`, naming the field under `path`
    /// (`bands.hitchRatio`), or `nil` when they are physical: both finite, `goodBelow`
    /// at least 0, `criticalAbove` above it, neither above the figure's ``ThresholdFigure/maximum``.
    public func problem(for figure: ThresholdFigure, path: String) -> ThresholdError? {
        let unit = figure.unit
        for (name, value) in [("goodBelow", goodBelow), ("criticalAbove", criticalAbove)] {
            guard value.isFinite else { return ThresholdError(field: "\(path).\(name)", message: "\(name) must be a finite number") }
            guard value >= 0 else { return ThresholdError(field: "\(path).\(name)", message: "\(name) must be at least 0 \(unit), not \(limitText(value))") }
            guard value <= figure.maximum else {
                return ThresholdError(field: "\(path).\(name)", message: "\(name) must be at most \(limitText(figure.maximum)) \(unit) (the most \(figure.label.lowercased()) can be), not \(limitText(value))")
            }
        }
        guard goodBelow < criticalAbove else {
            return ThresholdError(field: "\(path).criticalAbove", message: "criticalAbove (\(limitText(criticalAbove)) \(unit)) must be above goodBelow (\(limitText(goodBelow)) \(unit))")
        }
        return nil
    }
}

/// When a comparison calls a figure changed: the change must be at least ``minimumChange``
/// of the baseline (besides its confidence interval excluding zero), and each side must
/// rest on at least ``minimumVisits`` visits.
public struct VerdictRules: Sendable, Hashable, Codable {
    /// The smallest change that can be significant, as a fraction of the baseline (0.05 = 5 %).
    public var minimumChange: Double
    /// The fewest visits on each side (baseline and candidate) for a verdict.
    public var minimumVisits: Int

    /// Rules with these minimums.
    public init(minimumChange: Double, minimumVisits: Int) {
        self.minimumChange = minimumChange
        self.minimumVisits = minimumVisits
    }

    /// The rules when an app sets none, as they were fixed before apps could set them: 5 %
    /// of the baseline (``CollectorQueries/minimumRelativeChange``), and two visits per
    /// side, the fewest an interval can be computed from (``RatioStatistics/standardError``).
    public static let standard = VerdictRules(minimumChange: 0.05, minimumVisits: 2)

    /// The largest minimum change accepted: 10, a change of 1,000 % of the baseline.
    public static let maximumChange = 10.0
    /// The largest minimum sample accepted, in visits.
    public static let maximumVisits = 1_000_000_000
}

/// A limit as briefly as it is exact, for messages: `5`, `0.0175`, `nan`.
func limitText(_ value: Double) -> String {
    value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}

/// A threshold the collector refuses, naming the field as a JSON path
/// (`bands.hitchRatio.goodBelow`, `verdict.minimumVisits`).
public struct ThresholdError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field at fault, as a path into the request body.
    public var field: String
    /// What is wrong, for a person.
    public var message: String

    /// An error naming `field`.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// "field: message".
    public var description: String { "\(field): \(message)" }
}

/// Where a threshold in effect comes from.
public enum ThresholdSource: String, Sendable, Hashable, Codable, CaseIterable {
    /// The app set it.
    case app
    /// The app set nothing; Framescope's default applies (Apple's guidance for the hitch ratio).
    case `default`
    /// Neither: the figure has no bands.
    case none
}

/// An app's own thresholds: bands for the figures it chose, the verdict's minimum change
/// and sample, and the installations a version needs to take part in regression alerts.
/// Whatever is `nil` or absent takes its default (``ThresholdFigure/defaultBands``,
/// ``VerdictRules/standard``, ``AlertRules/standard``), so an app that sets nothing is
/// judged as before apps could set thresholds.
///
/// Its JSON form is the body of `PUT /v1/apps/{app}/thresholds`:
/// `{"bands": {"hitchRatio": {"goodBelow": 4, "criticalAbove": 8}}, "verdict": {"minimumChange": 0.1, "minimumVisits": 50},
/// "alerts": {"minimumInstallations": 50}}`.
public struct AppThresholds: Sendable, Hashable {
    /// The bands the app set, by figure.
    public var bands: [ThresholdFigure: BandLimits]
    /// The minimum change the app set (a fraction of the baseline), or `nil` for the default.
    public var minimumChange: Double?
    /// The minimum visits per side the app set, or `nil` for the default.
    public var minimumVisits: Int?
    /// The fewest distinct installations a version needs to take part in regression alerts
    /// (``AlertRules/minimumInstallations``), or `nil` for the default.
    public var minimumInstallations: Int?

    /// Thresholds with these settings; by default none (every default applies).
    public init(bands: [ThresholdFigure: BandLimits] = [:], minimumChange: Double? = nil, minimumVisits: Int? = nil,
                minimumInstallations: Int? = nil) {
        self.bands = bands
        self.minimumChange = minimumChange
        self.minimumVisits = minimumVisits
        self.minimumInstallations = minimumInstallations
    }

    /// Whether the app set nothing.
    public var isEmpty: Bool { bands.isEmpty && minimumChange == nil && minimumVisits == nil && minimumInstallations == nil }

    /// The bands in effect for `figure`: the app's, else the default (possibly none).
    public func bandLimits(for figure: ThresholdFigure) -> BandLimits? {
        bands[figure] ?? figure.defaultBands
    }

    /// Where the bands in effect for `figure` come from.
    public func source(of figure: ThresholdFigure) -> ThresholdSource {
        bands[figure] != nil ? .app : figure.defaultBands != nil ? .default : .none
    }

    /// The band of `value` (in `figure`'s unit) under the bands in effect; `nil` without a value or bands.
    public func band(of value: Double?, figure: ThresholdFigure) -> Band? {
        bandLimits(for: figure)?.band(of: value)
    }

    /// The verdict rules in effect: the app's minimums where set, the standard ones otherwise.
    public var verdictRules: VerdictRules {
        VerdictRules(minimumChange: minimumChange ?? VerdictRules.standard.minimumChange,
                     minimumVisits: minimumVisits ?? VerdictRules.standard.minimumVisits)
    }

    /// The alert rules in effect: the app's minimum installations where set, the standard one otherwise.
    public var alertRules: AlertRules {
        AlertRules(minimumInstallations: minimumInstallations ?? AlertRules.standard.minimumInstallations)
    }

    /// These settings with every setting of `other` laid over them (what `framescope apps
    /// thresholds` does with the options it is given).
    public func overlaid(with other: AppThresholds) -> AppThresholds {
        var result = self
        result.bands.merge(other.bands) { _, new in new }
        result.minimumChange = other.minimumChange ?? minimumChange
        result.minimumVisits = other.minimumVisits ?? minimumVisits
        result.minimumInstallations = other.minimumInstallations ?? minimumInstallations
        return result
    }

    /// The first thing wrong with the settings, naming its field, or `nil` when all are
    /// physical: each band's limits finite, from 0 to the figure's maximum, good below
    /// critical; the minimum change finite, from 0 to ``VerdictRules/maximumChange``; the
    /// minimum sample at least 2 visits (an interval needs two) and at most ``VerdictRules/maximumVisits``;
    /// the minimum installations from 0 to ``AlertRules/maximumInstallations``.
    public func problem() -> ThresholdError? {
        for figure in ThresholdFigure.allCases {
            if let limits = bands[figure], let problem = limits.problem(for: figure, path: "bands.\(figure.rawValue)") { return problem }
        }
        if let minimumChange {
            guard minimumChange.isFinite, minimumChange >= 0, minimumChange <= VerdictRules.maximumChange else {
                return ThresholdError(field: "verdict.minimumChange",
                                      message: "minimumChange is a fraction of the baseline (0.05 = 5 %) from 0 to \(limitText(VerdictRules.maximumChange)), not \(limitText(minimumChange))")
            }
        }
        if let minimumVisits {
            guard minimumVisits >= 2, minimumVisits <= VerdictRules.maximumVisits else {
                return ThresholdError(field: "verdict.minimumVisits",
                                      message: "minimumVisits must be a whole number from 2 (a confidence interval needs two visits per side) to \(VerdictRules.maximumVisits), not \(minimumVisits)")
            }
        }
        if let minimumInstallations {
            guard minimumInstallations >= 0, minimumInstallations <= AlertRules.maximumInstallations else {
                return ThresholdError(field: "alerts.minimumInstallations",
                                      message: "minimumInstallations must be a whole number of installations from 0 (every version takes part) to \(AlertRules.maximumInstallations), not \(minimumInstallations)")
            }
        }
        return nil
    }

    /// The settings when they are physical.
    /// - Throws: ``ThresholdError`` naming the first field at fault (``problem()``).
    public func validated() throws(ThresholdError) -> AppThresholds {
        if let problem = problem() { throw problem }
        return self
    }
}
