import Foundation
import FramescopeClickHouse

/// One ClickHouse server and one two-shard cluster for a whole test run, started on first
/// use and killed when the run exits (``ChildProcesses``): each test takes a fresh database
/// on them (``freshDatabase()``) instead of starting servers of its own, which on this
/// machine would cost seconds per test.
public actor SharedClickHouse {
    /// The run's servers.
    public static let shared = SharedClickHouse()

    private var single: Task<ClickHouseServer, any Error>?
    private var twoShards: Task<ClickHouseCluster, any Error>?

    /// The run's single server, started on first use.
    public func server() async throws -> ClickHouseServer {
        if single == nil { single = Task { try await ClickHouseServer() } }
        guard let single else { throw ClickHouseServer.Missing(description: "no shared server") }
        return try await single.value
    }

    /// The run's two-shard cluster with ZooKeeper, started on first use.
    public func cluster() async throws -> ClickHouseCluster {
        if twoShards == nil { twoShards = Task { try await ClickHouseCluster() } }
        guard let twoShards else { throw ClickHouseServer.Missing(description: "no shared cluster") }
        return try await twoShards.value
    }

    /// A database name no test has used: `fs_` and 24 random hex digits.
    public static func freshDatabase() -> String {
        "fs_" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24))
    }
}
