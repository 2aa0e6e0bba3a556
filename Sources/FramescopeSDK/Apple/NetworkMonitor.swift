#if canImport(Network)
import Dispatch
import FramescopeCore
import Foundation
import Network

/// Keeps a ``NetworkStateBox`` current from `NWPathMonitor` (iOS 12), on a queue of its own,
/// so each visit records the network it was measured on. It only reads the path; which
/// interface counts is decided by `VisitContext.Network(isSatisfied:usesWiFi:usesCellular:usesWired:)`.
///
/// ```swift
/// let network = NetworkMonitor()
/// network.start()
/// let framescope = try Framescope(configuration: .init(
///     collector: collectorURL, ingestKey: "fsi_…", app: app, device: device,
///     deviceState: { [state = network.state] in DeviceState.current(network: state) }))
/// ```
///
/// Keep the monitor as long as the SDK runs (releasing it stops it). A stopped monitor cannot start again (a
/// cancelled `NWPathMonitor` cannot); make a new one on the same box instead.
public final class NetworkMonitor {
    /// The latest network state: `.unknown` until the first path arrives.
    public let state: NetworkStateBox
    private let monitor = NWPathMonitor()   // NWPathMonitor(), iOS 12: every interface type
    private let queue = DispatchQueue(label: "Framescope.NetworkMonitor", qos: .utility)   // DispatchQueue with a QoS class, iOS 8
    private var started = false

    /// A monitor writing to `state` (a new box by default).
    public init(state: NetworkStateBox = NetworkStateBox()) {
        self.state = state
    }

    /// Starts watching the network; the first path arrives at once. Later calls do nothing.
    public func start() {
        guard !started else { return }
        started = true
        let state = state
        // NWPathMonitor.pathUpdateHandler, iOS 12: called on `queue` with each new path.
        monitor.pathUpdateHandler = { path in
            // NWPath.status (iOS 12) and NWPath.usesInterfaceType(_:) (iOS 12).
            state.update(VisitContext.Network(isSatisfied: path.status == .satisfied,
                                              usesWiFi: path.usesInterfaceType(.wifi),
                                              usesCellular: path.usesInterfaceType(.cellular),
                                              usesWired: path.usesInterfaceType(.wiredEthernet)))
        }
        monitor.start(queue: queue)   // NWPathMonitor.start(queue:), iOS 12
    }

    /// Stops watching for good; the box keeps the last state.
    public func stop() {
        monitor.cancel()   // NWPathMonitor.cancel(), iOS 12
    }

    deinit {
        monitor.cancel()
    }
}

extension DeviceState {
    /// The device's state now: low-power mode and thermal state from `ProcessInfo`, the
    /// network unknown. Pass ``current(network:)`` a ``NetworkMonitor``'s box to know it.
    public static func current() -> DeviceState {
        reading(network: .unknown)
    }

    /// The device's state now: the network `box` last heard of (see ``NetworkMonitor``),
    /// low-power mode and thermal state from `ProcessInfo`. Safe to call from any thread
    /// (``Framescope/Configuration/deviceState`` is called off the main thread).
    public static func current(network box: NetworkStateBox) -> DeviceState {
        reading(network: box.current)
    }

    private static func reading(network: VisitContext.Network) -> DeviceState {
        let info = ProcessInfo.processInfo
        // ProcessInfo.thermalState, iOS 11.
        let thermal: VisitContext.ThermalState = switch info.thermalState {
        case .nominal: .nominal
        case .fair: .fair
        case .serious: .serious
        case .critical: .critical
        @unknown default: .nominal
        }
        // ProcessInfo.isLowPowerModeEnabled, iOS 9.
        return DeviceState(network: network, lowPowerMode: info.isLowPowerModeEnabled, thermalState: thermal)
    }
}
#endif
