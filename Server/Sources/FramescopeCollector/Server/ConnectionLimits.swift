#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections `framescope serve` keeps open and how long a silent one may stay.
///
/// Both hold the collector up against clients that open connections and send nothing
/// (or a request head a byte at a time): without them, 1,100 such sockets exhaust the
/// common limit of 1,024 descriptors and `/health` and ingest time out for everyone.
/// ``ConnectionGuard`` applies them.
public struct ConnectionLimits: Sendable, Hashable {
    /// Seconds a connection may wait for a complete request head, counted from its opening
    /// or from the end of its previous response, and the longest pause between two parts
    /// of a request body (default 30 s). Past it the connection is closed without an
    /// answer. One timer does all three (Hummingbird's `HTTP1Channel` `idleTimeout`): the
    /// head counts only once it is complete, so a head sent a byte at a time is closed too.
    public var idleTimeout: Double
    /// The most connections open at once. At the limit the collector closes the
    /// connection that has been idle longest to make room; when every connection is
    /// serving a request, it stops accepting until one closes.
    public var maximumConnections: Int

    /// Descriptors kept for everything but connections: SQLite's files on its seven
    /// connections (about 21), ClickHouse's pool (32 per host), webhook deliveries, the
    /// listening socket, standard streams and NIO's own (128).
    public static let reservedDescriptors = 128
    /// The default idle timeout, seconds.
    public static let defaultIdleTimeout = 30.0

    /// Limits with `maximumConnections` connections and an idle timeout of `idleTimeout` seconds.
    public init(maximumConnections: Int, idleTimeout: Double = Self.defaultIdleTimeout) {
        self.maximumConnections = max(1, maximumConnections)
        self.idleTimeout = idleTimeout
    }

    /// The process's descriptor limit (the soft `RLIMIT_NOFILE`), or `nil` when it cannot
    /// be read or is unlimited.
    public static func descriptorLimit() -> Int? {
        var limit = rlimit()
        #if canImport(Darwin)
        let status = getrlimit(RLIMIT_NOFILE, &limit)
        #else
        let status = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #endif
        // Unlimited (`RLIM_INFINITY`, all ones) is past `Int32.max` too.
        guard status == 0, limit.rlim_cur <= rlim_t(Int32.max) else { return nil }
        return Int(limit.rlim_cur)
    }

    /// The most connections a process with `descriptorLimit` descriptors should hold:
    /// the limit less ``reservedDescriptors``, and at least 16 (or half the limit, when
    /// that leaves too few). Without a known limit, 16,384.
    ///
    /// With the common limit of 1,024 this is 896; with 20,000, 19,872.
    public static func defaultMaximumConnections(descriptorLimit: Int?) -> Int {
        guard let descriptorLimit else { return 16_384 }
        let left = descriptorLimit - reservedDescriptors
        return left >= 16 ? left : max(1, descriptorLimit / 2)
    }
}
