import Foundation
import FramescopeStore
import GRDB

/// Migration v7's own code, frozen as it was written: per-visit statistics in rollup rows
/// go from being keyed by their figure's position in the enum of version 6 to being keyed
/// by the figure's name, so that reordering or adding figures can no longer misread a row.
///
/// It rewrites each `stats` blob with an SQL function of its own, inside SQLite's own
/// `UPDATE` (no row is held in Swift), and calls no live code: the names and the byte
/// layout below are v6's. A blob that is not v6's form stays as it was (it could not be
/// read before either). Never edit it; a later change to the stored form is a new migration.
enum MigrationV7 {
    /// v6's figures in their enum order: the name for each stored position.
    static let namesByPosition = ["hitchRatio", "motion.hitchRatio", "hangRate", "averageFPS", "frozenFramesPerThousand"]

    /// The rollup tables as they were at v6.
    static let tables = ["rollups_hourly", "rollups_daily", "rollups_screen_hourly", "rollups_screen_daily"]

    static func run(_ db: Database) throws {
        let function = DatabaseFunction("framescope_v7_statistics", argumentCount: 1, pure: true) { values in
            guard let data = Data.fromDatabaseValue(values[0]) else { return values[0] }
            return convert([UInt8](data)).map { Data($0) } ?? data
        }
        db.add(function: function)
        defer { db.remove(function: function) }
        for table in tables {
            try db.execute(sql: "UPDATE \(table) SET stats = framescope_v7_statistics(stats)")
        }
    }

    /// v6's form (count; per figure: position, visits, five 8-byte doubles, zero count,
    /// delta-coded pairs) in v7's form (the same with the position replaced by the name's
    /// UTF-8 length and bytes), or `nil` when `bytes` is not v6's form.
    static func convert(_ bytes: [UInt8]) -> [UInt8]? {
        var position = 0
        func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count, shift < 64 {
                let next = bytes[position]
                position += 1
                result |= UInt64(next & 0x7F) << shift
                if next & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }
        var output: [UInt8] = []
        func write(_ value: UInt64) {
            var rest = value
            while rest >= 0x80 {
                output.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            output.append(UInt8(rest))
        }
        guard let count = varint(), count <= UInt64(namesByPosition.count) else { return nil }
        write(count)
        for _ in 0..<count {
            guard let index = varint(), index < UInt64(namesByPosition.count) else { return nil }
            let name = Array(namesByPosition[Int(index)].utf8)
            write(UInt64(name.count))
            output.append(contentsOf: name)
            let start = position
            guard varint() != nil, bytes.count - position >= 40 else { return nil }  // visits, five sums
            position += 40
            guard varint() != nil, let pairs = varint(), pairs <= UInt64(bytes.count) else { return nil }  // zeros, pairs
            for _ in 0..<(2 * pairs) where varint() == nil { return nil }
            output.append(contentsOf: bytes[start..<position])
        }
        return position == bytes.count ? output : nil
    }
}
