import Foundation
import FramescopeStore
import GRDB

/// Rollup rows as this process last committed them, so that an upsert of a hot row (this
/// hour's, today's) skips reading and decoding it.
///
/// Touched only on GRDB's writer queue: inside write transactions and in their commit and
/// rollback hooks, which GRDB runs on that same serial queue. That serialisation is what
/// makes the unchecked `Sendable` safe. Rows merged in a transaction are staged and enter
/// the cache only when it commits; a rollback empties the cache. It assumes this process
/// is the only writer of the rollups, as one collector per database file is.
final class RollupRowCache: @unchecked Sendable {
    struct Key: Hashable {
        var level: RollupLevel
        var app: String
        var key: RollupKey
    }

    private var rows: [Key: RollupValue] = [:]
    private var staged: [Key: RollupValue] = [:]
    private var bytes = 0
    private let capacity: Int
    private let capacityBytes: Int

    /// A cache of at most `capacity` rows holding at most `capacityBytes`
    /// (``RollupValue/approximateBytes``); emptied whole when full, as hot rows come back at once.
    init(capacity: Int, capacityBytes: Int = 64 << 20) {
        self.capacity = capacity
        self.capacityBytes = capacityBytes
    }

    func lookup(_ key: Key) -> RollupValue? {
        staged[key] ?? rows[key]
    }

    func stage(_ key: Key, _ value: RollupValue) {
        staged[key] = value
    }

    func commit() {
        let stagedBytes = staged.values.reduce(0) { $0 &+ $1.approximateBytes }
        if rows.count &+ staged.count > capacity || bytes &+ stagedBytes > capacityBytes {
            rows.removeAll(keepingCapacity: true)
            bytes = 0
        }
        for (key, value) in staged {
            if let old = rows.updateValue(value, forKey: key) { bytes = bytes &- old.approximateBytes }
            bytes = bytes &+ value.approximateBytes
        }
        staged.removeAll(keepingCapacity: true)
        if bytes > capacityBytes {
            // One transaction staged more than the whole budget: keep none of it.
            rows.removeAll()
            bytes = 0
        }
    }

    /// Rows and bytes held, for tests and metrics.
    var usage: (rows: Int, bytes: Int) { (rows.count, bytes) }

    func rollback() {
        staged.removeAll()
        rows.removeAll()
        bytes = 0
    }
}
