import FramescopeCore
import Foundation

extension Framescope {
    /// Queues one MetricKit payload for the collector (`POST /v1/metrickit`): the JSON of
    /// `MXMetricPayload.jsonRepresentation()` or `MXDiagnosticPayload.jsonRepresentation()`, or
    /// a list of them. On iOS the SDK subscribes to MetricKit itself when it starts and calls
    /// this for every payload (``MetricKitConfiguration/forwardsPayloads``); elsewhere an app or a test
    /// may call it with payloads of its own. The payload is on disk when this returns and is
    /// uploaded with the visits' rules (`MetricKitForwarder`); it is sent even if this
    /// installation is not sampled, since MetricKit measures every device anyway.
    /// Safe from any thread.
    /// - Throws: ``SetupError/invalidConfiguration(_:)`` when forwarding is off, or
    ///   ``SetupError/queueUnavailable(_:)`` when the payload is empty, over 4 MiB, or cannot
    ///   be written.
    public nonisolated func forwardMetricKitPayload(_ payload: Data) throws(SetupError) {
        guard let metricKit else { throw .invalidConfiguration("metricKit.forwardsPayloads is off") }
        do {
            try metricKit.enqueue(payload)
        } catch {
            throw .queueUnavailable(error.description)
        }
    }
}
