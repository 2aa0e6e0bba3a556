import Foundation
import FramescopeCore
import Logging
import ServiceLifecycle

/// Deletes raw events older than the retention period in the background; rollups stay.
/// MetricKit payloads go at the same age (by their end), since each is one device's raw
/// figures for a day, and so do hangs (by their start), which are raw reports too, and the
/// counts of visits per sample rate of the days whose raw events are all gone
/// (``SampleRateStore``). Each sweep also forgets batch ids older than ``ledgerRetention`` (the
/// idempotency ledger, ``AccessLifetimes/batchLedger``) and the cardinality ledger's days
/// and window values of that age, expired dashboard sessions and ingest keys whose grace
/// period is over.
///
/// Runs in the server's service group: a sweep at start and then every ``interval``,
/// each deleting in chunks of ``chunk`` events (one short transaction each) so ingest
/// never waits long behind it. Graceful shutdown stops it between chunks.
public struct RetentionService: Service {
    /// The store to sweep.
    public var store: any EventStore & AppAccess & MetricKitStore & HangStore & SampleRateStore
    /// How long raw events are kept, in seconds.
    public var retention: Double
    /// How long batch ids are remembered after receipt, in seconds.
    public var ledgerRetention: Double
    /// Time between sweeps.
    public var interval: Duration
    /// Events deleted per transaction.
    public var chunk: Int
    /// Where sweeps are logged.
    public var logger: Logger
    /// The current time, Unix seconds.
    public var clock: @Sendable () -> Double

    /// A retention service over `store`.
    /// - Parameters:
    ///   - retention: Seconds a raw event is kept after it started.
    ///   - interval: Time between sweeps (default one hour).
    ///   - ledgerRetention: Seconds a batch id is remembered after receipt (default 32 days).
    public init(store: any EventStore & AppAccess & MetricKitStore & HangStore & SampleRateStore, retention: Double, ledgerRetention: Double = AccessLifetimes.batchLedger,
                interval: Duration = .seconds(3600), chunk: Int = 10_000,
                logger: Logger = Logger(label: "framescope.retention"), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.store = store
        self.retention = retention
        self.ledgerRetention = ledgerRetention
        self.interval = interval
        self.chunk = max(1, chunk)
        self.logger = logger
        self.clock = clock
    }

    /// Sweeps until graceful shutdown or cancellation, then returns normally. A failed
    /// sweep is logged and retried at the next interval; it never stops the server.
    public func run() async throws {
        await runPeriodically(every: interval, logger: logger, level: .error, failure: "retention sweep failed") {
            _ = try await sweep()
        }
    }

    /// Deletes every raw event older than the retention period, chunk by chunk, every
    /// MetricKit payload that ended and every hang that began before the same cutoff, and
    /// the sample-rate counts of the days that ended by it; returns how many events went.
    /// The cutoff is rounded down to a whole hour (UTC), so events are kept up to an hour
    /// longer than the retention period, and each chunk's walk of the store's hour index
    /// never reads an event it keeps.
    public func sweep() async throws -> Int {
        let now = clock()
        let cutoff = ((now - retention) / 3600).rounded(.down) * 3600
        var total = 0
        while !Task.isCancelled {
            let deleted = try await store.deleteRawEvents(startedBefore: cutoff, limit: chunk)
            total += deleted
            if deleted < chunk { break }
        }
        var payloads = 0
        while !Task.isCancelled {
            let deleted = try await store.deleteMetricKitPayloads(endedBefore: cutoff, limit: chunk)
            payloads += deleted
            if deleted < chunk { break }
        }
        var hangs = 0
        while !Task.isCancelled {
            let deleted = try await store.deleteHangs(startedBefore: cutoff, limit: chunk)
            hangs += deleted
            if deleted < chunk { break }
        }
        if hangs > 0 { logger.info("hang retention sweep", metadata: ["deleted": .stringConvertible(hangs)]) }
        if !Task.isCancelled {
            let rates = try await store.deleteSampleRates(before: cutoff)
            if rates > 0 { logger.info("sample rate retention sweep", metadata: ["deleted": .stringConvertible(rates)]) }
        }
        if payloads > 0 { logger.info("metrickit retention sweep", metadata: ["deleted": .stringConvertible(payloads)]) }
        var forgotten = 0
        while !Task.isCancelled {
            let pruned = try await store.pruneAccessRecords(batchesReceivedBefore: now - ledgerRetention, now: now, limit: chunk)
            forgotten += pruned
            if pruned < chunk { break }
        }
        if forgotten > 0 { logger.info("batch ledger sweep", metadata: ["forgotten": .stringConvertible(forgotten)]) }
        if total > 0 {
            logger.info("retention sweep", metadata: ["deleted": .stringConvertible(total), "cutoff": .string(ISO8601.format(unixSeconds: cutoff))])
        }
        return total
    }
}
