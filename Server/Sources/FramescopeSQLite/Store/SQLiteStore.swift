import Foundation
import FramescopeCore
import FramescopeStore
import GRDB

/// The embedded store: one SQLite file in WAL mode (or a database in memory), through GRDB.
///
/// Raw events are appended to `events`; rollups at four levels (``RollupLevel``: hour
/// or day × screen × every dimension, hour or day × screen) hold the
/// merged reports and per-visit statistics. The batches of one group commit, their raw
/// events and all their rollup updates commit in one transaction, so a batch is either
/// counted whole or not at all. Schema changes are migrations, appended and never edited.
public final class SQLiteStore: CollectorStore {
    /// The database: a pool of connections on a file, or one connection in memory.
    let database: any DatabaseWriter
    let rowCache = RollupRowCache(capacity: 8192)
    /// A connection of its own for ``checkpoint()`` with background checkpoints, so that
    /// copying the WAL into the database file never runs on the writer.
    private let checkpointer: DatabaseQueue?
    /// How many distinct values of each dimension an app may create per day.
    public let cardinality: CardinalityLimits
    /// Whether ``checkpoint()`` has a connection of its own and should be called often
    /// (``WALCheckpointService``).
    public var backgroundCheckpoints: Bool { checkpointer != nil }

    /// WAL pages (4 KiB each) past which the writer checkpoints as it commits even with
    /// background checkpoints, should ``checkpoint()`` stop being called (80 MiB).
    public static let backgroundCheckpointLimit = 20_000

    /// Opens (and migrates) the database at `path`.
    /// - Parameter backgroundCheckpoints: When `false` (the default), the writer copies the
    ///   WAL back into the database file itself once it holds 1000 pages, as part of a
    ///   commit (SQLite's default). When `true`, ``checkpoint()`` does it on a connection
    ///   of its own and should be called often (``WALCheckpointService``, every 50 ms in
    ///   `framescope serve`); the writer then checkpoints only past
    ///   ``backgroundCheckpointLimit`` pages. Either way every commit is fsynced.
    /// - Parameter cardinality: The per-app, per-day limits on distinct dimension values.
    public init(path: String, backgroundCheckpoints: Bool = false, cardinality: CardinalityLimits = CardinalityLimits()) throws {
        self.cardinality = cardinality
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // FULL: each commit (one group-commit flush) is fsynced before the 202 goes out,
            // so an acknowledged batch survives a power loss, not only a crash.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            if backgroundCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.backgroundCheckpointLimit)") }
        }
        database = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(database)
        checkpointer = backgroundCheckpoints ? try DatabaseQueue(path: path, configuration: configuration) : nil
    }

    /// A store in memory, gone when the value is released: the same schema, migrations
    /// and queries on one connection (for tests and short-lived tools).
    /// - Parameter cardinality: The per-app, per-day limits on distinct dimension values.
    public init(inMemoryWith cardinality: CardinalityLimits = CardinalityLimits()) throws {
        self.cardinality = cardinality
        database = try DatabaseQueue()
        try Self.migrator.migrate(database)
        checkpointer = nil
    }

    /// Copies the WAL's committed pages into the database file without waiting for the
    /// writer or readers (a passive checkpoint): on the checkpoint connection with
    /// background checkpoints, otherwise on the writer.
    /// - Returns: The WAL's size and how much of it is now copied, in pages (4 KiB each).
    @discardableResult
    public func checkpoint() async throws -> (walPages: Int, checkpointedPages: Int) {
        let result = if let checkpointer {
            try await checkpointer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        } else {
            try await database.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        }
        return (result.walFrameCount, result.checkpointedFrameCount)
    }
}

extension SQLiteStore: RollupBulkLoading {}
