import FramescopeStore
import GRDB

extension StoreError {
    /// The store error SQLite's `error` stands for, or `nil` for one that stands for none
    /// (a bug, answered 500 `internal`): `SQLITE_FULL` is ``full`` (the disk, or the
    /// database's size limit, is full; the transaction was rolled back).
    public init?(sqlite error: DatabaseError) {
        guard error.resultCode == .SQLITE_FULL else { return nil }
        self = .full
    }
}

extension DatabaseError: StoreErrorCandidate {
    /// ``StoreError/init(sqlite:)``: ``StoreError/full`` for `SQLITE_FULL`, otherwise `nil`.
    public var storeErrorIfKnown: StoreError? { StoreError(sqlite: self) }
}
