import AsyncHTTPClient
import Foundation
import NIOCore


/// ClickHouse's HTTP interface, one statement a request, with the settings every request
/// of the store needs on 18.16 and later: `wait_end_of_query=1` (without it an error after
/// the first rows still answers 200), the location's database, its credentials as HTTP
/// basic authentication, and a client timeout.
///
/// ```swift
/// let client = ClickHouseClient(location: try ClickHouseLocation(parsing: "clickhouse://default@127.0.0.1:8123/framescope"))
/// try await client.execute("CREATE DATABASE IF NOT EXISTS framescope")
/// let rows = try await client.rows("SELECT app_id, count() FROM events GROUP BY app_id")   // [["shop", "1200"]]
/// ```
public struct ClickHouseClient: Sendable {
    /// Where the server is.
    public let location: ClickHouseLocation
    /// How long one request may take, in seconds (also sent as `max_execution_time`, 1 s less).
    public let timeout: Int64
    let http: HTTPClient

    /// A client for `location` on `http` (``sharedHTTPClient`` by default).
    public init(location: ClickHouseLocation, timeout: Int64 = 30, http: HTTPClient = ClickHouseClient.sharedHTTPClient) {
        self.location = location
        self.timeout = timeout
        self.http = http
    }

    /// The process's HTTP client for ClickHouse, never shut down: a 2 s connect timeout, and a
    /// failed connection fails the request at once instead of being tried again until the
    /// 2 s wait for a pooled connection runs out (async-http-client's default; measured: 2 s a
    /// request against 5 ms), so a collector answers 503 while ClickHouse is down rather than
    /// holding every device's request; no
    /// redirects; up to 32 connections to each server.
    public static let sharedHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(2)))
        configuration.connectionPool.retryConnectionEstablishment = false
        // ClickHouse closes an idle connection after `keep_alive_timeout` (3 s by default):
        // give connections up sooner than that, so that few requests meet a closed one.
        configuration.connectionPool.idleTimeout = .seconds(1)
        // The connect timeout also bounds a request's wait for a pooled connection
        // (`getConnectionFromPoolTimeout`): with async-http-client's 8 connections a host,
        // a ninth query behind eight slow ones (a retention sweep, the dashboard's reads
        // beside a busy ingest) failed as "unavailable" after 2 s. 32 stays well under
        // ClickHouse's `max_concurrent_queries` (100 by default).
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// How long a schema change or mutation may take, in seconds: ClickHouse's own default
    /// `distributed_ddl_task_timeout`. An `ON CLUSTER` statement waits for every shard to
    /// take it from ZooKeeper's queue, which on a busy machine took longer than a device
    /// request's ``timeout`` (a retention sweep failed with the client's deadline).
    public static let schemaTimeout: Int64 = 180

    /// Runs `sql` (one statement, no result wanted) in the location's database, or in none
    /// when `inDatabase` is false (to create it), within `timeout` seconds (``timeout`` when
    /// nil; ``schemaTimeout`` for schema changes and mutations).
    /// - Throws: ``ClickHouseError``.
    public func execute(_ sql: String, inDatabase: Bool = true, timeout: Int64? = nil) async throws(ClickHouseError) {
        let seconds = timeout ?? self.timeout
        _ = try await send(body: Array(sql.utf8), query: nil, inDatabase: inDatabase, timeout: seconds,
                           settings: [("distributed_ddl_task_timeout", String(max(1, seconds - 1)))])
    }

    /// The rows of `sql` (a `SELECT` without a `FORMAT` clause), each as its columns' text
    /// in ClickHouse's `TabSeparated` output (numbers in their shortest exact form).
    /// - Throws: ``ClickHouseError``.
    public func rows(_ sql: String) async throws(ClickHouseError) -> [[String]] {
        let body = try await send(body: Array((sql + " FORMAT TabSeparated").utf8), query: nil, inDatabase: true, timeout: timeout)
        return TabSeparated.rows(body)
    }

    /// Inserts `rows` (``RowBinaryWriter``'s bytes) into `table`'s `columns` as one `INSERT`:
    /// one block on the server, which is what a replicated table deduplicates on a retry.
    /// - Throws: ``ClickHouseError``.
    public func insert(into table: String, columns: [String], rows: [UInt8], settings: [(String, String)] = []) async throws(ClickHouseError) {
        let statement = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) FORMAT RowBinary"
        _ = try await send(body: rows, query: statement, inDatabase: true, timeout: timeout, settings: settings)
    }

    /// Whether the server answers `/ping` with `Ok.` within `timeout`.
    public func ping() async -> Bool {
        let request = HTTPClientRequest(url: location.httpBase + "ping")
        guard let response = try? await http.execute(request, timeout: .seconds(timeout)), response.status == .ok,
              let body = try? await response.body.collect(upTo: 64) else { return false }
        return String(buffer: body).hasPrefix("Ok.")
    }

    private func send(body: [UInt8], query: String?, inDatabase: Bool, timeout: Int64, settings: [(String, String)] = []) async throws(ClickHouseError) -> [UInt8] {
        var parameters: [(String, String)] = [("wait_end_of_query", "1"), ("max_execution_time", String(max(1, timeout - 1)))]
        if inDatabase { parameters.append(("database", location.database)) }
        if let query { parameters.append(("query", query)) }
        parameters += settings
        let url = location.httpBase + "?" + parameters.map { "\($0.0)=\(Self.percentEncode($0.1))" }.joined(separator: "&")
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        let credentials = Data("\(location.user):\(location.password)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        request.body = .bytes(ByteBuffer(bytes: body))
        var response: HTTPClientResponse?
        var bytes = ByteBuffer()
        // A pooled connection the server closed while it sat idle fails before the request
        // is sent, so the server did nothing: send it once more on a new connection.
        for attempt in 0..<2 where response == nil {
            do {
                let answer = try await http.execute(request, timeout: .seconds(timeout))
                bytes = try await answer.body.collect(upTo: 1 << 30)
                response = answer
            } catch let error as ChannelError where error == .ioOnClosedChannel && attempt == 0 {
                continue
            } catch let error as HTTPClientError where error == .remoteConnectionClosed && attempt == 0 {
                continue
            } catch {
                throw .unavailable("\(location.httpBase): \(error)")
            }
        }
        guard let response else { throw .unavailable("\(location.httpBase): the connection closed twice") }
        let answer = Array(bytes.readableBytesView)
        if let failure = ClickHouseError.from(status: Int(response.status.code), body: String(decoding: answer.prefix(4000), as: UTF8.self)) {
            throw failure
        }
        return answer
    }

    /// `text` with everything but RFC 3986's unreserved characters percent-encoded.
    static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// ClickHouse's `TabSeparated` output: rows by line feed, columns by tab, and `\\`, `\t`,
/// `\n`, `\r`, `\0`, `\b`, `\f`, `\'` escaped with a backslash inside values.
enum TabSeparated {
    /// The rows of `bytes`, each value unescaped.
    static func rows(_ bytes: [UInt8]) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var value: [UInt8] = []
        var escaped = false
        for byte in bytes {
            if escaped {
                switch byte {
                case UInt8(ascii: "t"): value.append(0x09)
                case UInt8(ascii: "n"): value.append(0x0A)
                case UInt8(ascii: "r"): value.append(0x0D)
                case UInt8(ascii: "0"): value.append(0x00)
                case UInt8(ascii: "b"): value.append(0x08)
                case UInt8(ascii: "f"): value.append(0x0C)
                default: value.append(byte)
                }
                escaped = false
                continue
            }
            switch byte {
            case UInt8(ascii: "\\"): escaped = true
            case 0x09:
                row.append(String(decoding: value, as: UTF8.self))
                value.removeAll(keepingCapacity: true)
            case 0x0A:
                row.append(String(decoding: value, as: UTF8.self))
                value.removeAll(keepingCapacity: true)
                rows.append(row)
                row = []
            default: value.append(byte)
            }
        }
        return rows
    }
}
