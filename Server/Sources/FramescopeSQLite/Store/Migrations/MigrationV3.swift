import Foundation
import FramescopeStore
import GRDB

/// Migration v3's own code, frozen as it was written: it carries version 1's hourly
/// rollups (JSON reports in `rollups`) into the rollup levels of version 2 (binary
/// reports), and calls nothing that later versions may change — no live report type,
/// encoder or upsert. It reads the v1 rows one level at a time in key order and keeps
/// one group in memory, never the whole table. Never edit it; a later change to the
/// stored forms is a new migration.
enum MigrationV3 {
    /// The v1 report's mergeable state: the 13 counters of binary layout 1 (frames,
    /// duration ns, first frames, first duration ns, dropped frames, drop events, max
    /// dropped, hitch ns, hangs, hang ns, slow, frozen, rejected), the shortest and
    /// longest frame, the stability band, and the three delta-coded pair lists.
    struct Report {
        var counters = [UInt64](repeating: 0, count: 13)
        var minimum: Double?
        var maximum: Double?
        var stabilityBand = 0.2
        var buckets: [(Int, Int)] = []
        var windows: [(Int, Int)] = []
        var rates: [(Int, Int)] = []

        static let maxDroppedIndex = 6

        /// v1's JSON object, as far as the mergeable state goes.
        struct JSONForm: Decodable {
            struct Durations: Decodable { var min: Double?; var max: Double? }
            struct Histograms: Decodable { var frameDuration: [[Int]]?; var windowFPS: [[Double]]?; var stabilityBand: Double? }
            var frames, firstFrames, droppedFrames, dropEvents, maxDroppedFrames, hangs, slowFrames, frozenFrames, rejectedTicks: Int64?
            var duration, firstDuration, hitchTime, hangTime: Double?
            var frameDuration: Durations?
            var refreshRates: [String: Int]?
            var histograms: Histograms?
        }

