import FramescopeCore

extension AppThresholds: Codable {
    enum Keys: String, CodingKey { case bands, verdict, alerts }
    enum VerdictKeys: String, CodingKey { case minimumChange, minimumVisits }
    enum AlertKeys: String, CodingKey { case minimumInstallations }

    /// A band's key: a ``ThresholdFigure``'s name.
    struct FigureKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// `{"bands": {figure: {"goodBelow", "criticalAbove"}, …}, "verdict": {"minimumChange"?, "minimumVisits"?},
    /// "alerts": {"minimumInstallations"?}}`, with only what the app set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var bandsContainer = container.nestedContainer(keyedBy: FigureKey.self, forKey: .bands)
        for figure in ThresholdFigure.allCases {
            if let limits = bands[figure] { try bandsContainer.encode(limits, forKey: FigureKey(stringValue: figure.rawValue)) }
        }
        var verdict = container.nestedContainer(keyedBy: VerdictKeys.self, forKey: .verdict)
        try verdict.encodeIfPresent(minimumChange, forKey: .minimumChange)
        try verdict.encodeIfPresent(minimumVisits, forKey: .minimumVisits)
        var alerts = container.nestedContainer(keyedBy: AlertKeys.self, forKey: .alerts)
        try alerts.encodeIfPresent(minimumInstallations, forKey: .minimumInstallations)
    }

    /// Reads the form ``encode(to:)`` writes; a band of an unknown figure is an error, and
    /// a form written before a setting existed (no `alerts`) reads with that setting unset.
    /// Values are not checked here (``problem()`` does that).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        var bands: [ThresholdFigure: BandLimits] = [:]
        if container.contains(.bands), try !container.decodeNil(forKey: .bands) {
            let bandsContainer = try container.nestedContainer(keyedBy: FigureKey.self, forKey: .bands)
            for key in bandsContainer.allKeys {
                guard let figure = ThresholdFigure(rawValue: key.stringValue) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: bandsContainer, debugDescription: "no bands for '\(key.stringValue)'")
                }
                bands[figure] = try bandsContainer.decodeIfPresent(BandLimits.self, forKey: key)
            }
        }
        var minimumChange: Double?
        var minimumVisits: Int?
        if container.contains(.verdict), try !container.decodeNil(forKey: .verdict) {
            let verdict = try container.nestedContainer(keyedBy: VerdictKeys.self, forKey: .verdict)
            minimumChange = try verdict.decodeIfPresent(Double.self, forKey: .minimumChange)
            minimumVisits = try verdict.decodeIfPresent(Int.self, forKey: .minimumVisits)
        }
        var minimumInstallations: Int?
        if container.contains(.alerts), try !container.decodeNil(forKey: .alerts) {
            let alerts = try container.nestedContainer(keyedBy: AlertKeys.self, forKey: .alerts)
            minimumInstallations = try alerts.decodeIfPresent(Int.self, forKey: .minimumInstallations)
        }
        self.init(bands: bands, minimumChange: minimumChange, minimumVisits: minimumVisits, minimumInstallations: minimumInstallations)
    }
}

/// The bands in effect for one figure, and where they come from.
public struct EffectiveBand: Sendable, Hashable, Codable {
    /// The figure's name in the query API (`hitchRatio`, `frameDuration.p95`).
    public var metric: String
    /// Its label ("Hitch ratio in motion").
    public var label: String
    /// The unit of the limits (`ms/s`).
    public var unit: String
    /// Values below this are good; `nil` when the figure has no bands.
    public var goodBelow: Double?
    /// Values above this are critical; `nil` when the figure has no bands.
    public var criticalAbove: Double?
    /// The app's setting, the default, or none.
    public var source: ThresholdSource

    /// The bands of `figure` in effect under `settings`.
    public init(_ figure: ThresholdFigure, settings: AppThresholds) {
        let limits = settings.bandLimits(for: figure)
        metric = figure.rawValue
        label = figure.label
        unit = figure.unit
        goodBelow = limits?.goodBelow
        criticalAbove = limits?.criticalAbove
        source = settings.source(of: figure)
    }

    enum CodingKeys: String, CodingKey { case metric, label, unit, goodBelow, criticalAbove, source }

    /// Every key, with `null` limits for a figure without bands.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(metric, forKey: .metric)
        try container.encode(label, forKey: .label)
        try container.encode(unit, forKey: .unit)
        try container.encode(goodBelow, forKey: .goodBelow)
        try container.encode(criticalAbove, forKey: .criticalAbove)
        try container.encode(source, forKey: .source)
    }
}

/// The verdict rules in effect, and where each comes from.
public struct EffectiveVerdict: Sendable, Hashable, Codable {
    /// The smallest change that can be significant, a fraction of the baseline.
    public var minimumChange: Double
    /// The app's setting or the default.
    public var minimumChangeSource: ThresholdSource
    /// The fewest visits on each side for a verdict.
    public var minimumVisits: Int
    /// The app's setting or the default.
    public var minimumVisitsSource: ThresholdSource

    /// The rules in effect under `settings`.
    public init(settings: AppThresholds) {
        let rules = settings.verdictRules
        minimumChange = rules.minimumChange
        minimumChangeSource = settings.minimumChange != nil ? .app : .default
        minimumVisits = rules.minimumVisits
        minimumVisitsSource = settings.minimumVisits != nil ? .app : .default
    }
}

/// The alert rules in effect, and where they come from.
public struct EffectiveAlertRules: Sendable, Hashable, Codable {
    /// The fewest distinct installations a version needs to take part in regression alerts.
    public var minimumInstallations: Int
    /// The app's setting or the default.
    public var minimumInstallationsSource: ThresholdSource
    /// The most alerts one evaluation raises for the app (``AlertEvaluator/maximumAlertsPerPass``,
    /// fixed): more wait for the next pass, an hour later.
    public var maximumAlertsPerPass: Int

    /// The rules in effect under `settings`.
    public init(settings: AppThresholds) {
        minimumInstallations = settings.alertRules.minimumInstallations
        minimumInstallationsSource = settings.minimumInstallations != nil ? .app : .default
        maximumAlertsPerPass = AlertEvaluator.maximumAlertsPerPass
    }
}

/// The answer of `GET` and `PUT /v1/apps/{app}/thresholds`: what the app set (the form a
/// `PUT` takes, so a client can read, change and send it back) and what is in effect.
public struct ThresholdsResponse: Sendable, Hashable, Codable {
    /// The app.
    public var app: String
    /// What the app set; absent fields take their defaults.
    public var settings: AppThresholds
    /// The bands in effect, one per ``ThresholdFigure``, in its order.
    public var bands: [EffectiveBand]
    /// The verdict rules in effect.
    public var verdict: EffectiveVerdict
    /// The alert rules in effect.
    public var alerts: EffectiveAlertRules

    /// The answer for `app` with `settings`.
    public init(app: String, settings: AppThresholds) {
        self.app = app
        self.settings = settings
        bands = ThresholdFigure.allCases.map { EffectiveBand($0, settings: settings) }
        verdict = EffectiveVerdict(settings: settings)
        alerts = EffectiveAlertRules(settings: settings)
    }
}
