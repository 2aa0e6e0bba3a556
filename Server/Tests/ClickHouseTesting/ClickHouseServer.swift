import Foundation
import FramescopeClickHouse

#if canImport(Glibc)
import Glibc
#endif

/// A real ClickHouse server for a test: Debian's `clickhouse-server` on loopback, with a
/// config of its own (no `include_from`), its own data folder and ports, started here and
/// stopped by its process id. No server installed is a failure saying how to get one
/// (`.ci/run` installs it), never a skip.
///
/// It is started with `posix_spawn`, not Foundation's `Process`: clickhouse-server closes
/// the descriptors it inherits, and Foundation on Linux takes the close of its watch socket
/// for the child's exit and blocks its one monitor thread in `waitpid` on the running
/// server, after which no other `Process` of the test run is ever seen to exit (the whole
/// suite hung so in CI).
///
/// A server of a cluster (``ClickHouseCluster``) is given its ports and the extra XML of
/// its `config.xml` (`remote_servers`, `macros`, `zookeeper`, `distributed_ddl`), and can be
/// stopped and started again on the same folder (``halt()``, ``restart()``): a shard that
/// goes down and comes back.
public final class ClickHouseServer: @unchecked Sendable {
    /// The server's own folder: configs, data, logs.
    public let directory: URL
    /// The server's process id, 0 while it is not running.
    public private(set) var pid: pid_t = 0
    /// The HTTP interface's port.
    public let httpPort: Int
    /// The native protocol's port (what the other servers of a cluster connect to).
    public let tcpPort: Int
    /// The port replicas fetch parts from (`interserver_http_port`).
    public let interserverPort: Int

    /// The binary: `FRAMESCOPE_CLICKHOUSE_SERVER`, or Debian's.
    public static var binary: String { ProcessInfo.processInfo.environment["FRAMESCOPE_CLICKHOUSE_SERVER"] ?? "/usr/sbin/clickhouse-server" }

    /// A server (or ZooKeeper) that is not installed or did not start; the text says why.
    public struct Missing: Error, CustomStringConvertible {
        /// What is missing or went wrong, and how to fix it.
        public var description: String
    }

    /// The three ports a server listens on, all on 127.0.0.1.
    public struct Ports: Sendable, Hashable {
        /// `http_port`, what ``ClickHouseClient`` talks to.
        var http: Int
        /// `tcp_port`, the native protocol.
        var tcp: Int
        /// `interserver_http_port`.
        var interserver: Int

        /// Three distinct ports that nothing listens on now.
        static func free() throws -> Ports {
            let ports = try ClickHouseServer.freePorts(3)
            return Ports(http: ports[0], tcp: ports[1], interserver: ports[2])
        }
    }

