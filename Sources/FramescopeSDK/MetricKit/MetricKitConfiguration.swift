/// Whether the SDK forwards MetricKit's payloads to the collector (`POST /v1/metrickit`).
/// The payloads are queued and uploaded with the visits' ``DeliveryConfiguration`` (its
/// queue bound and retry delays), in a folder of their own (see `MetricKitForwarder`).
public struct MetricKitConfiguration: Sendable, Hashable {
    /// Whether MetricKit's payloads are forwarded where MetricKit exists (default true); off,
    /// ``Framescope/forwardMetricKitPayload(_:)`` throws. See docs/sdk.md for the cost.
    public var forwardsPayloads: Bool

    /// Creates MetricKit settings; see the property for the default.
    public init(forwardsPayloads: Bool = true) {
        self.forwardsPayloads = forwardsPayloads
    }
}
