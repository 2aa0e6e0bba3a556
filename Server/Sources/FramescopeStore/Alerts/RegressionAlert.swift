import FramescopeCore

/// How far a regression alert's webhook POST has got, for one webhook.
public enum DeliveryState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not yet delivered; the next delivery pass tries it.
    case pending
    /// The webhook answered 2xx.
    case delivered
    /// Every attempt failed (``WebhookDelivery/maximumAttempts``); no more are made.
    case undelivered
}

/// One webhook's delivery of one alert.
public struct AlertDelivery: Sendable, Hashable, Codable {
    /// The webhook's id.
    public var webhook: Int64
    /// Pending, delivered or undelivered.
    public var state: DeliveryState
    /// POSTs made so far.
    public var attempts: Int
    /// Why the last attempt failed ("HTTP 500", "timed out"), `nil` after a success or before any attempt.
    public var lastError: String?

    /// The most characters of ``lastError`` a store keeps; a longer error is cut to its start.
    public static let maximumErrorLength = 500

    /// A delivery record.
    public init(webhook: Int64, state: DeliveryState, attempts: Int, lastError: String?) {
        self.webhook = webhook
        self.state = state
        self.attempts = attempts
        self.lastError = lastError
    }
}

/// A regression the evaluator found: on ``screen``, ``metric`` regressed from app version
/// ``baseline`` to ``candidate`` under the app's verdict rules, with the figures as they
/// were when it was evaluated (``figures``). One alert per (app, screen, metric,
/// baseline, candidate): evaluating again never raises it twice.
public struct RegressionAlert: Sendable, Hashable, Codable {
    /// The alert's id, unique in the collector.
    public var id: Int64
    /// The app.
    public var app: String
    /// The screen that regressed.
    public var screen: String
    /// The figure that regressed (a ``VisitMetric`` name: `hitchRatio`, `motion.hitchRatio`, …).
    public var metric: String
    /// The baseline app version.
    public var baseline: String
    /// The candidate app version (the newer one).
    public var candidate: String
    /// The figure in both versions, its change with the confidence interval, the visits
    /// each side rests on and the verdict, as the compare route gave them when the alert was raised.
    public var figures: FigureChange
    /// The range of visit start times evaluated, ISO 8601: its start.
    public var from: String
    /// Its end (exclusive).
    public var to: String
    /// When the alert was raised, ISO 8601.
    public var createdAt: String
    /// When it was acknowledged, ISO 8601, or `nil`.
    public var acknowledgedAt: String?
    /// One entry per webhook the app had when the alert was raised.
    public var deliveries: [AlertDelivery]

    /// An alert as stored.
    public init(id: Int64, app: String, screen: String, metric: String, baseline: String, candidate: String, figures: FigureChange,
                from: String, to: String, createdAt: String, acknowledgedAt: String?, deliveries: [AlertDelivery]) {
        self.id = id
        self.app = app
        self.screen = screen
        self.metric = metric
        self.baseline = baseline
        self.candidate = candidate
        self.figures = figures
        self.from = from
        self.to = to
        self.createdAt = createdAt
        self.acknowledgedAt = acknowledgedAt
        self.deliveries = deliveries
    }

    /// The verdict (always ``Verdict/regressed`` for an alert the evaluator raised).
    public var verdict: Verdict { figures.verdict }
}

/// An alert to raise: what the evaluator found, before the store gives it an id.
public struct NewAlert: Sendable, Hashable {
    /// The app.
    public var app: String
    /// The screen that regressed.
    public var screen: String
    /// The baseline app version.
    public var baseline: String
    /// The candidate app version.
    public var candidate: String
    /// The figure's change (its ``FigureChange/metric`` names the figure).
    public var figures: FigureChange
    /// The range evaluated, Unix seconds: start (inclusive).
    public var from: Double
    /// End (exclusive), Unix seconds.
    public var to: Double

    /// An alert to raise.
    public init(app: String, screen: String, baseline: String, candidate: String, figures: FigureChange, from: Double, to: Double) {
        self.app = app
        self.screen = screen
        self.baseline = baseline
        self.candidate = candidate
        self.figures = figures
        self.from = from
        self.to = to
    }
}

/// A webhook as listed: never its secret, which is shown once, when it is created.
public struct WebhookRecord: Sendable, Hashable, Codable {
    /// The webhook's id.
    public var id: Int64
    /// The URL alerts are POSTed to.
    public var url: String
    /// When it was added, ISO 8601.
    public var createdAt: String

    /// A webhook record.
    public init(id: Int64, url: String, createdAt: String) {
        self.id = id
        self.url = url
        self.createdAt = createdAt
    }
}

/// A webhook as created: its record and its secret, shown this once.
public struct WebhookCredentials: Sendable, Hashable, Codable {
    /// The webhook's id.
    public var id: Int64
    /// The URL alerts are POSTed to.
    public var url: String
    /// When it was added, ISO 8601.
    public var createdAt: String
    /// The key of the HMAC-SHA256 in `X-Framescope-Signature` (`fsw_` and 48 hex digits,
    /// 192 random bits). Stored as it is (the collector signs with it), never shown again.
    public var secret: String

    /// A created webhook.
    public init(id: Int64, url: String, createdAt: String, secret: String) {
        self.id = id
        self.url = url
        self.createdAt = createdAt
        self.secret = secret
    }

    /// A fresh webhook secret: `fsw_` and 48 hex digits (192 random bits, ``AccessTokens/random()``).
    public static func newSecret() -> String {
        "fsw_" + AccessTokens.random()
    }
}

/// A delivery still to make: the alert, and where and with which secret to POST it.
public struct PendingDelivery: Sendable, Hashable {
    /// The alert.
    public var alert: RegressionAlert
    /// The webhook's id.
    public var webhook: Int64
    /// The webhook's URL.
    public var url: String
    /// The webhook's secret (the HMAC key).
    public var secret: String
    /// Attempts made before this pass.
    public var attempts: Int

    /// A pending delivery.
    public init(alert: RegressionAlert, webhook: Int64, url: String, secret: String, attempts: Int) {
        self.alert = alert
        self.webhook = webhook
        self.url = url
        self.secret = secret
        self.attempts = attempts
    }
}
