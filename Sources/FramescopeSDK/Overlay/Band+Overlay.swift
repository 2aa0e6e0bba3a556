import FramescopeCore

extension Band {
    /// The colour the live overlay shows for this band, as sRGB hex (green, amber, red;
    /// readable on the overlay's dark text).
    public var overlayColourHex: String {
        switch self {
        case .good: "#34C759"
        case .warning: "#FFCC00"
        case .critical: "#FF3B30"
        }
    }

    /// The hitch-ratio band of `hitchRatio` (ms/s) by `Metric.hitchRatio`'s thresholds
    /// (Apple's: under 5 good, 5 to 10 warning, over 10 critical); `nil` for no ratio or one
    /// that is not a finite, non-negative number.
    public static func hitchRatio(_ hitchRatio: Double?) -> Band? {
        guard let hitchRatio, hitchRatio.isFinite, hitchRatio >= 0 else { return nil }
        return Metric.hitchRatio.band(of: hitchRatio)
    }
}
