import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an upload's outcome means for the batch: the one place that sorts HTTP statuses
/// and network errors.
extension DeliveryQueue {
    /// The collector's answer to an accepted batch (`IngestResponse`).
    struct Answer: Decodable, Sendable {
        var batchId: String
        var accepted: Int
        var duplicate: Bool
        var rejected: [Rejected]?
        struct Rejected: Decodable, Sendable {
            var index: Int
        }
    }

    /// What becomes of a batch after one upload.
    typealias Verdict = UploadVerdict<Answer>

    /// What an HTTP answer to batch `batchId` means for it.
    /// - Parameters:
    ///   - retryAfter: The `Retry-After` header, obeyed on 429 and 503.
    ///   - now: The wall clock, for a `Retry-After` given as a date.
    ///   - maximumRetryAfter: The longest `Retry-After` obeyed, in seconds.
    static func verdict(status: Int, retryAfter: String?, body: Data, batchId: String, now: Date,
                        maximumRetryAfter: Double) -> Verdict {
        UploadVerdict.judge(status: status, retryAfter: retryAfter, body: body, now: now, maximumRetryAfter: maximumRetryAfter,
                            what: "the collector's answer to batch \(batchId)", answer: answerReader(batchId: batchId))
    }

    /// Reads a 2xx body as the collector's answer naming `batchId`, or nil.
    static func answerReader(batchId: String) -> @Sendable (Data) -> Answer? {
        { body in
            guard let answer = try? JSONDecoder().decode(Answer.self, from: body), answer.batchId == batchId else { return nil }
            return answer
        }
    }

    /// What a request that got no HTTP answer means for the batch (``UploadVerdict/judge(_:)``).
    static func verdict(for error: any Error) -> Verdict {
        UploadVerdict.judge(error)
    }

    /// `Retry-After` as seconds from `now` (``UploadVerdict/parseRetryAfter(_:now:)``).
    static func parseRetryAfter(_ value: String, now: Date) -> Double? {
        Verdict.parseRetryAfter(value, now: now)
    }

    /// The batch to send next (``UploadStateMachine/nextIndex(attempts:movingBackAfter:)``):
    /// the oldest of those that have failed fewer than `attemptsBeforeMovingBack` times; when
    /// none has, the one with the fewest failures (the oldest of those), so batches moved to
    /// the back take turns.
    static func nextBatch(in batches: [DiskQueue.Batch], movingBackAfter attemptsBeforeMovingBack: Int) -> DiskQueue.Batch? {
        let oldestFirst = batches.sorted { $0.first < $1.first }
        return UploadStateMachine.nextIndex(attempts: oldestFirst.map(\.attempts), movingBackAfter: attemptsBeforeMovingBack)
            .map { oldestFirst[$0] }
    }
}
