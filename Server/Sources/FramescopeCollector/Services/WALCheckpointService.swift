import Logging
import ServiceLifecycle

/// Checkpoints a ``SQLiteStore`` opened with background checkpoints, off its writer.
///
/// In WAL mode every commit appends to the write-ahead log, and a checkpoint copies the
/// log back into the database file. By default the committing writer does that itself
/// every 1000 pages, which under sustained ingest took about a quarter of the writer's time
/// and delayed every batch waiting behind that commit. This service instead runs a
/// passive checkpoint every ``interval`` on a connection of its own, alongside the
/// writer. Commits stay fsynced (`synchronous = FULL`): a checkpoint only moves pages
/// that are already durable in the log.
public struct WALCheckpointService: Service {
    /// The store to checkpoint.
    public var store: SQLiteStore
    /// Time between checkpoints.
    public var interval: Duration
    /// Where failures are logged.
    public var logger: Logger

    /// A checkpoint service for `store`.
    /// - Parameter interval: Time between checkpoints (default 50 ms).
    public init(store: SQLiteStore, interval: Duration = .milliseconds(50), logger: Logger = Logger(label: "framescope.checkpoint")) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    /// Checkpoints until graceful shutdown or cancellation, then returns normally. A
    /// failed checkpoint is logged and retried at the next interval.
    public func run() async throws {
        let store = store
        await runPeriodically(every: interval, logger: logger, level: .warning, failure: "WAL checkpoint failed") {
            try await store.checkpoint()
        }
    }
}
