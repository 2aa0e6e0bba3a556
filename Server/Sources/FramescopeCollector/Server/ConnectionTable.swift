/// The collector's open connections as a state machine with no clock and no IO: which are
/// serving a request, which has been idle longest, and which to close to make room when
/// ``maximum`` are open. ``ConnectionGuard`` feeds it channel events and closes what it
/// names.
///
/// "Idle" means no request is being served: before the first request head is complete
/// (a silent socket, or a head sent a byte at a time), or after a response was flushed and
/// before the next head. A connection serving a request is never chosen, however long the
/// request takes; its body is held to ``BodyPace`` instead.
struct ConnectionTable<ID: Hashable & Sendable>: Sendable {
    /// What the table knows of one connection.
    struct Entry: Equatable {
        /// Requests being served now (0 or 1 on HTTP/1.1).
        var requests = 0
        /// When the connection last opened, started or ended a request, or flushed
        /// (the table's own counter, not a time).
        var lastActive: UInt64
        /// Chosen to make room and closing.
        var closing = false
        /// Close once the current response is flushed (it said `Connection: close`).
        var closeAfterResponse = false
    }

    /// The most connections open at once.
    let maximum: Int
    /// Every connection not yet closed.
    private(set) var entries: [ID: Entry] = [:]
    /// Connections chosen to make room so far.
    private(set) var shed = 0
    private var closing = 0
    private var counter: UInt64 = 0

    /// A table for at most `maximum` connections.
    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// Connections open and not on their way out.
    var openCount: Int { entries.count - closing }

    /// Records a new connection. When that makes ``maximum`` open, returns the connection
    /// idle longest (not `id`) to close, or `nil` when every other is serving a request
    /// (then the server stops accepting until one closes).
    /// - Complexity: O(*n*) in the open connections when at the limit, O(1) otherwise.
    mutating func opened(_ id: ID) -> ID? {
        counter += 1
        entries[id] = Entry(lastActive: counter)
        guard openCount >= maximum else { return nil }
        var victim: (id: ID, lastActive: UInt64)?
        for (other, entry) in entries where other != id && entry.requests == 0 && !entry.closing {
            if victim.map({ entry.lastActive < $0.lastActive }) ?? true { victim = (other, entry.lastActive) }
        }
        guard let victim else { return nil }
        entries[victim.id]?.closing = true
        closing += 1
        shed += 1
        return victim.id
    }

    /// A request head on `id` reached the responder.
    mutating func requestStarted(_ id: ID) {
        counter += 1
        entries[id]?.requests += 1
        entries[id]?.lastActive = counter
    }

    /// The responder returned for a request on `id`; `closeAfterResponse` when its
    /// response says `Connection: close`.
    mutating func requestEnded(_ id: ID, closeAfterResponse: Bool) {
        counter += 1
        guard var entry = entries[id] else { return }
        entry.requests = max(0, entry.requests - 1)
        entry.lastActive = counter
        if closeAfterResponse { entry.closeAfterResponse = true }
        entries[id] = entry
    }

    /// `id` flushed what it wrote. Returns whether to close it now: its response said
    /// `Connection: close` and no request is being served.
    mutating func flushed(_ id: ID) -> Bool {
        counter += 1
        guard var entry = entries[id] else { return false }
        entry.lastActive = counter
        let close = entry.closeAfterResponse && entry.requests == 0
        if close { entry.closeAfterResponse = false }
        entries[id] = entry
        return close
    }

    /// `id` closed, for whatever reason.
    mutating func closed(_ id: ID) {
        if entries.removeValue(forKey: id)?.closing == true { closing -= 1 }
    }
}
