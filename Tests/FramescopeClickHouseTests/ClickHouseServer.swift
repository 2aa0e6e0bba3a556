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
final class ClickHouseServer: @unchecked Sendable {
    let directory: URL
    private(set) var pid: pid_t = 0
    let httpPort: Int
    let tcpPort: Int

    /// The binary: `FRAMESCOPE_CLICKHOUSE_SERVER`, or Debian's.
    static var binary: String { ProcessInfo.processInfo.environment["FRAMESCOPE_CLICKHOUSE_SERVER"] ?? "/usr/sbin/clickhouse-server" }

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a server and waits until it answers `/ping` (up to 30 s).
    init() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw Missing(description: "no ClickHouse server at \(Self.binary): apt-get install clickhouse-server (scripts/test does), or set FRAMESCOPE_CLICKHOUSE_SERVER")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-clickhouse-\(UUID().uuidString)")
        for folder in ["data", "tmp", "log", "user_files", "format_schemas"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        httpPort = try Self.freePort()
        tcpPort = try Self.freePort()
        let interserver = try Self.freePort()
        let path = directory.path
        try """
            <?xml version="1.0"?>
            <yandex>
                <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
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
                <interserver_http_port>\(interserver)</interserver_http_port>
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
            </yandex>
            """.write(to: directory.appendingPathComponent("config.xml"), atomically: true, encoding: .utf8)
        pid = try Self.spawn(Self.binary, arguments: ["--config-file=\(path)/config.xml"], log: "\(path)/log/stdout.log")
        let client = ClickHouseClient(location: location(database: "default"), timeout: 5)
        for _ in 0..<300 {
            if await client.ping() { return }
            guard isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let output = (try? String(contentsOf: directory.appendingPathComponent("log/server.err.log"), encoding: .utf8)) ?? ""
        stop()
        throw Missing(description: "clickhouse-server did not answer /ping on port \(httpPort) within 30 s: \(output.suffix(1500))")
    }

    /// The location of `database` on this server.
    func location(database: String) -> ClickHouseLocation {
        ClickHouseLocation(host: "127.0.0.1", port: httpPort, database: database)
    }

    /// Stops the server (SIGTERM, then SIGKILL after 10 s), reaps it and deletes its folder.
    func stop() {
        if pid > 0 {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            var reaped = false
            for _ in 0..<200 {
                if waitpid(pid, &status, WNOHANG) == pid { reaped = true; break }
                usleep(50_000)
            }
            if !reaped {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
            }
            pid = 0
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether the server process has not exited (reaping it if it has).
    var isRunning: Bool {
        guard pid > 0 else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            pid = 0
            return false
        }
        return true
    }

    /// Starts `path` with `arguments`, standard input from /dev/null and both outputs
    /// appended to `log`; returns its process id.
    static func spawn(_ path: String, arguments: [String], log: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard result == 0 else { throw Missing(description: "posix_spawn \(path): error \(result)") }
        return child
    }

    deinit { stop() }

    /// A TCP port on loopback that nothing listens on now (the kernel's choice).
    static func freePort() throws -> Int {
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
