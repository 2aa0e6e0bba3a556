/// A bound on the request bytes the collector holds at once: each ingest request
/// reserves its body's bytes as they arrive (never what it only declares, so a client that
/// announces 4 MiB and trickles holds what it has sent), and the decompressed size before
/// inflating it, and gives all back when it is answered. A request whose next bytes do not
/// fit is answered 503 with `Retry-After` instead of growing memory without limit.
public actor ByteBudget {
    /// The most bytes held at once.
    public let capacity: Int
    /// Bytes reserved now.
    public private(set) var reserved = 0
    /// Reservations refused so far.
    public private(set) var refusals = 0

    /// A budget of `capacity` bytes.
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Reserves `bytes` when they fit; returns whether they did.
    public func reserve(_ bytes: Int) -> Bool {
        guard bytes >= 0, reserved <= capacity - bytes else {
            refusals += 1
            return false
        }
        reserved += bytes
        return true
    }

    /// Gives back `bytes` reserved earlier.
    public func release(_ bytes: Int) {
        reserved = max(0, reserved - bytes)
    }
}

extension CollectorError {
    /// 503 with `Retry-After: 1`: the collector holds as many request bytes as it may.
    static let saturated = CollectorError(.serviceUnavailable, .saturated,
                                          message: "the collector is busy with other requests; retry after 1 s",
                                          headers: [.retryAfter: "1"])
}
