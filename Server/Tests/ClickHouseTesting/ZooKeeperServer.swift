import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real ZooKeeper for a test: Debian's `zookeeper` package run standalone by its Java on a
/// loopback port, with a folder of its own (config, data, log), started here and stopped by
/// its process id. ClickHouse needs it for replicated tables and `ON CLUSTER` statements.
/// No Java or no ZooKeeper jar is a failure saying how to get them, never a skip.
///
/// Started with `posix_spawn` (``ClickHouseServer/spawn(_:arguments:log:)``), never
/// Foundation's `Process`, for the reason ``ClickHouseServer`` gives.
///
/// Ready means more than `ruok` answering `imok`: ZooKeeper 3.8 answers `imok` some 0.1–0.3 s
/// before it serves sessions (`srvr` says "This ZooKeeper instance is not currently serving
/// requests" meanwhile), and a clickhouse-server 18.16 started in that window fails its first
/// ZooKeeper session and crashes (SIGSEGV) on the first `ON CLUSTER` statement it gets within
/// the next second. So the start also waits until `srvr` reports its `Mode:`.
public final class ZooKeeperServer: @unchecked Sendable {
    /// The server's own folder: `zoo.cfg`, `log4j.properties`, `data/`, `zookeeper.log`.
    public let directory: URL
    /// The client port on 127.0.0.1.
    public let port: Int
    /// The Java process's id, 0 once stopped.
    public private(set) var pid: pid_t = 0

    /// The Java binary: `FRAMESCOPE_JAVA`, or Debian's `/usr/bin/java`.
    static var java: String { ProcessInfo.processInfo.environment["FRAMESCOPE_JAVA"] ?? "/usr/bin/java" }
    /// Debian's ZooKeeper jar (package `zookeeper`, which depends on a JRE).
    static let jar = "/usr/share/java/zookeeper.jar"

    /// Starts ZooKeeper on a free port and waits until it serves (up to 30 s).
    /// - Throws: ``ClickHouseServer/Missing`` when Java or the jar is missing, or it did not start.
    public init() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.java) else {
            throw ClickHouseServer.Missing(description: "no Java at \(Self.java): apt-get install zookeeper (scripts/test does; it brings a JRE), or set FRAMESCOPE_JAVA")
        }
        guard FileManager.default.fileExists(atPath: Self.jar) else {
            throw ClickHouseServer.Missing(description: "no ZooKeeper at \(Self.jar): apt-get install zookeeper (scripts/test does)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-zookeeper-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        port = try ClickHouseServer.freePort()
        let path = directory.path
        try """
            tickTime=2000
            initLimit=10
            syncLimit=5
            dataDir=\(path)/data
            clientPort=\(port)
            clientPortAddress=127.0.0.1
            admin.enableServer=false
            4lw.commands.whitelist=ruok,stat,srvr
            maxClientCnxns=0

            """.write(to: directory.appendingPathComponent("zoo.cfg"), atomically: true, encoding: .utf8)
        // Read only when a log4j binding of SLF4J is on the class path; Debian's 3.8 jar alone
        // logs nothing (SLF4J's no-operation logger).
        try """
            log4j.rootLogger=WARN, CONSOLE
            log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
            log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
            log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n

            """.write(to: directory.appendingPathComponent("log4j.properties"), atomically: true, encoding: .utf8)
        pid = try ClickHouseServer.spawn(Self.java, arguments: [
            "-Xmx256m", "-cp", "\(path):\(Self.jar)", "-Dlog4j.configuration=file:\(path)/log4j.properties",
            "org.apache.zookeeper.server.quorum.QuorumPeerMain", "\(path)/zoo.cfg",
        ], log: "\(path)/zookeeper.log", folder: path)
        var last = "no answer"
        let deadline = ContinuousClock.now + ClickHouseServer.startupDeadline
        while ContinuousClock.now < deadline {
            if let ruok = Self.fourLetterWord("ruok", port: port) {
                last = "ruok: \(ruok)"
                if ruok == "imok", let srvr = Self.fourLetterWord("srvr", port: port) {
                    if srvr.contains("Mode: ") { return }
                    last = "srvr: \(srvr.prefix(200))"
                }
            }
            guard isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let output = (try? String(contentsOf: directory.appendingPathComponent("zookeeper.log"), encoding: .utf8)) ?? ""
        stop()
        throw ClickHouseServer.Missing(description: "ZooKeeper did not serve on port \(port) within \(ClickHouseServer.startupDeadline) (\(last)): \(output.suffix(1500))")
    }

    /// The `<zookeeper>` element of a clickhouse-server config that points at this server.
    public var clickHouseConfig: String {
        "<zookeeper><node><host>127.0.0.1</host><port>\(port)</port></node><session_timeout_ms>30000</session_timeout_ms></zookeeper>"
    }

    /// Stops ZooKeeper (SIGTERM, then SIGKILL after 10 s), reaps it and deletes its folder.
    public func stop() {
        if pid > 0 {
            ClickHouseServer.terminate(pid)
            pid = 0
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether the Java process has not exited (reaping it if it has).
    public var isRunning: Bool { ChildProcesses.isRunning(&pid) }

    deinit { stop() }

    /// ZooKeeper's answer to the four-letter command `word` on 127.0.0.1:`port`, or `nil` when
    /// it cannot connect or no answer ends within `timeout` seconds. A connection made while
    /// ZooKeeper starts may be accepted and never answered, hence the timeout on every call.
    static func fourLetterWord(_ word: String, port: Int, timeout: Int = 1) -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array(word.utf8)
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answer.count < 1 << 16 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return String(decoding: answer, as: UTF8.self) }
            guard count > 0 else { return nil }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