    /// Starts a server and waits until it answers `/ping` (up to 30 s).
    ///
    /// - Parameters:
    ///   - ports: where it listens; three free ports when `nil`.
    ///   - extraConfig: XML elements put inside `config.xml`'s `<yandex>` after the single-server
    ///     settings (a cluster's `remote_servers`, `macros`, `zookeeper`, `distributed_ddl`).
    ///   - quickShutdown: whether idle connections are dropped after 1–2 s (`keep_alive_timeout` 2 s
    ///     for HTTP, the default profile's `poll_interval` for the native protocol). 18.16 waits
    ///     on SIGTERM until every idle connection times out, 10 s by default, and the test's
    ///     shared HTTP client and the other shard of a cluster keep some open; with this a
    ///     server stops in 1–2.5 s instead of about 10 s (then SIGKILL, see ``halt()``).
    public init(ports: Ports? = nil, extraConfig: String = "", quickShutdown: Bool = true) async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw Missing(description: "no ClickHouse server at \(Self.binary): apt-get install clickhouse-server (scripts/test does), or set FRAMESCOPE_CLICKHOUSE_SERVER")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-clickhouse-\(UUID().uuidString)")
        for folder in ["data", "tmp", "log", "user_files", "format_schemas"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let ports = try ports ?? Ports.free()
        httpPort = ports.http
        tcpPort = ports.tcp
        interserverPort = ports.interserver
        let path = directory.path
        let profileExtra = quickShutdown ? "<poll_interval>1</poll_interval>" : ""
        let serverExtra = quickShutdown ? "<keep_alive_timeout>2</keep_alive_timeout>" : ""
        try """
            <?xml version="1.0"?>
            <yandex>
                <profiles><default><max_memory_usage>2000000000</max_memory_usage>\(profileExtra)</default></profiles>
                <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
                <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
            </yandex>
            """.write(to: directory.appendingPathComponent("users.xml"), atomically: true, encoding: .utf8)
        try """
            <?xml version="1.0"?>
            <yandex>
                <logger><level>warning</level><log>\(path)/log/server.log</log><errorlog>\(path)/log/server.err.log</errorlog><size>10M</size><count>1</count></logger>
                <listen_host>127.0.0.1</listen_host>
                <tcp_port>\(tcpPort)</tcp_port>
                <http_port>\(httpPort)</http_port>
                <interserver_http_port>\(interserverPort)</interserver_http_port>
                <interserver_http_host>127.0.0.1</interserver_http_host>
                <path>\(path)/data/</path>
                <tmp_path>\(path)/tmp/</tmp_path>
                <user_files_path>\(path)/user_files/</user_files_path>
                <format_schema_path>\(path)/format_schemas/</format_schema_path>
                <users_config>\(path)/users.xml</users_config>
                <default_profile>default</default_profile>
                <default_database>default</default_database>
                <timezone>UTC</timezone>
                <mark_cache_size>268435456</mark_cache_size>
                <uncompressed_cache_size>268435456</uncompressed_cache_size>
                <max_concurrent_queries>100</max_concurrent_queries>
                <mlock_executable>false</mlock_executable>
            \(serverExtra)\(extraConfig)
            </yandex>
            """.write(to: directory.appendingPathComponent("config.xml"), atomically: true, encoding: .utf8)
        do {
            try await launch()
        } catch {
            stop()
            throw error
        }
    }

    /// How long a test waits for a server it started to be ready, in seconds: a deadline, not
    /// a count of polls, and long, because CI's main run starts about nine servers and three
    /// JVMs at once on two cores, where a poll's own time stretches too.
    public static let startupDeadline: Duration = .seconds(120)

