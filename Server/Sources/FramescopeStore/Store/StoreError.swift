/// What a store could not do, in the store's own terms: the one error type every
/// ``CollectorStore`` throws for a refusal or a failure a client's request meets.
///
/// A store knows nothing of HTTP; the collector answers each case with one status, code
/// and message (``collectorError``, in `StoreError+Response.swift`, which the error
/// middleware applies). A store's driver keeps its own error type for what it alone knows
/// (``StoreErrorConvertible``: ClickHouse's codes), and says which case it stands for.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An app with the id `id` exists already (revoked apps keep their ids).
    case appExists(id: String)
    /// The query cannot be answered as asked: the request parameter at fault (`tag.cohort`)
    /// and what is wrong with it.
    case invalidQuery(field: String, message: String)
    /// An event the store cannot keep as sent: the field at fault (`events[3].startedAt`) and
    /// what is wrong with it. The batch was not stored.
    case invalidEvent(field: String, message: String)
    /// The store has no space left (SQLite's `SQLITE_FULL`: the disk, or the database's
    /// size limit). The write was rolled back, so nothing of it was kept; an operator has to
    /// free space.
    case full
    /// The store `store` (its technology's name) cannot be reached now, or answered with an
    /// error that passes (a shard or ZooKeeper down, too many parts); a client should send
    /// the same request again after `retryAfter` seconds. Nothing of the write was counted.
    case unavailable(store: String, retryAfter: Int)
    /// A read of `what` ran past its time bound of `seconds` and was cancelled (the hangs of
    /// a range: ``HangsResponse/timeLimit``); the same read may answer later, or a narrower one now.
    case readTookTooLong(what: String, seconds: Int)
    /// The store failed in a way a retry does not cure (a bug); the details are in the log.
    case failed

    /// What went wrong, for a person (the CLI prints it; the HTTP answer is ``collectorError``).
    public var description: String {
        switch self {
        case .appExists(let id): "an app with id '\(id)' exists already (revoked apps keep their ids)"
        case .invalidQuery(let field, let message): "\(field): \(message)"
        case .invalidEvent(let field, let message): "\(field) \(message)"
        case .full: "the collector's store is full (no space left for the database)"
        case .unavailable(let store, _): "the collector's store (\(store)) cannot be reached"
        case .readTookTooLong(let what, let seconds): "\(what) took longer than \(seconds) s to read; send again later, or narrow the range or filters"
        case .failed: "the collector's store failed"
        }
    }
}

/// An error of a store's driver (ClickHouse's client) that stands for a ``StoreError``:
/// the driver's error keeps what only it knows (codes, text for the log), and the collector
/// answers as the store error does.
public protocol StoreErrorConvertible: Error {
    /// The store error this error stands for.
    var storeError: StoreError { get }
}

/// An error of a store's driver that may stand for a ``StoreError``, and otherwise is a bug
/// (SQLite's: only `SQLITE_FULL` stands for one, ``StoreError/full``). The collector answers
/// one that does as the store error does, and any other 500 `internal`, logged.
public protocol StoreErrorCandidate: Error {
    /// The store error this error stands for, or `nil` when it stands for none.
    var storeErrorIfKnown: StoreError? { get }
}
