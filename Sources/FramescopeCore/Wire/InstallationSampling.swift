/// Which installations measure when an app samples: the decision is a pure function of the
/// installation id, so an installation is in or out for good (every launch, every session)
/// and never sends half of a session.
///
/// The id's UTF-8 bytes are hashed with 64-bit FNV-1a, then mixed with SplitMix64's
/// finaliser so that ids differing in one character spread over the whole range; the top
/// 53 bits give a point `u` in [0, 1), and the installation measures when `u < rate`. Raising
/// the rate keeps every installation that was in (the points do not move), so a later,
/// larger rate adds installations and drops none. The hash is fixed here, not Swift's
/// `Hasher` (seeded per process), so the same id decides the same way on every launch,
/// platform and version.
public enum InstallationSampling {
    /// The installation's point in [0, 1): it measures at every rate above it.
    /// - Parameter installationId: The installation's id (any text; its UTF-8 bytes count).
    public static func point(of installationId: String) -> Double {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in installationId.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        // SplitMix64's finaliser.
        hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
        hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 31
        return Double(hash >> 11) / Double(1 << 53)
    }

    /// Whether the installation measures at `rate` (0–1): always at 1, never at 0.
    /// - Parameters:
    ///   - installationId: The installation's id.
    ///   - rate: The share of installations that measure, 0–1; values outside are clamped.
    public static func includes(_ installationId: String, rate: Double) -> Bool {
        guard rate < 1 else { return true }
        guard rate > 0 else { return false }
        return point(of: installationId) < rate
    }
}
