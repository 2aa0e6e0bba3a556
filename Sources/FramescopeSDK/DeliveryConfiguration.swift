import Foundation

/// How the SDK batches visits, keeps them on disk and uploads them.
public struct DeliveryConfiguration: Sendable, Hashable {
    /// The folder of the disk queue (created if missing). Default: `Framescope/<app id>` in
    /// the user's caches folder.
    public var directory: URL?
    /// A batch is sealed once it holds this many visits (default 100, at most 1,000).
    public var maximumBatchEvents: Int
    /// … or this many bytes of JSON (default 256 KiB; the collector takes up to 4 MiB).
    public var maximumBatchBytes: Int
    /// … or once its oldest visit has waited this long, in seconds (default 30 s).
    public var maximumBatchAge: Double
    /// The disk queue's bound, in bytes (default 4 MiB). Over it, the oldest batches are
    /// deleted and counted in ``DeliveryStatistics/batchesDropped``.
    public var maximumQueueBytes: Int
    /// The first retry waits about this long, in seconds (default 1 s); each failure doubles
    /// it, up to ``maximumRetryDelay``, with random jitter of up to half of it.
    public var initialRetryDelay: Double
    /// The longest wait between attempts, in seconds (default 300 s); `Retry-After` is
    /// obeyed up to one hour.
    public var maximumRetryDelay: Double
    /// How long one upload may take, in seconds (default 30 s).
    public var requestTimeout: Double
    /// A batch whose uploads have failed this many times moves behind every batch that has
    /// failed fewer times, so one batch that crashes or stalls the collector cannot hold up
    /// the queue (default 5, at least 1 and at most ``maximumAttempts``).
    ///
    /// Only failures that can be the batch's own fault count, and the count is kept in the
    /// batch's file name, so it survives a restart: a timeout, a connection lost mid-request,
    /// a 408, a 5xx other than 503, and a 400, 413 or 422 that is not the collector's own
    /// answer (a proxy's). A collector that cannot be reached, a 429 or 503 (the collector
    /// says it is busy) and a wrong configuration (401, 403, 404, 410) count for no batch.
    public var attemptsBeforeMovingBack: Int
    /// A batch whose uploads have failed this many times (counted as for
    /// ``attemptsBeforeMovingBack``) is deleted and counted in
    /// ``DeliveryStatistics/batchesAbandoned`` (default 20, 1–1,000). With the default
    /// backoff, 19 waits of 1 s doubling to 300 s less up to half, a lone batch reaches 20
    /// failures after 29 to 59 minutes (44 on average) of 5xx answers; batches that fail in
    /// turn take as many times longer.
    public var maximumAttempts: Int

    /// Creates a configuration (see the properties for units and defaults).
    public init(directory: URL? = nil, maximumBatchEvents: Int = 100, maximumBatchBytes: Int = 256 * 1024,
                maximumBatchAge: Double = 30, maximumQueueBytes: Int = 4 * 1024 * 1024,
                initialRetryDelay: Double = 1, maximumRetryDelay: Double = 300, requestTimeout: Double = 30,
                attemptsBeforeMovingBack: Int = 5, maximumAttempts: Int = 20) {
        self.directory = directory
        self.maximumBatchEvents = maximumBatchEvents
        self.maximumBatchBytes = maximumBatchBytes
        self.maximumBatchAge = maximumBatchAge
        self.maximumQueueBytes = maximumQueueBytes
        self.initialRetryDelay = initialRetryDelay
        self.maximumRetryDelay = maximumRetryDelay
        self.requestTimeout = requestTimeout
        self.attemptsBeforeMovingBack = attemptsBeforeMovingBack
        self.maximumAttempts = maximumAttempts
    }

