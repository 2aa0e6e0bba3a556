/// What the MetricKit forwarding has done since the SDK started.
public struct MetricKitStatistics: Sendable, Hashable {
    /// Payloads written to the SDK's folder.
    public var payloadsQueued = 0
    /// Payloads the collector acknowledged (stored, counted before, or without figures).
    public var payloadsDelivered = 0
    /// Of those, payloads the collector refused alone in its answer (`rejected`: who sent it
    /// is not acceptable, or its period is not plausible).
    public var payloadsRejected = 0
    /// Payloads the collector refused as a whole because their bytes are not a MetricKit
    /// payload (400 `invalid_json` naming `body`); deleted.
    public var payloadsRefused = 0
    /// Refusals of the collector (400, 413, 422) that are not the payload's fault: a part it
    /// names, a limit of its own, a code this SDK does not know. The payload was kept, moved
    /// behind the others, and is sent again after a backoff; it is never deleted for this
    /// (only the folder's bound, oldest first, removes it).
    public var refusalsKept = 0
    /// Payloads not queued (empty, too large, not writable) or deleted unsent to keep the
    /// folder within its bound, or unreadable.
    public var payloadsDropped = 0
    /// Payloads deleted after ``DeliveryConfiguration/maximumAttempts`` failed attempts.
    public var payloadsAbandoned = 0
    /// Upload attempts, successful or not.
    public var uploadAttempts = 0
    /// Attempts that failed and will be retried.
    public var retries = 0
    /// What the collector says is wrong with the configuration (as for visits,
    /// ``DeliveryStatistics/configurationError``); nil once it accepts or judges a payload.
    public var configurationError: String?
    /// The latest failure, for diagnostics.
    public var lastError: String?
    /// Payloads waiting in the folder.
    public var pendingPayloads = 0
    /// Bytes they hold.
    public var queueBytes = 0
}
