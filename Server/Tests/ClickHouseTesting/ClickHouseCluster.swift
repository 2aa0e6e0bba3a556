import Foundation
import FramescopeClickHouse

/// A real two-shard ClickHouse cluster for a test: one ``ZooKeeperServer`` and two
/// ``ClickHouseServer``s on loopback, each server one shard of one replica, as
/// `docs/dev-notes/clickhouse-schema.md` §4 and §8 describe.
///
/// Both servers' `config.xml` carry the cluster ``name`` in `remote_servers` (with
/// `internal_replication`, which replicated tables need), their own `macros` (`{shard}` 01
/// and 02, `{replica}` s1 and s2, for `ReplicatedMergeTree` paths), the ZooKeeper and a
/// `distributed_ddl` queue, so `CREATE … ON CLUSTER` runs on both. ``location(database:)``
/// is the first server with the cluster named, as a store would be configured.
///
/// ```swift
/// let cluster = try await ClickHouseCluster()
/// defer { cluster.stop() }
/// let client = ClickHouseClient(location: cluster.location(database: "fs_test"))
/// try await client.execute("CREATE DATABASE IF NOT EXISTS fs_test ON CLUSTER \(cluster.name)", inDatabase: false)
/// cluster.servers[1].halt()             // shard 2 down
/// try await cluster.servers[1].restart() // and back, data kept
/// ```
public final class ClickHouseCluster: @unchecked Sendable {
    /// The cluster's name in `remote_servers`.
    public let name = "framescope_two_shards"
    /// The ZooKeeper both servers use.
    public let zooKeeper: ZooKeeperServer
    /// The servers, shard 1 first.
    public let servers: [ClickHouseServer]

    /// Starts ZooKeeper, then the two servers, and waits until each has a ZooKeeper session
    /// (up to 30 s for each step). Whatever started is stopped again if a step fails.
    public init() async throws {
        let zooKeeper = try await ZooKeeperServer()
        self.zooKeeper = zooKeeper
        var started: [ClickHouseServer] = []
        do {
            // All six ports first: each server's config names both servers' native ports.
            let free = try ClickHouseServer.freePorts(6)
            let ports = [ClickHouseServer.Ports(http: free[0], tcp: free[1], interserver: free[2]),
                         ClickHouseServer.Ports(http: free[3], tcp: free[4], interserver: free[5])]
            let shards = ports.map {
                "<shard><internal_replication>true</internal_replication><replica><host>127.0.0.1</host><port>\($0.tcp)</port></replica></shard>"
            }.joined()
            for (index, serverPorts) in ports.enumerated() {
                let config = """
                    <remote_servers><\(name)>\(shards)</\(name)></remote_servers>
                    <macros><shard>0\(index + 1)</shard><replica>s\(index + 1)</replica></macros>
                    \(zooKeeper.clickHouseConfig)
                    <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
                    """
                started.append(try await ClickHouseServer(ports: serverPorts, extraConfig: config, quickShutdown: true))
            }
            for server in started {
                try await Self.waitForZooKeeper(server)
            }
        } catch {
            for server in started { server.stop() }
            zooKeeper.stop()
            throw error
        }
        servers = started
    }

    /// Waits until `server` reads ZooKeeper's root (`system.zookeeper`), up to
    /// ``ClickHouseServer/startupDeadline``.
    private static func waitForZooKeeper(_ server: ClickHouseServer) async throws {
        let client = ClickHouseClient(location: server.location(database: "default"), timeout: 5)
        var last = ""
        let deadline = ContinuousClock.now + ClickHouseServer.startupDeadline
        while ContinuousClock.now < deadline {
            do {
                let rows = try await client.rows("SELECT count() FROM system.zookeeper WHERE path = '/'")
                if let count = rows.first?.first.flatMap({ Int($0) }), count > 0 { return }
                last = "system.zookeeper: \(rows)"
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ClickHouseServer.Missing(description: "clickhouse-server on port \(server.httpPort) did not reach ZooKeeper within \(ClickHouseServer.startupDeadline): \(last)")
    }

    /// The location of `database` on the cluster: the first server's HTTP port, with the
    /// cluster named (what `framescope serve --store 'clickhouse://…?cluster=…'` takes).
    public func location(database: String) -> ClickHouseLocation {
        var location = servers[0].location(database: database)
        location.cluster = name
        return location
    }

    /// Stops both servers, then ZooKeeper, and deletes their folders.
    public func stop() {
        for server in servers { server.stop() }
        zooKeeper.stop()
    }

    deinit { stop() }
}
