/// The entries of the vocabulary of figures: the report metrics whole and in motion, with
/// what some of them add (a ratio the per-visit statistics keep, default bands, a band
/// maximum), and the figures no report key has.
extension Figure {
    /// Hitch time per second of the whole visit (ms/s); per visit Σ hitch ms / Σ duration s
    /// (storage id 1); Apple's bands: good below 5 ms/s, critical above 10. Hitch time cannot
    /// exceed the time it is measured over, so no limit is above 1,000 ms/s.
    public static let hitchRatio = Figure(reporting: .hitchRatio, scope: .whole,
                                          ratio: Ratio(storageID: 1, numerator: { $0.hitchTime * 1000 }, denominator: { $0.duration }),
                                          defaultBands: Bands(warning: 5, critical: 10), bandMaximum: 1000)
    /// Hitch time per second while scrolling or animating (ms/s), over the motion reports
    /// (storage id 2); the hitch ratio's bands.
    public static let motionHitchRatio = Figure(reporting: .hitchRatio, scope: .motion,
                                                ratio: Ratio(storageID: 2, numerator: { $0.hitchTime * 1000 }, denominator: { $0.duration }),
                                                defaultBands: Bands(warning: 5, critical: 10), bandMaximum: 1000)
    /// Hang time per hour (s/h); per visit Σ hang s / Σ duration h (storage id 3); no limit
    /// above the hour (3,600 s/h).
    public static let hangRate = Figure(reporting: .hangRate, scope: .whole,
                                        ratio: Ratio(storageID: 3, numerator: { $0.hangTime }, denominator: { $0.duration / 3600 }),
                                        bandMaximum: 3600)
    /// Frames per second; per visit Σ frames / Σ duration s (storage id 4); no bands.
    public static let averageFPS = Figure(reporting: .averageFPS, scope: .whole,
                                          ratio: Ratio(storageID: 4, numerator: { Double($0.frames) }, denominator: { $0.duration }))
    /// The 95th-percentile frame duration (s); an app may set bands, none above the longest
    /// visit the collector accepts (86,400 s).
    public static let frameDurationP95 = Figure(reporting: .frameDurationP95, scope: .whole, bandMaximum: 86_400)

    /// Frozen frames per 1,000 frames: 1000 · Σ frozen / Σ frames (storage id 5); no limit
    /// above 1,000 per 1,000.
    public static let frozenFramesPerThousand: Figure = {
        let ratio = Ratio(storageID: 5, numerator: { Double($0.frozenFrames) * 1000 }, denominator: { Double($0.frames) })
        return Figure(name: "frozenFramesPerThousand", metric: .frozenFrames, scope: .whole, unit: "per 1000 frames",
                      direction: .lowerIsBetter, label: "Frozen frames", labelWithUnit: "Frozen per 1000 frames", ratio: ratio,
                      defaultBands: nil, bandMaximum: 1000,
                      read: { report in ratio.parts(of: report).map { $0.numerator / $0.denominator } })
    }()

    /// The entries that add something to a report metric, or that no metric has.
    private static let registered: [Figure] = [hitchRatio, motionHitchRatio, hangRate, averageFPS, frameDurationP95, frozenFramesPerThousand]

    /// Every figure a query accepts: each report metric of the whole visit, then each in
    /// motion (`motion.` and the metric's name), then ``frozenFramesPerThousand``.
    public static let all: [Figure] = Metric.allCases.map { report($0) } + Metric.allCases.map { motion($0) } + [frozenFramesPerThousand]

    /// The figures the collector keeps per-visit statistics of, by storage id.
    public static let withRatio: [Figure] = all.filter { $0.ratio != nil }.sorted { ($0.ratio?.storageID ?? 0) < ($1.ratio?.storageID ?? 0) }

    /// The figure of `metric` over the whole visit.
    public static func report(_ metric: Metric) -> Figure {
        registered.first { $0.scope == .whole && $0.name == metric.rawValue } ?? Figure(reporting: metric, scope: .whole)
    }

    /// The figure of `metric` over the visit's motion report (`motion.hitchRatio`).
    public static func motion(_ metric: Metric) -> Figure {
        registered.first { $0.scope == .motion && $0.metric == metric } ?? Figure(reporting: metric, scope: .motion)
    }

    /// The figure called `name` (`hitchRatio`, `motion.frameDuration.p95`), or `nil`.
    public init?(name: String) {
        guard let found = Self.all.first(where: { $0.name == name }) else { return nil }
        self = found
    }

    /// The figure of a report metric over `scope`: its name (with `motion.` in motion),
    /// unit, direction and label ("… in motion") come from the metric.
    init(reporting metric: Metric, scope: Scope, ratio: Ratio? = nil, defaultBands: Bands? = nil, bandMaximum: Double? = nil) {
        let label = scope == .motion ? metric.label + " in motion" : metric.label
        let unit = metric.unit.symbol
        self.init(name: scope == .motion ? "motion." + metric.rawValue : metric.rawValue, metric: metric, scope: scope, unit: unit,
                  direction: metric.direction, label: label,
                  labelWithUnit: metric.unit == .fps || metric.unit == .count ? label : "\(label) (\(unit))",
                  ratio: ratio, defaultBands: defaultBands, bandMaximum: bandMaximum, read: { metric.value(in: $0) })
    }
}
