/// Where a ClickHouse store is: `clickhouse://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?cluster=NAME]`,
/// as `framescope serve --store` takes it.
///
/// The port is ClickHouse's HTTP interface (8123 by default). The database and cluster
/// names are identifiers (``ClickHouseSQL/isIdentifier(_:)``), never quoted into SQL.
///
/// ```swift
/// let location = try ClickHouseLocation(parsing: "clickhouse://default@127.0.0.1:8123/framescope?cluster=two_shards")
/// location.httpBase   // "http://127.0.0.1:8123/"
/// ```
public struct ClickHouseLocation: Sendable, Hashable, CustomStringConvertible {
    /// The user name (`default` when the URL names none).
    public var user: String
    /// The password, empty for none. Never printed (``description`` leaves it out).
    public var password: String
    /// The host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The HTTP port, 1–65535.
    public var port: Int
    /// The database the store's tables live in.
    public var database: String
    /// The cluster of `remote_servers` that `Distributed` tables span, or `nil` for one server.
    public var cluster: String?

    /// ClickHouse's default HTTP port.
    public static let defaultPort = 8123

    /// A location; see each property.
    public init(user: String = "default", password: String = "", host: String, port: Int = defaultPort, database: String, cluster: String? = nil) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
        self.cluster = cluster
    }

    /// The location `text` names.
    /// - Throws: ``ClickHouseLocationError`` saying which part is wrong.
    public init(parsing text: String) throws(ClickHouseLocationError) {
        let scheme = "clickhouse://"
        guard text.hasPrefix(scheme) else { throw ClickHouseLocationError("must start with clickhouse://") }
        var rest = Substring(text.dropFirst(scheme.count))
        var cluster: String?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = rest[..<question]
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0] == "cluster" else {
                    throw ClickHouseLocationError("takes one query parameter, cluster=NAME, not '\(pair.prefix(40))'")
                }
                cluster = String(parts[1])
            }
        }
        guard let slash = rest.firstIndex(of: "/") else { throw ClickHouseLocationError("must name a database: clickhouse://USER@HOST:PORT/DATABASE") }
        let database = String(rest[rest.index(after: slash)...])
        var authority = rest[..<slash]
        var user = "default"
        var password = ""
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            user = String(parts[0])
            password = parts.count == 2 ? String(parts[1]) : ""
            guard !user.isEmpty else { throw ClickHouseLocationError("names an empty user before '@'") }
        }
        var host = String(authority)
        var port = Self.defaultPort
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ClickHouseLocationError("has an IPv6 host without its closing ']'") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ClickHouseLocationError("has text after the IPv6 host") }
                port = try Self.port(after.dropFirst())
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = try Self.port(authority[authority.index(after: colon)...])
        }
        guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && !"/?#@[]".unicodeScalars.contains($0) }) else {
            throw ClickHouseLocationError("must name a host")
        }
        guard ClickHouseSQL.isIdentifier(database) else {
            throw ClickHouseLocationError("names the database '\(database.prefix(40))'; a database is letters, digits and _, not starting with a digit")
        }
        if let cluster, !ClickHouseSQL.isIdentifier(cluster) {
            throw ClickHouseLocationError("names the cluster '\(cluster.prefix(40))'; a cluster is letters, digits and _, not starting with a digit")
        }
        self.init(user: user, password: password, host: host, port: port, database: database, cluster: cluster)
    }

    private static func port(_ text: Substring) throws(ClickHouseLocationError) -> Int {
        guard text.count <= 5, let port = Int(text), (1...65_535).contains(port) else {
            throw ClickHouseLocationError("has the port '\(text.prefix(12))'; a port is 1–65535")
        }
        return port
    }

    /// The HTTP interface's base URL, ending in `/`.
    public var httpBase: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "http://\(bracketed):\(port)/"
    }

    /// The location as a URL without the password (for logs and messages).
    public var description: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "clickhouse://\(user)@\(bracketed):\(port)/\(database)" + (cluster.map { "?cluster=\($0)" } ?? "")
    }
}

/// Why a `clickhouse://` location could not be read; the message says which part.
public struct ClickHouseLocationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, as the end of a sentence that starts with the location.
    public var message: String

    /// An error; see ``message``.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
