import Foundation
import FramescopeCore

/// An estimate of how many distinct devices sent visits, mergeable across rollups: a
/// HyperLogLog sketch of 512 one-byte registers over the batches' installation ids.
///
/// Merging takes the larger register, so the sketch of two sets is the sketch of their
/// union, and a device counted in two hours or two screens is counted once. The
/// standard error of the estimate is 1.04 / √512 ≈ 4.6 %; small counts use linear
/// counting and are close to exact. Hashing is FNV-1a followed by a 64-bit finalizer,
/// fixed across processes and platforms (Swift's `Hasher` is seeded per process).
public struct DeviceSketch: Sendable, Hashable {
    /// Number of registers (2⁹).
    public static let registerCount = 512
    static let indexBits = 9

    /// The registers; empty means no device yet (saves 512 bytes per row without ids).
    public private(set) var registers: [UInt8]

    /// No devices.
    public init() {
        registers = []
    }

    /// A sketch from stored registers: empty, or exactly ``registerCount`` bytes.
    /// - Throws: ``BinaryReportError`` for another length or a register over 56.
    public init(registers: [UInt8]) throws(BinaryReportError) {
        guard registers.isEmpty || registers.count == Self.registerCount else {
            throw BinaryReportError("a device sketch has \(Self.registerCount) registers, not \(registers.count)")
        }
        guard registers.allSatisfy({ $0 <= 64 - Self.indexBits + 1 }) else { throw BinaryReportError("device sketch register out of range") }
        self.registers = registers
    }

    /// The registers as stored in a rollup row, or nil for no devices.
    ///
    /// A sketch of few devices has few non-zero registers, so it is stored sparsely: the
    /// byte 2, the count of non-zero registers (UInt16, little-endian), then for each its
    /// index (UInt16, little-endian) and value: 3 + 3n bytes, at most 510 for n ≤ 169.
    /// With more non-zero registers the 512 registers are stored as they are. The two
    /// forms cannot be confused by their length, and the rows written before the sparse
    /// form (always 512 bytes) read back unchanged. Dense, a rollup row of a screen with a
    /// few devices passed SQLite's ~1 KB limit for a record kept on its page, and each
    /// update moved an overflow page.
    public func storedBytes() -> [UInt8]? {
        guard !registers.isEmpty else { return nil }
        var nonZero = 0
        for register in registers where register != 0 { nonZero += 1 }
        guard 3 + 3 * nonZero < Self.registerCount else { return registers }
        var bytes: [UInt8] = [Self.sparseMarker, UInt8(nonZero & 0xFF), UInt8(nonZero >> 8)]
        bytes.reserveCapacity(3 + 3 * nonZero)
        for (index, register) in registers.enumerated() where register != 0 {
            bytes.append(UInt8(index & 0xFF))
            bytes.append(UInt8(index >> 8))
            bytes.append(register)
        }
        return bytes
    }

    /// A sketch from the bytes ``storedBytes()`` made (sparse or dense) or from an empty
    /// array (no devices).
    /// - Throws: ``BinaryReportError`` for bytes of neither form, or a register out of range.
    public init(storedBytes bytes: [UInt8]) throws(BinaryReportError) {
        guard bytes.count != Self.registerCount, !bytes.isEmpty else {
            try self.init(registers: bytes)
            return
        }
        guard bytes[0] == Self.sparseMarker, bytes.count >= 3 else {
            throw BinaryReportError("a stored device sketch is 512 registers or sparse (marker 2), not \(bytes.count) bytes")
        }
        let count = Int(bytes[1]) | Int(bytes[2]) << 8
        guard bytes.count == 3 + 3 * count else {
            throw BinaryReportError("a sparse device sketch of \(count) registers has 3 + 3 × \(count) bytes, not \(bytes.count)")
        }
        var registers = [UInt8](repeating: 0, count: Self.registerCount)
        var previous = -1
        for entry in 0..<count {
            let offset = 3 + 3 * entry
            let index = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            guard index > previous, index < Self.registerCount else {
                throw BinaryReportError("sparse device sketch register indexes must increase and stay below \(Self.registerCount)")
            }
            let value = bytes[offset + 2]
            guard value > 0 else { throw BinaryReportError("a sparse device sketch stores non-zero registers only") }
            registers[index] = value
            previous = index
        }
        try self.init(registers: registers)
    }

