import Foundation
import FramescopeCore
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Ingest, from request body to stored rows: reads the body within the collector's byte
/// budget, decompresses gzip, decodes the batch (``decodeBatch(_:)``), validates each
/// event (``IngestValidator``) and hands the valid ones to the ``GroupCommit``.
///
/// The route in front of it only authenticates and rate-limits; everything a device's
/// bytes can reach is here, behind one function, ``accept(_:app:logger:)``.
public struct IngestService: Sendable {
    let limits: IngestLimits
    let store: any EventStore & MetricKitStore
    let groupCommit: GroupCommit
    let budget: ByteBudget
    let metrics: CollectorMetrics
    let clock: @Sendable () -> Double
    /// How slowly a body may arrive (``withBody(of:_:)``).
    let pace: BodyPace

    /// An ingest service writing to `store`.
    /// - Parameters:
    ///   - limits: Body sizes, in-flight and waiting bytes, event rules.
    ///   - metrics: Where accepted, rejected and folded events are counted.
    ///   - clock: The current time, Unix seconds (validation's "now").
    ///   - pace: How slowly a request body may arrive before it is refused with 408.
    public init(store: any EventStore & MetricKitStore, limits: IngestLimits = IngestLimits(), metrics: CollectorMetrics = CollectorMetrics(),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, pace: BodyPace = BodyPace()) {
        self.limits = limits
        self.store = store
        self.groupCommit = GroupCommit(store: store, maximumWaitingBytes: limits.maximumWaitingBytes)
        self.budget = ByteBudget(capacity: limits.maximumBytesInFlight)
        self.metrics = metrics
        self.clock = clock
        self.pace = pace
    }

    /// Reads, decodes, validates and stores the batch in `request`'s body for `app`.
    ///
    /// The body is charged to the byte budget as its bytes arrive (``withBody(of:_:)``),
    /// within ``BodyPace``; all it holds is released when this returns.
    /// - Throws: ``CollectorError``: 503 `saturated` when the budget or the writer's queue
    ///   is full, 413 for a body or decompressed body over the limits, 408 for a body that
    ///   arrives too slowly, 400 or 415 naming what is wrong with the body; the store's
    ///   error for this batch alone.
    public func accept(_ request: Request, app: String, logger: Logger) async throws -> IngestResponse {
        try await withBody(of: request) { body in try await ingest(body: body, app: app, logger: logger) }
    }

