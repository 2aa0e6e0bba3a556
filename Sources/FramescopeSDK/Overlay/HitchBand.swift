import FramescopeCore

/// Apple's bands for the hitch ratio (ms of hitch per s of frames): good under 5, warning
/// from 5 to 10, critical over 10. The overlay's colour and word.
public enum HitchBand: String, Sendable, Hashable, CaseIterable, Codable {
    /// Under 5 ms/s: hitches are rare.
    case good
    /// 5 to 10 ms/s: users notice.
    case warning
    /// Over 10 ms/s: the app stutters.
    case critical

    /// The band of `hitchRatio` (ms/s); `nil` for no ratio or one that is not a number.
    public init?(hitchRatio: Double?) {
        guard let hitchRatio, hitchRatio.isFinite, hitchRatio >= 0 else { return nil }
        self = hitchRatio < 5 ? .good : hitchRatio <= 10 ? .warning : .critical
    }

    /// The colour the overlay shows, as sRGB hex (green, amber, red; readable on a dark pill).
    public var colourHex: String {
        switch self {
        case .good: "#34C759"
        case .warning: "#FFCC00"
        case .critical: "#FF3B30"
        }
    }
}