    /// The first byte of the sparse stored form.
    static let sparseMarker: UInt8 = 2

    /// Adds the device with installation id `id`.
    public mutating func add(_ id: String) {
        let (index, rank) = Self.register(of: id)
        if registers.isEmpty { registers = [UInt8](repeating: 0, count: Self.registerCount) }
        if rank > registers[index] { registers[index] = rank }
    }

    /// The register the installation `id` sets and the rank it sets it to (1–56): a
    /// sketch of one device is all zero but that register. Stores that merge sketches
    /// themselves keep these pairs (ClickHouse keeps the set of `index·64 + rank`).
    public static func register(of id: String) -> (index: Int, rank: UInt8) {
        let hash = Self.hash(id)
        let index = Int(hash >> UInt64(64 - Self.indexBits))
        let rest = hash << UInt64(Self.indexBits)
        return (index, UInt8(min(rest.leadingZeroBitCount, 64 - Self.indexBits) + 1))
    }

    /// The sketch whose non-zero registers are `pairs` (index 0..<512, rank 1–56); the
    /// largest rank wins where an index repeats. An empty list is the empty sketch.
    /// - Throws: ``BinaryReportError`` for an index or rank out of range.
    public init(registerRanks pairs: [(index: Int, rank: UInt8)]) throws(BinaryReportError) {
        guard !pairs.isEmpty else { self.init(); return }
        var registers = [UInt8](repeating: 0, count: Self.registerCount)
        for (index, rank) in pairs {
            guard index >= 0, index < Self.registerCount, rank >= 1 else { throw BinaryReportError("device sketch register \(index) rank \(rank) out of range") }
            registers[index] = max(registers[index], rank)
        }
        try self.init(registers: registers)
    }

    /// Adds every device of `other`.
    public mutating func merge(_ other: DeviceSketch) {
        guard !other.registers.isEmpty else { return }
        guard !registers.isEmpty else { registers = other.registers; return }
        for index in registers.indices where other.registers[index] > registers[index] {
            registers[index] = other.registers[index]
        }
    }

    /// The estimated number of distinct devices (0 for an empty sketch), by Ertl's
    /// improved estimator ("New cardinality estimation algorithms for HyperLogLog
    /// sketches", 2017): unbiased across the whole range without correction tables.
    public var estimate: Int {
        guard !registers.isEmpty else { return 0 }
        let m = Double(Self.registerCount)
        let q = 64 - Self.indexBits
        var counts = [Double](repeating: 0, count: q + 2)
        for register in registers { counts[min(Int(register), q + 1)] += 1 }
        var z = m * Self.tau(1 - counts[q + 1] / m)
        for k in stride(from: q, through: 1, by: -1) { z = 0.5 * (z + counts[k]) }
        z += m * Self.sigma(counts[0] / m)
        guard z.isFinite, z > 0 else { return 0 }
        return Int((m * m / (2 * log(2.0)) / z).rounded())
    }

    static func sigma(_ value: Double) -> Double {
        guard value < 1 else { return .infinity }
        var x = value, y = 1.0, z = value
        while true {
            x *= x
            let previous = z
            z += x * y
            y += y
            if z == previous { return z }
        }
    }

    static func tau(_ value: Double) -> Double {
        guard value > 0, value < 1 else { return 0 }
        var x = value, y = 1.0, z = 1 - value
        while true {
            x = x.squareRoot()
            let previous = z
            y *= 0.5
            z -= (1 - x) * (1 - x) * y
            if z == previous { return z / 3 }
        }
    }

    /// 64 well-mixed bits of `id`: FNV-1a, then the SplitMix64 finalizer.
    static func hash(_ id: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01B3
        }
        value = (value ^ (value >> 30)) &* 0xbf58_476d_1ce4_e5b9
        value = (value ^ (value >> 27)) &* 0x94d0_49bb_1331_11eb
        return value ^ (value >> 31)
    }
}
