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

    private let store: any CollectorStore
    private let maximumBatchesPerFlush: Int
    private var waiting: [Waiter] = []
    private var flushing = false
    /// Flushes written so far.
    public private(set) var flushes = 0
    /// Batches written so far.
    public private(set) var flushedBatches = 0

    /// Creates a group commit in front of `store`.
    /// - Parameter maximumBatchesPerFlush: At most this many batches go into one transaction.
    public init(store: any CollectorStore, maximumBatchesPerFlush: Int = 256) {
        self.store = store
        self.maximumBatchesPerFlush = max(1, maximumBatchesPerFlush)
    }

    /// Stores `batch` in the next flush and returns once that flush has committed.
    public func ingest(_ batch: IngestBatch) async throws -> IngestResult {
        if !flushing {
            flushing = true
            return try await lead(own: batch)
        }
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
        let group = [own] + others.map(\.batch)

        let outcome: Result<[IngestResult], any Error>
        do {
            outcome = .success(try await store.ingest(group))
        } catch {
            outcome = .failure(error)
        }
        flushes += 1
        flushedBatches += group.count
        for (offset, waiter) in others.enumerated() {
            let result = outcome.flatMap { results in
                results.indices.contains(offset + 1) ? .success(results[offset + 1]) : .failure(GroupCommitError.missingResult)
            }
            waiter.continuation.resume(returning: .done(result))
        }
        if waiting.isEmpty {
            flushing = false
        } else {
            waiting.removeFirst().continuation.resume(returning: .lead)
        }
        return try outcome.get().first ?? IngestResult(stored: 0, duplicate: false)
    }
}

/// The store answered a flush with fewer results than batches.
struct GroupCommitError: Error {
    static let missingResult = GroupCommitError()
}
