import FramescopeCore

/// The device's state that a visit records: network, low-power mode and thermal state.
public struct DeviceState: Sendable, Hashable {
    /// How the device is connected.
    public var network: VisitContext.Network
    /// Whether low-power mode is on.
    public var lowPowerMode: Bool
    /// The thermal state.
    public var thermalState: VisitContext.ThermalState

    /// Creates a state.
    public init(network: VisitContext.Network = .unknown, lowPowerMode: Bool = false,
                thermalState: VisitContext.ThermalState = .nominal) {
        self.network = network
        self.lowPowerMode = lowPowerMode
        self.thermalState = thermalState
    }
}

extension DeviceState {
    /// The context a visit or a fatal hang is sent with: this state and the custom `tags`
    /// (already checked against ``VisitContext/maximumTags`` by ``Framescope/setTag(_:for:)``).
    /// The one place the SDK turns the device's state into a ``VisitContext``.
    func visitContext(tags: [String: String]) -> VisitContext {
        VisitContext(network: network, lowPowerMode: lowPowerMode, thermalState: thermalState, tags: tags)
    }
}