    /// What is wrong with these values, naming the field, or nil when they are usable.
    public var problem: String? {
        if !(1...1000).contains(maximumBatchEvents) { return "maximumBatchEvents must be 1–1000" }
        if !(1024...(4 * 1024 * 1024)).contains(maximumBatchBytes) { return "maximumBatchBytes must be 1 KiB–4 MiB" }
        if !(maximumBatchAge.isFinite && maximumBatchAge > 0) { return "maximumBatchAge must be a positive number of seconds" }
        if maximumQueueBytes < maximumBatchBytes { return "maximumQueueBytes must be at least maximumBatchBytes" }
        if !(initialRetryDelay.isFinite && initialRetryDelay > 0) { return "initialRetryDelay must be a positive number of seconds" }
        if !(maximumRetryDelay.isFinite && maximumRetryDelay >= initialRetryDelay) {
            return "maximumRetryDelay must be at least initialRetryDelay"
        }
        if !(requestTimeout.isFinite && requestTimeout > 0) { return "requestTimeout must be a positive number of seconds" }
        if !(1...1000).contains(maximumAttempts) { return "maximumAttempts must be 1–1000" }
        if !(1...maximumAttempts).contains(attemptsBeforeMovingBack) {
            return "attemptsBeforeMovingBack must be 1–maximumAttempts (\(maximumAttempts))"
        }
        return nil
    }
}

/// What the delivery has done since the SDK started.
public struct DeliveryStatistics: Sendable, Hashable {
    /// Visits written to the disk queue.
    public var eventsQueued = 0
    /// Fatal hangs found at launch, left by a process that died during a hang, and queued as
    /// events (`FatalHangEvent`).
    public var fatalHangsRecovered = 0
    /// Visits lost because the disk queue could not be written (the reason is in ``lastError``).
    public var eventsLost = 0
    /// Batches sealed (written as one file).
    public var batchesSealed = 0
    /// Batches the collector acknowledged (202), duplicates included.
    public var batchesDelivered = 0
    /// Of those, batches the collector had already counted (sent again after a lost answer).
    public var batchesDuplicate = 0
    /// Visits the collector accepted.
    public var eventsAccepted = 0
    /// Visits the collector refused one by one (listed in its answer) in acknowledged batches.
    public var eventsRejected = 0
    /// Batches the collector refused as a whole, naming what is wrong with them (400, 413
    /// or 422 with its JSON error); deleted, not retried. The reason is in ``lastError``.
    public var batchesRejected = 0
    /// Visits in those refused batches.
    public var eventsInRejectedBatches = 0
    /// Batches deleted unsent because the queue was over its bound or the file was damaged.
    public var batchesDropped = 0
    /// Visits in those dropped batches.
    public var eventsDropped = 0
    /// Times a batch moved to the back of the queue after
    /// ``DeliveryConfiguration/attemptsBeforeMovingBack`` failed attempts.
    public var batchesMovedBack = 0
    /// Batches deleted after ``DeliveryConfiguration/maximumAttempts`` failed attempts.
    public var batchesAbandoned = 0
    /// Visits in those abandoned batches.
    public var eventsAbandoned = 0
    /// What the collector says is wrong with the SDK's configuration or the path to the
    /// collector, with what to check; nil until then, and again once the collector accepts
    /// or judges a batch. Set by a 401 (the ingest key is unknown or revoked), 403 (the key
    /// is not this app's), 404 or 410 (the URL is not the collector's), another 4xx that does
    /// not name the batch, a 3xx, or a 2xx whose body is not the collector's answer. While it
    /// is set, every batch stays queued (up to ``DeliveryConfiguration/maximumQueueBytes``,
    /// the oldest dropped first) and is retried with backoff, so a fixed configuration (a
    /// rotated key, a corrected URL) delivers them.
    public var configurationError: String?
    /// Upload attempts, successful or not.
    public var uploadAttempts = 0
    /// Attempts that failed and will be retried: a network error, 408, 429, 5xx, a wrong
    /// configuration (``configurationError``).
    public var retries = 0
    /// The latest failure, for diagnostics.
    public var lastError: String?
    /// Sealed batches waiting on disk.
    public var pendingBatches = 0
    /// Visits waiting in the batch being filled.
    public var pendingEvents = 0
    /// Bytes the queue uses on disk.
    public var queueBytes = 0
}
