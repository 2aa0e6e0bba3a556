/// MetricKit's forwarding as a part of the SDK (``SDKPart``): the forwarder's upload loop
/// and, where MetricKit exists, the subscriber that hands it each payload.
@MainActor
final class MetricKitForwarding: SDKPart {
    /// The payloads' queue and uploader.
    let forwarder: MetricKitForwarder
    private var task: Task<Void, Never>?
    /// MetricKit's subscriber while subscribed, where there is MetricKit (MetricKit holds
    /// it weakly, so this part keeps it).
    var subscriber: AnyObject?

    /// A part running `forwarder`.
    init(forwarder: MetricKitForwarder) {
        self.forwarder = forwarder
    }

    /// Starts the upload loop, then subscribes to MetricKit.
    func start() {
        let forwarder = forwarder
        task = Task.detached { await forwarder.run() }
        subscribe()
    }

    /// Flushes the payloads waiting (``MetricKitForwarder/flush(timeout:)``).
    func flush(timeout: Double) async -> Bool {
        await forwarder.flush(timeout: timeout)
    }

    /// Unsubscribes, then stops the upload loop; the payloads stay in their folder.
    func stop() async {
        unsubscribe()
        await forwarder.stop()
        await task?.value
    }

    /// Adds the forwarder's counters.
    func addStatistics(to statistics: inout Framescope.Statistics) async {
        statistics.metricKit = await forwarder.currentStatistics
    }

    #if !(canImport(MetricKit) && os(iOS))
    /// Without MetricKit there is nothing to subscribe to: payloads come only through
    /// ``Framescope/forwardMetricKitPayload(_:)``.
    func subscribe() {}

    /// Nothing was subscribed.
    func unsubscribe() {}
    #endif
}
