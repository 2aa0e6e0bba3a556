import Foundation
import Logging
import ServiceLifecycle

/// Evaluates regressions and delivers alerts in the background: when the collector starts
/// and then every ``interval`` (an hour), ``AlertEvaluator`` raises the alerts of every
/// app, at most ``AlertEvaluator/maximumAlertsPerPass`` each, then ``WebhookDelivery``
/// delivers every pending one to its webhooks. Regressions held back by that limit are
/// logged (a warning naming the app and how many wait) and counted in
/// `framescope_alerts_held_back{app}`; the next passes raise them.
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
    /// Where raised and held-back alerts are counted, or `nil` not to count them.
    public var metrics: CollectorMetrics?

    /// An alert service over `store`.
    /// - Parameters:
    ///   - publicURL: The collector's base URL for links (`https://collector.example.com`).
    ///   - interval: Time between passes (default one hour).
    ///   - metrics: Where raised and held-back alerts are counted (the collector's `/metrics`).
    public init(store: any CollectorStore, publicURL: String, interval: Duration = .seconds(3600),
                logger: Logger = Logger(label: "framescope.alerts"), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                metrics: CollectorMetrics? = nil) {
        self.store = store
        self.publicURL = publicURL
        self.interval = interval
        self.logger = logger
        self.clock = clock
        self.metrics = metrics
    }

    /// Runs a pass now and every ``interval`` until graceful shutdown, over a client of its
    /// own that it shuts down before returning.
    public func run() async throws {
        let transport = HTTPWebhookTransport()
        let delivery = WebhookDelivery(store: store, transport: transport, publicURL: publicURL, clock: clock, logger: logger)
        let evaluator = AlertEvaluator(store: store)
        let logger = logger
        let clock = clock
        let metrics = metrics
        await runPeriodically(every: interval, logger: logger, level: .error, failure: "alert pass failed") {
            try await Self.pass(evaluator: evaluator, delivery: delivery, now: clock(), logger: logger, metrics: metrics)
        }
        try await transport.shutdown()
    }

    /// One pass: raise what regressed at `now` (at most the evaluator's
    /// ``AlertEvaluator/maximumAlertsPerPass`` per app, logging and counting what is held
    /// back), then deliver what is pending.
    /// - Returns: The alerts raised, the regressions held back for later passes (all apps),
    ///   and the deliveries that ended delivered or undelivered.
    @discardableResult
    public static func pass(evaluator: AlertEvaluator, delivery: WebhookDelivery, now: Double, logger: Logger,
                            metrics: CollectorMetrics? = nil) async throws -> (raised: [RegressionAlert], heldBack: Int, delivered: Int, undelivered: Int) {
        let evaluations = try await evaluator.evaluations(now: now)
        for evaluation in evaluations {
            metrics?.recordAlerts(evaluation)
            for alert in evaluation.raised {
                logger.notice("regression alert", metadata: [
                    "app": .string(alert.app), "screen": .string(alert.screen), "metric": .string(alert.metric),
                    "baseline": .string(alert.baseline), "candidate": .string(alert.candidate),
                ])
            }
            if evaluation.heldBack > 0 {
                logger.warning("regression alerts held back for later passes", metadata: [
                    "app": .string(evaluation.app), "heldBack": .stringConvertible(evaluation.heldBack),
                    "maximumAlertsPerPass": .stringConvertible(evaluator.maximumAlertsPerPass),
                ])
            }
            if !evaluation.versionsLeftOut.isEmpty {
                logger.debug("versions with too few installations left out of regression alerts", metadata: [
                    "app": .string(evaluation.app), "versions": .stringConvertible(evaluation.versionsLeftOut.count),
                ])
            }
        }
        let (delivered, undelivered) = try await delivery.deliverPending()
        return (evaluations.flatMap(\.raised), evaluations.reduce(0) { $0 + $1.heldBack }, delivered, undelivered)
    }
}
