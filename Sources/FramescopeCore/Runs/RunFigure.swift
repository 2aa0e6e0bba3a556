/// A figure of one run (one recording of a scroll script) that `framescope compare` judges
/// across several runs a side: what a budget can name, per run.
public enum RunFigure: String, Sendable, Hashable, Codable, CaseIterable {
    /// The hitch ratio of the run's motion (its segments), ms per s.
    case motionHitchRatio
    /// The hitch ratio of the whole run, ms per s.
    case hitchRatio
    /// Dropped frames per second of the run.
    case droppedFramesPerSecond
    /// Drop events (runs of dropped frames).
    case dropEvents
    /// The worst run of dropped frames, in frames.
    case maxDroppedFrames
    /// The 95th percentile frame duration, in seconds.
    case frameDurationP95
    /// Frozen frames (longer than 0.7 s).
    case frozenFrames
    /// Hangs (frames longer than the hang threshold).
    case hangs

    /// The figures that gate by default: the motion hitch ratio and drop events.
    public static let defaultGating: [RunFigure] = [.motionHitchRatio, .dropEvents]

    /// The figure's value in `report`, in ``unit``; nil without data (no motion, no frames).
    public func value(in report: RecordingReport) -> Double? {
        switch self {
        case .motionHitchRatio: return report.motion.flatMap { Metric.hitchRatio.value(in: $0) }
        case .hitchRatio: return Metric.hitchRatio.value(in: report.whole)
        case .droppedFramesPerSecond:
            return report.whole.duration > 0 ? Double(report.whole.droppedFrames) / report.whole.duration : nil
        case .dropEvents: return report.whole.frames > 0 ? Metric.dropEvents.value(in: report.whole) : nil
        case .maxDroppedFrames: return Metric.maxDroppedFrames.value(in: report.whole)
        case .frameDurationP95: return Metric.frameDurationP95.value(in: report.whole)
        case .frozenFrames: return report.whole.frames > 0 ? Metric.frozenFrames.value(in: report.whole) : nil
        case .hangs: return report.whole.frames > 0 ? Metric.hangs.value(in: report.whole) : nil
        }
    }

    /// The value's unit.
    public var unit: Metric.Unit {
        switch self {
        case .motionHitchRatio, .hitchRatio: .millisecondsPerSecond
        case .droppedFramesPerSecond: .fps
        case .dropEvents, .maxDroppedFrames, .frozenFrames, .hangs: .count
        case .frameDurationP95: .seconds
        }
    }

    /// Every one of them: lower is better.
    public var direction: Metric.Direction { .lowerIsBetter }

    /// The smallest change that matters by default: the larger of 10 % of the baseline's
    /// median and an absolute floor (1 ms/s of hitch ratio, 0.1 dropped frame a second, one
    /// event, frame, hang; 1 ms of p95 frame duration).
    public var defaultMinimumChange: MinimumChange {
        switch self {
        case .motionHitchRatio, .hitchRatio: MinimumChange(relative: 0.1, absolute: 1)
        case .droppedFramesPerSecond: MinimumChange(relative: 0.1, absolute: 0.1)
        case .dropEvents, .maxDroppedFrames, .frozenFrames, .hangs: MinimumChange(relative: 0.1, absolute: 1)
        case .frameDurationP95: MinimumChange(relative: 0.1, absolute: 0.001)
        }
    }
}

/// The smallest change of a figure that matters: the larger of a fraction of the baseline's
/// median and an absolute amount in the figure's unit.
public struct MinimumChange: Sendable, Hashable, Codable {
    /// A fraction of the baseline's median (0.1: 10 %).
    public var relative: Double
    /// An amount in the figure's unit.
    public var absolute: Double

    /// A minimum change (`relative` a fraction, `absolute` in the figure's unit).
    public init(relative: Double, absolute: Double) {
        self.relative = relative
        self.absolute = absolute
    }

    /// The minimum change for a baseline whose median is `median`.
    public func amount(baselineMedian median: Double) -> Double {
        max(absolute, relative * abs(median))
    }
}
