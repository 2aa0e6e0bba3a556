/// A repeatable scroll a test applies to a scroll view, frame by frame: the same script
/// gives the same offsets and segments on every run, on a device and in the frame-pipeline
/// simulator. Run one with a ``ScrollPlayer``.
///
/// As JSON, a script names its kind beside its fields, so a test can keep it in a file:
///
/// ```json
/// {"script": "accelerating", "interval": 0.4, "firstStep": 100, "stepGrowth": 30, "passes": 5, "animationDuration": 0.3}
/// {"script": "steady", "pointsPerFrame": 4, "passes": 1}
/// {"script": "fling", "velocity": 2000, "decelerationRate": 0.998, "stopVelocity": 10}
/// ```
///
/// Fields left out take their defaults; a value out of range is refused, naming the field.
public enum ScrollScript: Sendable, Hashable {
    /// A fixed number of points per frame (the detector article's test).
    case steady(SteadyScroll)
    /// A timer's growing steps over several passes (the thesis' test).
    case accelerating(AcceleratingScroll)
    /// A release at a velocity, decelerating as a scroll view does.
    case fling(FlingScroll)

    /// The kinds, as JSON names them.
    public enum Kind: String, Sendable, CaseIterable, Codable {
        /// ``ScrollScript/steady(_:)``.
        case steady
        /// ``ScrollScript/accelerating(_:)``.
        case accelerating
        /// ``ScrollScript/fling(_:)``.
        case fling
    }

    /// This script's kind.
    public var kind: Kind {
        switch self {
        case .steady: .steady
        case .accelerating: .accelerating
        case .fling: .fling
        }
    }

    /// What is wrong with this script's values, naming the field; `nil` when it is usable.
    public var problem: String? {
        switch self {
        case let .steady(script): script.problem
        case let .accelerating(script): script.problem
        case let .fling(script): script.problem
        }
    }
}

extension ScrollScript: Codable {
    private enum CodingKeys: String, CodingKey {
        case script, pointsPerFrame, passes, interval, firstStep, stepGrowth, animationDuration, velocity, decelerationRate, stopVelocity
    }

    /// Reads `{"script": kind, …fields}`, refusing an unknown kind or a value out of range
    /// with a `DecodingError` whose path names the field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(Kind.self, forKey: .script)
        switch kind {
        case .steady:
            let defaults = SteadyScroll()
            self = .steady(SteadyScroll(
                pointsPerFrame: try container.decodeIfPresent(Double.self, forKey: .pointsPerFrame) ?? defaults.pointsPerFrame,
                passes: try container.decodeIfPresent(Int.self, forKey: .passes) ?? defaults.passes))
        case .accelerating:
            let defaults = AcceleratingScroll.thesis
            self = .accelerating(AcceleratingScroll(
                interval: try container.decodeIfPresent(Double.self, forKey: .interval) ?? defaults.interval,
                firstStep: try container.decodeIfPresent(Double.self, forKey: .firstStep) ?? defaults.firstStep,
                stepGrowth: try container.decodeIfPresent(Double.self, forKey: .stepGrowth) ?? defaults.stepGrowth,
                passes: try container.decodeIfPresent(Int.self, forKey: .passes) ?? defaults.passes,
                animationDuration: try container.decodeIfPresent(Double.self, forKey: .animationDuration) ?? defaults.animationDuration))
        case .fling:
            self = .fling(FlingScroll(
                velocity: try container.decode(Double.self, forKey: .velocity),
                decelerationRate: try container.decodeIfPresent(Double.self, forKey: .decelerationRate) ?? FlingScroll.normalDecelerationRate,
                stopVelocity: try container.decodeIfPresent(Double.self, forKey: .stopVelocity) ?? 10))
        }
        if let problem {
            let field = problem.prefix { $0 != " " }
            let key = CodingKeys(stringValue: String(field)) ?? .script
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: container.codingPath + [key], debugDescription: problem))
        }
    }

    /// Writes `{"script": kind, …fields}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .script)
        switch self {
        case let .steady(script):
            try container.encode(script.pointsPerFrame, forKey: .pointsPerFrame)
            try container.encode(script.passes, forKey: .passes)
        case let .accelerating(script):
            try container.encode(script.interval, forKey: .interval)
            try container.encode(script.firstStep, forKey: .firstStep)
            try container.encode(script.stepGrowth, forKey: .stepGrowth)
            try container.encode(script.passes, forKey: .passes)
            try container.encode(script.animationDuration, forKey: .animationDuration)
        case let .fling(script):
            try container.encode(script.velocity, forKey: .velocity)
            try container.encode(script.decelerationRate, forKey: .decelerationRate)
            try container.encode(script.stopVelocity, forKey: .stopVelocity)
        }
    }
}