    /// Calls `work` with `request`'s body, read and decompressed within the byte budget,
    /// and releases the budget when it returns.
    ///
    /// The budget is charged by bytes actually received, chunk by chunk as they arrive, so
    /// a connection that declares `Content-Length: 4194304` and sends one byte holds one
    /// byte of it, and a chunked body is charged the same way. A body must keep ``pace``
    /// (``receive(_:held:)``). A gzip body also holds ``IngestLimits/maximumDecompressedBytes``
    /// while it inflates, then only its inflated size.
    /// - Throws: ``CollectorError``: 413 `body_too_large` for a body that says or turns out
    ///   to be over ``IngestLimits/maximumBodyBytes`` (before reading it when it says so),
    ///   415 for an encoding other than gzip (before reading it), 503 `saturated` when
    ///   the budget is full, 408 `body_too_slow`; what `work` throws.
    func withBody<Result: Sendable>(of request: Request, _ work: (ByteBuffer) async throws -> Result) async throws -> Result {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limits.maximumBodyBytes {
            throw CollectorError.bodyTooLarge(limits.maximumBodyBytes)
        }
        let gzip: Bool
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity":
            gzip = false
        case "gzip":
            gzip = true
        case let encoding?:
            throw CollectorError(.unsupportedMediaType, .unsupportedEncoding, field: "Content-Encoding",
                                 message: "Content-Encoding '\(encoding)' is not accepted; send plain JSON or gzip")
        }
        // Bytes of the budget this request holds; read by the release after every child
        // task of `receive` has ended, so nothing reserved is ever left behind.
        let held = NIOLockedValueBox(0)
        do {
            let body = try await read(request, gzip: gzip, held: held)
            let result = try await work(body)
            await budget.release(held.withLockedValue { $0 })
            return result
        } catch {
            await budget.release(held.withLockedValue { $0 })
            throw error
        }
    }

    /// The body, inflated when `gzip`; `held` grows by what is reserved for it.
    private func read(_ request: Request, gzip: Bool, held: NIOLockedValueBox<Int>) async throws -> ByteBuffer {
        let body = try await receive(request.body, held: held)
        guard gzip else { return body }
        guard await budget.reserve(limits.maximumDecompressedBytes) else { throw CollectorError.saturated }
        held.withLockedValue { $0 += limits.maximumDecompressedBytes }
        let inflated = try gunzip(body, limit: limits.maximumDecompressedBytes)
        // The compressed bytes are dropped with `body`: keep only what the inflated body holds.
        let unused = held.withLockedValue { held in
            let unused = max(0, held - inflated.readableBytes)
            held -= unused
            return unused
        }
        await budget.release(unused)
        return inflated
    }

    /// The whole of `body`, each chunk reserved from the budget as it arrives, read while
    /// a second task holds it to ``pace``: when the next bytes are not in by
    /// ``BodyPace/deadline(received:)``, the read is cancelled and this throws 408.
    /// - Throws: ``CollectorError``: 413, 503 `saturated`, 408 `body_too_slow`; the
    ///   connection's error when it fails mid-body.
    private func receive(_ body: RequestBody, held: NIOLockedValueBox<Int>) async throws -> ByteBuffer {
        let received = NIOLockedValueBox(0)
        let started = ContinuousClock.now
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var collected = ByteBuffer()
                for try await chunk in body {
                    let count = chunk.readableBytes
                    guard count <= limits.maximumBodyBytes - collected.readableBytes else { throw CollectorError.bodyTooLarge(limits.maximumBodyBytes) }
                    guard await budget.reserve(count) else { throw CollectorError.saturated }
                    held.withLockedValue { $0 += count }
                    received.withLockedValue { $0 += count }
                    if collected.readableBytes == 0 { collected = chunk } else { collected.writeImmutableBuffer(chunk) }
                }
                return collected
            }
            group.addTask {
                while true {
                    let bytes = received.withLockedValue { $0 }
                    let deadline = started.advanced(by: .seconds(pace.deadline(received: bytes)))
                    let now = ContinuousClock.now
                    if now >= deadline {
                        throw CollectorError.bodyTooSlow(pace, received: bytes, seconds: Double((now - started).components.seconds))
                    }
                    try await Task.sleep(until: deadline, clock: .continuous)
                }
            }
            // The first to finish decides: the whole body, or the pace's 408. The other
            // is cancelled, and the group waits for it before returning.
            while let next = try await group.next() {
                if let whole = next {
                    group.cancelAll()
                    return whole
                }
            }
            throw CancellationError()
        }
    }

    /// Decodes, validates and stores one batch already in memory (uncompressed JSON).
    /// - Returns: What was accepted, whether the batch id was a duplicate, and each
    ///   rejected event with the field that made it invalid.
    public func ingest(body: ByteBuffer, app: String, logger: Logger) async throws -> IngestResponse {
        let batch = try decodeBatch(body)
        let (ingest, rejected) = try IngestValidator(limits: limits, now: clock()).validate(batch, app: app)
        var result = IngestResult(stored: 0, duplicate: false)
        if !ingest.events.isEmpty || !ingest.fatalHangs.isEmpty { result = try await groupCommit.ingest(ingest) }
        metrics.recordIngest(app: app, accepted: result.stored, rejected: rejected.count, folded: result.folded)
        logger.debug("batch ingested", metadata: [
            "app": .string(app), "batch": .string(ingest.batchId), "stored": .stringConvertible(result.stored),
            "rejected": .stringConvertible(rejected.count), "duplicate": .stringConvertible(result.duplicate),
        ])
        return IngestResponse(batchId: ingest.batchId, accepted: ingest.events.count + ingest.fatalHangs.count, duplicate: result.duplicate,
                              rejected: rejected)
    }
}
