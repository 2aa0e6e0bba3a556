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
    /// Where the symbol tables of the app's images are read, so that a hang's dominant frame
    /// is chosen per function when the build's symbols are there; nil: per address only.
    let symbols: (cache: SymbolCache, store: any SymbolStore)?

    /// An ingest service writing to `store`.
    /// - Parameters:
    ///   - limits: Body sizes, in-flight and waiting bytes, event rules.
    ///   - metrics: Where accepted, rejected and folded events are counted.
    ///   - clock: The current time, Unix seconds (validation's "now").
    ///   - pace: How slowly a request body may arrive before it is refused with 408.
    ///   - symbols: The symbol cache and the store it reads, for choosing hangs' dominant
    ///     frames per function (``HangSummary``); nil chooses per address.
    public init(store: any EventStore & MetricKitStore, limits: IngestLimits = IngestLimits(), metrics: CollectorMetrics = CollectorMetrics(),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }, pace: BodyPace = BodyPace(),
                symbols: (cache: SymbolCache, store: any SymbolStore)? = nil) {
        self.symbols = symbols
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

    /// Calls `work` with `request`'s body, read and decompressed within the byte budget
    /// and the pace (``BodyReader/withBody(of:_:)``), and releases the budget when it returns.
    func withBody<Result: Sendable>(of request: Request, _ work: (ByteBuffer) async throws -> Result) async throws -> Result {
        try await bodyReader.withBody(of: request, work)
    }

    /// ``withBody(of:_:)``, with the bytes the body was sent as handed to `work` beside it
    /// (``BodyReader/withSizedBody(of:_:)``).
    func withSizedBody<Result: Sendable>(of request: Request, _ work: (ByteBuffer, Int) async throws -> Result) async throws -> Result {
        try await bodyReader.withSizedBody(of: request, work)
    }

    /// The reader of this service's bodies: its limits, budget and pace.
    private var bodyReader: BodyReader {
        BodyReader(maximumBodyBytes: limits.maximumBodyBytes, maximumDecompressedBytes: limits.maximumDecompressedBytes, budget: budget, pace: pace)
    }

    /// Decodes, validates and stores one batch already in memory (uncompressed JSON).
    /// - Returns: What was accepted, whether the batch id was a duplicate, and each
    ///   rejected event with the field that made it invalid.
    ///
    /// A body of ``IngestWork/heavyBytes`` or more is decoded, validated and summarized on
    /// ``IngestWork``'s serial queue, off the cooperative pool, and holds
    /// ``IngestWork/decodedBytesPerByte`` times its size more of the byte budget while its
    /// decoded form lives (until its batch is committed): 503 `saturated` when that does not fit.
    /// Hang summaries are computed here, before the batch waits for the writer, never in
    /// the store's transaction.
    public func ingest(body: ByteBuffer, app: String, logger: Logger) async throws -> IngestResponse {
        let size = body.readableBytes
        let charge = size >= IngestWork.heavyBytes ? size * IngestWork.decodedBytesPerByte : 0
        if charge > 0 {
            guard charge <= budget.capacity else {
                throw CollectorError(.contentTooLarge, .bodyTooLarge,
                                     message: "the body's \(size) bytes decode to up to \(charge) bytes in memory, more than the "
                                         + "\(budget.capacity) bytes the collector holds for requests at once (IngestLimits.maximumBytesInFlight)")
            }
            guard await budget.reserve(charge) else { throw CollectorError.saturated }
        }
        do {
            let response = try await ingestCharged(body: body, app: app, logger: logger)
            if charge > 0 { await budget.release(charge) }
            return response
        } catch {
            if charge > 0 { await budget.release(charge) }
            throw error
        }
    }

    /// ``ingest(body:app:logger:)`` once the decoded form is charged.
    private func ingestCharged(body: ByteBuffer, app: String, logger: Logger) async throws -> IngestResponse {
        let limits = limits, now = clock()
        var (ingest, rejected) = try await IngestWork.run(bytes: body.readableBytes) {
            try IngestValidator(limits: limits, now: now).validate(try decodeBatch(body), app: app)
        }
        if let symbols {
            let lookups = ingest.stackedAppLookups
            // Symbols help choose the dominant frame; failing to read them never fails ingest.
            if !lookups.isEmpty { ingest.symbolTables = (try? await symbols.cache.tables(app: app, lookups: lookups, store: symbols.store)) ?? [:] }
        }
        ingest = try await IngestWork.run(bytes: body.readableBytes) { [ingest] in
            var summarized = ingest
            summarized.summarizeHangs()
            return summarized
        }
        var result = IngestResult(stored: 0, duplicate: false)
        if !ingest.events.isEmpty || !ingest.fatalHangs.isEmpty { result = try await groupCommit.ingest(ingest) }
        metrics.recordIngest(app: app, accepted: result.stored, rejected: rejected.count, folded: result.folded)
        logger.debug("batch ingested", metadata: [
            "app": .string(app), "batch": .string(ingest.batchId), "stored": .stringConvertible(result.stored),
            "rejected": .stringConvertible(rejected.count), "duplicate": .stringConvertible(result.duplicate),
        ])
        return IngestResponse(batchId: ingest.batchId, accepted: ingest.events.count + ingest.fatalHangs.count, duplicate: result.duplicate,
                              rejected: rejected, stacksDropped: ingest.stacksDropped)
    }
}
