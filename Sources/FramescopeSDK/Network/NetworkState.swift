import FramescopeCore

extension VisitContext.Network {
    /// The network a path monitor reports (`NWPathMonitor`'s `NWPath`): offline when the
    /// path is not satisfied, else the first interface in use of Wi-Fi, cellular and wired
    /// (the order `NWPath.usesInterfaceType` is asked in), else unknown (a VPN or loopback alone).
    ///
    /// - Parameters:
    ///   - isSatisfied: `path.status == .satisfied`.
    ///   - usesWiFi: `path.usesInterfaceType(.wifi)`.
    ///   - usesCellular: `path.usesInterfaceType(.cellular)`.
    ///   - usesWired: `path.usesInterfaceType(.wiredEthernet)`.
    public init(isSatisfied: Bool, usesWiFi: Bool, usesCellular: Bool, usesWired: Bool) {
        if !isSatisfied {
            self = .offline
        } else if usesWiFi {
            self = .wifi
        } else if usesCellular {
            self = .cellular
        } else if usesWired {
            self = .ethernet
        } else {
            self = .unknown
        }
    }
}

/// The latest network state, written by a path monitor's queue and read when a visit
/// closes: a lock around one value.
public final class NetworkStateBox: Sendable {
    private let state = Locked(VisitContext.Network.unknown)

    /// A box holding `.unknown` until the first update.
    public init() {}

    /// The latest state.
    public var current: VisitContext.Network { state.withLock { $0 } }

    /// Stores a new state.
    public func update(_ network: VisitContext.Network) {
        state.withLock { $0 = network }
    }
}
