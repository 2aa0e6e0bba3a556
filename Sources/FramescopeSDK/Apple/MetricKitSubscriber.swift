#if canImport(MetricKit) && os(iOS)
import FramescopeCore
import Foundation
import MetricKit

/// MetricKit's subscriber: hands each daily metric payload and each diagnostic payload to the
/// SDK's forwarder, written to disk before the callback returns. Held by ``MetricKitForwarding``;
/// added to `MXMetricManager.shared` when the SDK starts and removed when it stops.
final class MetricKitSubscriber: NSObject, MXMetricManagerSubscriber, @unchecked Sendable {
    // @unchecked: the only stored property is a let of a Sendable actor.
    private let forwarder: MetricKitForwarder

    init(forwarder: MetricKitForwarder) {
        self.forwarder = forwarder
    }

    /// MXMetricManagerSubscriber.didReceive(_: [MXMetricPayload]), iOS 13: about once a day.
    func didReceive(_ payloads: [MXMetricPayload]) {
        for payload in payloads {
            // MXMetricPayload.jsonRepresentation(), iOS 13.
            try? forwarder.enqueue(payload.jsonRepresentation())
        }
    }

    /// MXMetricManagerSubscriber.didReceive(_: [MXDiagnosticPayload]), iOS 14: hangs, crashes,
    /// disk writes (iOS 15: at once rather than daily).
    func didReceive(_ payloads: [MXDiagnosticPayload]) {
        for payload in payloads {
            // MXDiagnosticPayload.jsonRepresentation(), iOS 14.
            try? forwarder.enqueue(payload.jsonRepresentation())
        }
    }
}

extension MetricKitForwarding {
    /// Adds a subscriber to `MXMetricManager.shared` (iOS 13) that forwards every payload;
    /// MetricKit holds its subscribers weakly, so the part keeps it.
    func subscribe() {
        guard subscriber == nil else { return }
        let subscriber = MetricKitSubscriber(forwarder: forwarder)
        self.subscriber = subscriber
        MXMetricManager.shared.add(subscriber)   // MXMetricManager.add(_:), iOS 13
    }

    /// Removes the subscriber; payloads MetricKit delivers later wait for the next start.
    func unsubscribe() {
        guard let subscriber = subscriber as? MetricKitSubscriber else { return }
        MXMetricManager.shared.remove(subscriber)   // MXMetricManager.remove(_:), iOS 13
        self.subscriber = nil
    }
}
#endif
