import Foundation
import FramescopeClickHouse

#if canImport(Glibc)
import Glibc
#endif

/// A real ClickHouse server for a test: Debian's `clickhouse-server` on loopback, with a
/// config of its own (no `include_from`), its own data folder and ports, started here and
/// stopped by its process id. No server installed is a failure saying how to get one
/// (`.ci/run` installs it), never a skip.
final class ClickHouseServer: @unchecked Sendable {
    let directory: URL
    let process = Process()
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
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--config-file=\(path)/config.xml"]
        process.standardInput = FileHandle.nullDevice
        let log = try FileHandle(forWritingTo: { () -> URL in
            let url = directory.appendingPathComponent("log/stdout.log")
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            return url
        }())
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let client = ClickHouseClient(location: location(database: "default"), timeout: 5)
        for _ in 0..<300 {
            if await client.ping() { return }
            guard process.isRunning else { break }
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

    /// Stops the server (SIGTERM, then SIGKILL after 10 s) and deletes its folder.
    func stop() {
        if process.isRunning {
            process.terminate()
            for _ in 0..<200 where process.isRunning { usleep(50_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
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
