import Foundation
import FramescopeCore
import Hummingbird
import Logging
import NIOCore

/// Ingest, from request body to stored rows: reads the body within the collector's byte
/// budget, decompresses gzip, decodes the batch (``decodeBatch(_:)``), validates each
/// event (``IngestValidator``) and hands the valid ones to the ``GroupCommit``.
///
/// The route in front of it only authenticates and rate-limits; everything a device's
/// bytes can reach is here, behind one function, ``accept(_:app:logger:)``.
public struct IngestService: Sendable {
    let limits: IngestLimits
    let store: any CollectorStore
    let groupCommit: GroupCommit
    let budget: ByteBudget
    let metrics: CollectorMetrics
    let clock: @Sendable () -> Double

    /// An ingest service writing to `store`.
    /// - Parameters:
    ///   - limits: Body sizes, in-flight and waiting bytes, event rules.
    ///   - metrics: Where accepted, rejected and folded events are counted.
    ///   - clock: The current time, Unix seconds (validation's "now").
    public init(store: any CollectorStore, limits: IngestLimits = IngestLimits(), metrics: CollectorMetrics = CollectorMetrics(),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.limits = limits
        self.store = store
        self.groupCommit = GroupCommit(store: store, maximumWaitingBytes: limits.maximumWaitingBytes)
        self.budget = ByteBudget(capacity: limits.maximumBytesInFlight)
        self.metrics = metrics
        self.clock = clock
    }

    /// Reads, decodes, validates and stores the batch in `request`'s body for `app`.
    ///
    /// The body's declared length (all of ``IngestLimits/maximumBodyBytes`` when none is
    /// given) is reserved from the byte budget before a byte is read, and as much again
    /// for the decompressed form of a gzip body; both are released when this returns.
    /// - Throws: ``CollectorError``: 503 `saturated` when the budget or the writer's queue
    ///   is full, 413 for a body or decompressed body over the limits, 400 or 415 naming
    ///   what is wrong with the body; the store's error for this batch alone.
    public func accept(_ request: Request, app: String, logger: Logger) async throws -> IngestResponse {
        try await withBody(of: request) { body in try await ingest(body: body, app: app, logger: logger) }
    }

    /// Calls `work` with `request`'s body, read and decompressed within the byte budget
    /// (``accept(_:app:logger:)`` says how), and releases the budget when it returns.
    /// - Throws: ``CollectorError`` for a saturated budget, a body over the limits or an
    ///   encoding other than gzip; what `work` throws.
    func withBody<Result: Sendable>(of request: Request, _ work: (ByteBuffer) async throws -> Result) async throws -> Result {
        let declared = request.headers[.contentLength].flatMap { Int($0) }.map { min(max($0, 0), limits.maximumBodyBytes) }
        var held = declared ?? limits.maximumBodyBytes
        guard await budget.reserve(held) else { throw CollectorError.saturated }
        do {
            let body = try await read(request, held: &held)
            let result = try await work(body)
            await budget.release(held)
            return result
        } catch {
            await budget.release(held)
            throw error
        }
    }

    /// The body once its budget is held; `held` grows by what decompression reserves.
    private func read(_ request: Request, held: inout Int) async throws -> ByteBuffer {
        var body = try await request.body.collect(upTo: limits.maximumBodyBytes)
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity":
            break
        case "gzip":
            guard await budget.reserve(limits.maximumDecompressedBytes) else { throw CollectorError.saturated }
            held += limits.maximumDecompressedBytes
            body = try gunzip(body, limit: limits.maximumDecompressedBytes)
        case let encoding?:
            throw CollectorError(.unsupportedMediaType, code: "unsupported_encoding", field: "Content-Encoding",
                                 message: "Content-Encoding '\(encoding)' is not accepted; send plain JSON or gzip")
        }
        return body
    }

    /// Decodes, validates and stores one batch already in memory (uncompressed JSON).
    /// - Returns: What was accepted, whether the batch id was a duplicate, and each
    ///   rejected event with the field that made it invalid.
    public func ingest(body: ByteBuffer, app: String, logger: Logger) async throws -> IngestResponse {
        let batch = try decodeBatch(body)
        let (ingest, rejected) = try IngestValidator(limits: limits, now: clock()).validate(batch, app: app)
        var result = IngestResult(stored: 0, duplicate: false)
        if !ingest.events.isEmpty { result = try await groupCommit.ingest(ingest) }
        metrics.recordIngest(app: app, accepted: result.stored, rejected: rejected.count, folded: result.folded)
        logger.debug("batch ingested", metadata: [
            "app": .string(app), "batch": .string(ingest.batchId), "stored": .stringConvertible(result.stored),
            "rejected": .stringConvertible(rejected.count), "duplicate": .stringConvertible(result.duplicate),
        ])
        return IngestResponse(batchId: ingest.batchId, accepted: ingest.events.count, duplicate: result.duplicate, rejected: rejected)
    }
}
