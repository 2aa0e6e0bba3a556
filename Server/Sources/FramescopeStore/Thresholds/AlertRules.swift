/// Which app versions take part in regression alerts: a version is put in the chain of
/// consecutive versions (``AlertEvaluator``) only when at least ``minimumInstallations``
/// distinct installations sent visits of it over the range evaluated.
///
/// The ingest key ships inside every copy of the app, so anyone can send visits of a
/// version that was never released. One installation (or a few) can send any number of
/// visits, but each installation is one id in the rollups' device sketches
/// (``DeviceSketch``): a version only a few installations sent, a test build or an
/// invented one, neither breaks the chain between real releases nor raises alerts of its own.
public struct AlertRules: Sendable, Hashable {
    /// The fewest distinct installations (``DeviceSketch/estimate``, about ±5 %) that must
    /// have sent a version over the range evaluated for it to take part in alerts; 0 lets
    /// every version with visits take part (the rule of before, for an app whose batches
    /// carry no `installationId`).
    public var minimumInstallations: Int

    /// Rules with this minimum, in installations.
    public init(minimumInstallations: Int) {
        self.minimumInstallations = minimumInstallations
    }

    /// The rules when an app sets none: 20 installations, more than a tester's or an
    /// attacker's handful of devices and fewer than a release's first hours reach in all
    /// but the smallest fleets.
    public static let standard = AlertRules(minimumInstallations: 20)

    /// The largest minimum accepted, in installations.
    public static let maximumInstallations = 1_000_000_000
}
