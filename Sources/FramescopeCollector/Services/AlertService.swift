import Foundation
import Logging
import ServiceLifecycle

/// Evaluates regressions and delivers alerts in the background: when the collector starts
/// and then every ``interval`` (an hour), ``AlertEvaluator`` raises the alerts of every
/// app, then ``WebhookDelivery`` delivers every pending one to its webhooks.
///
/// Runs in the server's service group (``Collector/services(retention:publicURL:logger:)``);
/// graceful shutdown stops it between deliveries. A failed pass is logged and tried again
/// at the next interval; it never stops the server.
public struct AlertService: Service {
    /// The store to evaluate and record in.
    public var store: any CollectorStore
    /// The collector's address as webhook receivers reach it, for the links in the payload.
    public var publicURL: String
    /// Time between passes.
    public var interval: Duration
    /// Where passes are logged.
    public var logger: Logger
    /// The current time, Unix seconds.
    public var clock: @Sendable () -> Double

    /// An alert service over `store`.
    /// - Parameters:
    ///   - publicURL: The collector's base URL for links (`https://collector.example.com`).
    ///   - interval: Time between passes (default one hour).
    public init(store: any CollectorStore, publicURL: String, interval: Duration = .seconds(3600),
                logger: Logger = Logger(label: "framescope.alerts"), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.store = store
        self.publicURL = publicURL
        self.interval = interval
        self.logger = logger
        self.clock = clock
    }

    /// Runs a pass now and every ``interval`` until graceful shutdown, over a client of its
    /// own that it shuts down before returning.
    public func run() async throws {
        let transport = HTTPWebhookTransport()
        let delivery = WebhookDelivery(store: store, transport: transport, publicURL: publicURL, clock: clock, logger: logger)
        let evaluator = AlertEvaluator(store: store)
        let logger = logger
        let clock = clock
        await runPeriodically(every: interval, logger: logger, level: .error, failure: "alert pass failed") {
            try await Self.pass(evaluator: evaluator, delivery: delivery, now: clock(), logger: logger)
        }
        try await transport.shutdown()
    }

    /// One pass: raise what regressed at `now`, then deliver what is pending.
    /// - Returns: The alerts raised and the deliveries that ended delivered or undelivered.
    @discardableResult
    public static func pass(evaluator: AlertEvaluator, delivery: WebhookDelivery, now: Double,
                            logger: Logger) async throws -> (raised: [RegressionAlert], delivered: Int, undelivered: Int) {
        let raised = try await evaluator.evaluate(now: now)
        for alert in raised {
            logger.notice("regression alert", metadata: [
                "app": .string(alert.app), "screen": .string(alert.screen), "metric": .string(alert.metric),
                "baseline": .string(alert.baseline), "candidate": .string(alert.candidate),
            ])
        }
        let (delivered, undelivered) = try await delivery.deliverPending()
        return (raised, delivered, undelivered)
    }
}
