/// Group commit: batches that arrive while a flush is writing wait and are written
/// together by the next flush, in one transaction, so a burst of concurrent requests
/// costs one commit (one fsync) instead of one each.
///
/// There is no background task. The first request that finds no flush running leads:
/// it writes every waiting batch, including its own, answers the others, and if more
/// arrived meanwhile hands the lead to the first of those. Each request therefore
/// returns only once its batch is committed, and shutdown needs nothing beyond letting
/// in-flight requests finish.
public actor GroupCommit {
    private enum Signal {
        case done(Result<IngestResult, any Error>)
        case lead
    }

    private struct Waiter {
        var batch: IngestBatch
        var continuation: CheckedContinuation<Signal, Never>
    }

    private let store: any EventStore
    private let maximumBatchesPerFlush: Int
    private var waiting: [Waiter] = []
    private var waitingBytes = 0
    private let maximumWaitingBytes: Int
    private var flushing = false
    /// Flushes written so far.
    public private(set) var flushes = 0
    /// Flushes that failed whole and were written again one batch at a time.
    public private(set) var splitFlushes = 0
    /// Batches refused with 503 because the waiting batches held too many bytes.
    public private(set) var refusedBatches = 0
    /// Batches written so far.
    public private(set) var flushedBatches = 0
    /// Batches waiting for the next flush now (the one being written is not counted).
    public var waitingBatches: Int { waiting.count }

    /// Creates a group commit in front of `store`.
    /// - Parameters:
    ///   - maximumBatchesPerFlush: At most this many batches go into one transaction.
    ///   - maximumWaitingBytes: At most this many bytes of events wait for a flush
    ///     (``IngestBatch/approximateBytes``); default 64 MiB.
    public init(store: any EventStore, maximumBatchesPerFlush: Int = 256, maximumWaitingBytes: Int = 64 << 20) {
        self.store = store
        self.maximumBatchesPerFlush = max(1, maximumBatchesPerFlush)
        self.maximumWaitingBytes = max(0, maximumWaitingBytes)
    }

    /// Stores `batch` in the next flush and returns once that flush has committed.
    /// - Throws: a 503 ``CollectorError`` with `Retry-After` when the waiting batches
    ///   already hold `maximumWaitingBytes`; the store's error for this batch alone.
    public func ingest(_ batch: IngestBatch) async throws -> IngestResult {
        if !flushing {
            flushing = true
            return try await lead(own: batch)
        }
        let bytes = batch.approximateBytes
        guard waitingBytes <= maximumWaitingBytes - bytes else {
            refusedBatches += 1
            throw CollectorError(.serviceUnavailable, .saturated,
                                 message: "the collector's writer is saturated; retry after 1 s", headers: [.retryAfter: "1"])
        }
        waitingBytes += bytes
        let signal = await withCheckedContinuation { continuation in
            waiting.append(Waiter(batch: batch, continuation: continuation))
        }
        switch signal {
        case .done(let result):
            return try result.get()
        case .lead:
            // Our batch did not fit into the last flush; we lead the next one.
            return try await lead(own: batch)
        }
    }

    /// Writes flushes until this caller's batch is committed, then hands the lead on.
    private func lead(own: IngestBatch) async throws -> IngestResult {
        let others = Array(waiting.prefix(maximumBatchesPerFlush - 1))
        waiting.removeFirst(others.count)
        for waiter in others { waitingBytes -= waiter.batch.approximateBytes }
        let group = [own] + others.map(\.batch)

        let outcomes = await write(group)
        flushes += 1
        flushedBatches += group.count
        for (offset, waiter) in others.enumerated() {
            waiter.continuation.resume(returning: .done(outcomes[offset + 1]))
        }
        if waiting.isEmpty {
            flushing = false
        } else {
            let next = waiting.removeFirst()
            waitingBytes -= next.batch.approximateBytes
            next.continuation.resume(returning: .lead)
        }
        return try outcomes[0].get()
    }

    /// Writes `group` in one transaction; if that fails, each batch in one of its own.
    /// - Returns: one outcome per batch, in order.
    private func write(_ group: [IngestBatch]) async -> [Result<IngestResult, any Error>] {
        do {
            let results = try await store.ingest(group)
            return group.indices.map { results.indices.contains($0) ? .success(results[$0]) : .failure(GroupCommitError.missingResult) }
        } catch {
            guard group.count > 1 else { return [.failure(error)] }
        }
        splitFlushes += 1
        var outcomes: [Result<IngestResult, any Error>] = []
        outcomes.reserveCapacity(group.count)
        for batch in group {
            do {
                let results = try await store.ingest([batch])
                outcomes.append(results.first.map { .success($0) } ?? .failure(GroupCommitError.missingResult))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        return outcomes
    }
}

/// The store answered a flush with fewer results than batches.
struct GroupCommitError: Error {
    static let missingResult = GroupCommitError()
}
