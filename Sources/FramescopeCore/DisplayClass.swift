/// The kind of display a visit ran on, as far as frame pacing goes.
public enum DisplayClass: String, Sendable, Hashable, CaseIterable, Codable {
    /// A 60 Hz display.
    case sixtyHertz
    /// A ProMotion display running up to 120 Hz.
    case proMotion
    /// A ProMotion display capped at 60 Hz by low-power mode.
    case proMotionCapped

    /// The class's name on the dashboard.
    public var label: String {
        switch self {
        case .sixtyHertz: "60 Hz display"
        case .proMotion: "120 Hz (ProMotion)"
        case .proMotionCapped: "capped at 60 Hz (low-power mode)"
        }
    }

    /// Whether a device whose visits outside low-power mode have these refresh rates
    /// (frames per rate, ``FrameReport/refreshRates``) has a ProMotion display: some frames
    /// came at a rate above 60 Hz.
    public static func isProMotion(refreshRates: Tally) -> Bool {
        refreshRates.entries.contains { $0.key > 60 }
    }
}

/// Quality bands of a figure with thresholds (Apple's for the hitch ratio: under 5 ms/s
/// good, 5 to 10 warning, over 10 critical).
public enum Band: String, Sendable, Hashable, CaseIterable, Codable {
    /// Under the warning threshold.
    case good
    /// From the warning threshold up to and including the critical one.
    case warning
    /// Over the critical threshold.
    case critical
}

extension Metric {
    /// The thresholds of the metric's ``Band``s in its unit (warning from, critical over),
    /// or `nil` for a metric without bands: its ``Figure``'s ``Figure/defaultBands`` (5 and
    /// 10 ms/s for ``hitchRatio``, Apple's).
    public var bandThresholds: (warning: Double, critical: Double)? {
        Figure.report(self).defaultBands.map { ($0.warning, $0.critical) }
    }

    /// The band of `value` (in the metric's unit), or `nil` without a value or bands.
    public func band(of value: Double?) -> Band? {
        guard let value, let (warning, critical) = bandThresholds else { return nil }
        return value < warning ? .good : value <= critical ? .warning : .critical
    }
}
