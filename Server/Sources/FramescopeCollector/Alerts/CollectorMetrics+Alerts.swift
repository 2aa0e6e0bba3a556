import Prometheus

/// The alert passes' metrics, served at `GET /metrics` with the others:
///
/// - `framescope_alerts_raised_total{app}`: regression alerts raised;
/// - `framescope_alerts_held_back{app}`: regressions the last pass found and did not raise,
///   being over ``AlertEvaluator/maximumAlertsPerPass`` (the next passes raise them); 0 once
///   none wait.
extension CollectorMetrics {
    /// Records what one pass's evaluation of an app did.
    func recordAlerts(_ evaluation: AlertEvaluation) {
        let labels = [("app", evaluation.app)]
        registry.makeCounter(descriptor: Self.alertsRaised, labels: labels).increment(by: Int64(evaluation.raised.count))
        registry.makeGauge(descriptor: Self.alertsHeldBack, labels: labels).set(Double(evaluation.heldBack))
    }

    private static var alertsRaised: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "framescope", metricName: "alerts_raised", unitName: "total", helpText: "Regression alerts raised")
    }
    private static var alertsHeldBack: MetricNameDescriptor {
        // A gauge of alerts: no unit suffix (an empty unit keeps the name `framescope_alerts_held_back`).
        MetricNameDescriptor(namespace: "framescope", metricName: "alerts_held_back", unitName: "",
                             helpText: "Regressions the last alert pass found but held back for later passes (over the per-pass limit)")
    }
}