    /// Spawns the server on its folder and config and waits until it answers `/ping` (up to
    /// ``startupDeadline``); if it does not, stops it and throws with the end of its error log.
    private func launch() async throws {
        let path = directory.path
        pid = try Self.spawn(Self.binary, arguments: ["--config-file=\(path)/config.xml"], log: "\(path)/log/stdout.log", folder: path)
        let client = ClickHouseClient(location: location(database: "default"), timeout: 5)
        let deadline = ContinuousClock.now + Self.startupDeadline
        while ContinuousClock.now < deadline {
            if await client.ping() { return }
            guard isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let output = (try? String(contentsOf: directory.appendingPathComponent("log/server.err.log"), encoding: .utf8)) ?? ""
        halt()
        throw Missing(description: "clickhouse-server did not answer /ping on port \(httpPort) within \(Self.startupDeadline): \(output.suffix(1500))")
    }

    /// The location of `database` on this server.
    public func location(database: String) -> ClickHouseLocation {
        ClickHouseLocation(host: "127.0.0.1", port: httpPort, database: database)
    }

    /// Starts the server again on the same folder, ports and config, its data kept, after
    /// stopping it with ``halt()`` if it runs. Returns once it answers `/ping` and none of its
    /// replicated tables is read-only (each up to ``startupDeadline``), so a shard brought back
    /// takes inserts.
    public func restart() async throws {
        halt()
        try await launch()
        let client = ClickHouseClient(location: location(database: "default"), timeout: 5)
        var last = ""
        let deadline = ContinuousClock.now + Self.startupDeadline
        while ContinuousClock.now < deadline {
            do {
                let rows = try await client.rows("SELECT count() FROM system.replicas WHERE is_readonly")
                if rows == [["0"]] { return }
                last = "read-only replicated tables: \(rows)"
            } catch {
                last = "\(error)"
            }
            guard isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Missing(description: "clickhouse-server on port \(httpPort) restarted but was not ready within \(Self.startupDeadline): \(last)")
    }

    /// Stops the server (SIGTERM, then SIGKILL after 10 s), reaps it and deletes its folder.
    public func stop() {
        halt()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server process (SIGTERM, then SIGKILL after 10 s) and reaps it, keeping its
    /// folder, ports and config for ``restart()``. Does nothing when it is not running.
    public func halt() {
        guard pid > 0 else { return }
        Self.terminate(pid)
        pid = 0
    }

    /// Whether the server process has not exited (reaping it if it has).
    public var isRunning: Bool { ChildProcesses.isRunning(&pid) }

    /// Sends `process` SIGTERM, waits up to `grace` seconds for it to exit, then sends it
    /// SIGKILL; reaps it either way.
    public static func terminate(_ process: pid_t, grace: Double = 10) {
        kill(process, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<max(1, Int(grace * 20)) {
            if waitpid(process, &status, WNOHANG) == process {
                ChildProcesses.reaped(process)
                return
            }
            usleep(50_000)
        }
        kill(process, SIGKILL)
        _ = waitpid(process, &status, 0)
        ChildProcesses.reaped(process)
    }

    /// Starts `path` with `arguments`, standard input from /dev/null and both outputs
    /// appended to `log`; returns its process id. `folder` (the server's data) is deleted
    /// with it when the test process exits while it still runs.
    ///
    /// The child starts with no signal blocked and the usual signals at their default action.
    /// A child inherits the spawning thread's signal mask, and a Swift test process's threads
    /// block nearly every signal, SIGTERM included: clickhouse-server and Java spawned without
    /// this never saw SIGTERM and were only ended by the SIGKILL 10 s later.
    public static func spawn(_ path: String, arguments: [String], log: String, folder: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw Missing(description: "posix_spawn \(path): error \(result)") }
        ChildProcesses.started(child, folder: folder)
        return child
    }

    deinit { stop() }

    /// `count` distinct TCP ports on loopback that nothing listens on now.
    public static func freePorts(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        for _ in 0..<(count * 20) where ports.count < count {
            let port = try freePort()
            if !ports.contains(port) { ports.append(port) }
        }
        guard ports.count == count else { throw Missing(description: "the kernel gave fewer than \(count) distinct free ports") }
        return ports
    }

    /// A TCP port on loopback that nothing listens on now (the kernel's choice).
    public static func freePort() throws -> Int {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw Missing(description: "socket() failed") }
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw Missing(description: "bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        guard named == 0 else { throw Missing(description: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The servers this test process started and has not reaped: killed when the process exits
/// normally (`atexit`), and their data folders deleted, so a server shared by a whole run
/// (``SharedClickHouse``), or one a failed test left behind, does not outlive the run. (Left
/// in /tmp, the shared servers' folders filled this machine's disk after some 150 runs:
/// about 1 GB each, most of it the load tests' data.)
public enum ChildProcesses {
    nonisolated(unsafe) private static var running: [pid_t: String?] = [:]
    private static let lock = NSLock()
    nonisolated(unsafe) private static var registered = false

    /// Records a started child and its data folder; the first call installs the exit handler.
    static func started(_ pid: pid_t, folder: String? = nil) {
        lock.withLock {
            running[pid] = folder
            if !registered {
                registered = true
                atexit {
                    let children = ChildProcesses.snapshot()
                    for (pid, _) in children { kill(pid, SIGKILL) }
                    for (pid, folder) in children {
                        var status: Int32 = 0
                        _ = waitpid(pid, &status, 0)
                        if let folder { try? FileManager.default.removeItem(atPath: folder) }
                    }
                }
            }
        }
    }

    /// Whether the child `pid` has not exited; reaps it (and sets `pid` to 0) if it has.
    public static func isRunning(_ pid: inout pid_t) -> Bool {
        guard pid > 0 else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped(pid)
            pid = 0
            return false
        }
        return true
    }

    /// Forgets a child that was reaped.
    public static func reaped(_ pid: pid_t) {
        _ = lock.withLock { running.removeValue(forKey: pid) }
    }

    static func snapshot() -> [(pid_t, String?)] { lock.withLock { running.map { ($0.key, $0.value) } } }
}