        /// A report from v1's JSON object.
        init(json text: String) throws {
            let form = try JSONDecoder().decode(JSONForm.self, from: Data(text.utf8))
            func count(_ value: Int64?) -> UInt64 { UInt64(max(0, value ?? 0)) }
            func nanoseconds(_ seconds: Double?) -> UInt64 {
                guard let seconds, seconds.isFinite, seconds > 0, seconds < 9e9 else { return 0 }
                return UInt64(seconds * 1e9 + 0.5)
            }
            counters = [count(form.frames), nanoseconds(form.duration), count(form.firstFrames), nanoseconds(form.firstDuration),
                        count(form.droppedFrames), count(form.dropEvents), count(form.maxDroppedFrames), nanoseconds(form.hitchTime),
                        count(form.hangs), nanoseconds(form.hangTime), count(form.slowFrames), count(form.frozenFrames), count(form.rejectedTicks)]
            minimum = form.frameDuration?.min
            maximum = form.frameDuration?.max
            stabilityBand = form.histograms?.stabilityBand ?? 0.2
            buckets = (form.histograms?.frameDuration ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
            windows = (form.histograms?.windowFPS ?? []).compactMap { pair -> (Int, Int)? in
                guard pair.count == 2, pair[0].isFinite, pair[1].isFinite, abs(pair[0]) < 1e12, abs(pair[1]) < 1e15 else { return nil }
                return (Int((pair[0] * 100).rounded()), Int(pair[1]))
            }.sorted { $0.0 < $1.0 }
            rates = (form.refreshRates ?? [:]).compactMap { key, value in Int(key).map { ($0, value) } }.sorted { $0.0 < $1.0 }
        }

        /// A report from binary layout 1.
        init(binary bytes: [UInt8]) throws {
            var reader = Reader(bytes: bytes)
            guard try reader.byte() == 1 else { throw Failure("unknown binary report version") }
            for index in 0..<13 { counters[index] = try reader.varint() }
            let low = try reader.double()
            let high = try reader.double()
            minimum = low.isNaN ? nil : low
            maximum = high.isNaN ? nil : high
            stabilityBand = try reader.double()
            buckets = try reader.pairs()
            windows = try reader.pairs()
            rates = try reader.pairs()
        }

        /// Adds `other`, as v1's merge did: counters add (the maximum drop takes the larger),
        /// extremes combine, pair lists add key by key.
        mutating func merge(_ other: Report) {
            if counters[0] == 0 && counters[2] == 0 && counters[12] == 0 && windows.isEmpty { stabilityBand = other.stabilityBand }
            for index in counters.indices {
                counters[index] = index == Self.maxDroppedIndex ? max(counters[index], other.counters[index])
                    : counters[index].addingReportingOverflow(other.counters[index]).overflow ? .max : counters[index] &+ other.counters[index]
            }
            minimum = [minimum, other.minimum].compactMap { $0 }.min()
            maximum = [maximum, other.maximum].compactMap { $0 }.max()
            buckets = Self.add(buckets, other.buckets)
            windows = Self.add(windows, other.windows)
            rates = Self.add(rates, other.rates)
        }

        static func add(_ a: [(Int, Int)], _ b: [(Int, Int)]) -> [(Int, Int)] {
            var sums: [Int: Int] = [:]
            for (key, count) in a + b { sums[key, default: 0] &+= count }
            return sums.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }

        /// Binary layout 1.
        func binary() -> [UInt8] {
            var bytes: [UInt8] = [1]
            func varint(_ value: UInt64) {
                var rest = value
                while rest >= 0x80 { bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80); rest >>= 7 }
                bytes.append(UInt8(rest))
            }
            func double(_ value: Double) {
                var bits = value.bitPattern
                for _ in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: bits)); bits >>= 8 }
            }
            func pairs(_ list: [(Int, Int)]) {
                varint(UInt64(list.count))
                var previous = 0
                for (key, value) in list {
                    varint(UInt64(max(0, key - previous)))
                    varint(UInt64(max(0, value)))
                    previous = key
                }
            }
            for counter in counters { varint(counter) }
            double(minimum ?? .nan)
            double(maximum ?? .nan)
            double(stabilityBand)
            pairs(buckets)
            pairs(windows)
            pairs(rates)
            return bytes
        }
    }

    struct Reader {
        var bytes: [UInt8]
        var position = 0

        mutating func byte() throws -> UInt8 {
            guard position < bytes.count else { throw Failure("cut short") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                guard shift < 64 else { throw Failure("varint too long") }
                result |= UInt64(next & 0x7F) << shift
                if next & 0x80 == 0 { return result }
                shift += 7
            }
        }

        mutating func double() throws -> Double {
            var bits: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try byte()) << UInt64(shift) }
            return Double(bitPattern: bits)
        }

        mutating func pairs() throws -> [(Int, Int)] {
            let count = try varint()
            guard count <= UInt64(bytes.count - position) else { throw Failure("pair count exceeds the data") }
            var result: [(Int, Int)] = []
            var key = 0
            for _ in 0..<count {
                let delta = try varint()
                let value = try varint()
                guard delta <= UInt64(Int.max - key), value <= UInt64(Int.max) else { throw Failure("pair out of range") }
                key += Int(delta)
                result.append((key, Int(value)))
            }
            return result
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The binary form of empty per-visit statistics (a count of 0).
    static let emptyStatistics: [UInt8] = [0]

    /// The v2 tables and how v1's `rollups` columns map onto each: its bucket and whether it keeps the dimensions.
    static let levels: [(table: String, bucket: String, keepsDimensions: Bool)] = [
        ("rollups_hourly", "CAST(hour AS INTEGER)", true),
        ("rollups_daily", "CAST(hour AS INTEGER) - ((CAST(hour AS INTEGER) % 86400) + 86400) % 86400", true),
        ("rollups_screen_hourly", "CAST(hour AS INTEGER)", false),
        ("rollups_screen_daily", "CAST(hour AS INTEGER) - ((CAST(hour AS INTEGER) % 86400) + 86400) % 86400", false),
    ]

    /// Adds every v1 rollup row to each v2 level, then drops `rollups`.
    static func run(_ db: Database) throws {
        for level in levels {
            try db.execute(sql: "ALTER TABLE \(level.table) ADD COLUMN devices BLOB")
        }
        for level in levels {
            let dimensions = level.keepsDimensions ? "app_version, os_version, device_model, network, low_power" : "'*', '*', '*', '*', 0"
            let rows = try Row.fetchCursor(db, sql: """
                SELECT app_id, \(level.bucket) AS bucket, screen, \(dimensions), visits, report, motion FROM rollups
                ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
                """)
            var group: (key: [DatabaseValue], visits: Int64, report: Report, motion: Report?)?
            while let row = try rows.next() {
                let key = (0..<8).map { row[$0] as DatabaseValue }
                let report = try Report(json: row[9])
                let motion = try (row[10] as String?).map { try Report(json: $0) }
                if var current = group, current.key == key {
                    current.visits += row[8] as Int64
                    current.report.merge(report)
                    if let motion { if current.motion == nil { current.motion = motion } else { current.motion?.merge(motion) } }
                    group = current
                } else {
                    if let group { try add(group, to: level.table, db) }
                    group = (key, row[8], report, motion)
                }
            }
            if let group { try add(group, to: level.table, db) }
        }
        try db.execute(sql: "DROP TABLE IF EXISTS rollups")
    }

    /// Adds one group to its row in `table`: merged with a row v2 wrote, or inserted.
    static func add(_ group: (key: [DatabaseValue], visits: Int64, report: Report, motion: Report?), to table: String, _ db: Database) throws {
        let keyArguments = StatementArguments(group.key)
        let condition = "app_id = ? AND bucket = ? AND screen = ? AND app_version = ? AND os_version = ? AND device_model = ? AND network = ? AND low_power = ?"
        var visits = group.visits
        var report = group.report
        var motion = group.motion
        if let row = try Row.fetchOne(db, sql: "SELECT visits, report, motion FROM \(table) WHERE \(condition)", arguments: keyArguments) {
            visits += row["visits"] as Int64
            report.merge(try Report(binary: [UInt8](row["report"] as Data)))
            if let stored = try (row["motion"] as Data?).map({ try Report(binary: [UInt8]($0)) }) {
                if motion == nil { motion = stored } else { motion?.merge(stored) }
            }
            try db.execute(sql: "UPDATE \(table) SET visits = ?, report = ?, motion = ? WHERE \(condition)",
                           arguments: [visits, Data(report.binary()), motion.map { Data($0.binary()) }] + keyArguments)
        } else {
            try db.execute(sql: """
                INSERT INTO \(table) (app_id, bucket, screen, app_version, os_version, device_model, network, low_power, visits, report, motion, stats)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: keyArguments + [visits, Data(report.binary()), motion.map { Data($0.binary()) }, Data(emptyStatistics)])
        }
    }
}
