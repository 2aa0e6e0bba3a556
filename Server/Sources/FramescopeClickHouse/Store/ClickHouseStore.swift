import Foundation
import FramescopeCore
import FramescopeStore

/// The collector's store on ClickHouse, one server or a cluster: the same contract as
/// `SQLiteStore` (`StoreContractTests` runs on both), with rollups merged in the engine.
///
/// - Raw events: one `INSERT … FORMAT RowBinary` per batch into `events`, whose six
///   materialized views add the visits to every rollup level as aggregate states
///   (``VisitColumns``); reads merge the states in the engine and decode one row per group.
/// - A retried batch counts once: the batch ledger is read before the insert, and on a
///   cluster the replicated `events` tables drop a byte-identical block, so a retry after
///   an insert that wrote but answered an error is not counted twice either
///   (docs/decisions.md).
/// - Apps, keys, sessions, thresholds, alerts, webhooks, declared tags and MetricKit
///   payloads are versioned records in one `control` table, the newest version winning
///   (``ControlRecords``), so a collector keeps no state of its own and several can serve
///   one database.
public final class ClickHouseStore: CollectorStore {
    /// The server or cluster, and the database.
    public let client: ClickHouseClient
    /// One server, or a cluster.
    public let topology: ClickHouseTopology
    /// How many distinct values of each dimension an app may create per day.
    public let cardinality: CardinalityLimits
    /// The last control record version handed out, so versions from this process increase.
    let versions = VersionClock()

    /// A store on `client`'s location, migrated to the newest schema version.
    /// - Throws: ``ClickHouseError`` when the server cannot be reached or refuses a
    ///   statement; ``ClickHouseSchemaError`` for a database of a newer Framescope.
    public init(client: ClickHouseClient, cardinality: CardinalityLimits = CardinalityLimits()) async throws {
        self.client = client
        topology = ClickHouseTopology(location: client.location)
        self.cardinality = cardinality
        _ = try await ClickHouseMigrator(client: client).migrate()
    }

    /// Settings for every insert: on a cluster, the `Distributed` table writes to the
    /// shards before answering (by default it queues and answers at once, and a read right
    /// after misses the rows).
    var insertSettings: [(String, String)] { topology.cluster == nil ? [] : [("insert_distributed_sync", "1")] }

    /// A string literal (``ClickHouseSQL/quote(_:)``).
    static func quote(_ text: String) -> String { ClickHouseSQL.quote(text) }
}
