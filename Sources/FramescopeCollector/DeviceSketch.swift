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

    /// Adds the device with installation id `id`.
    public mutating func add(_ id: String) {
        let hash = Self.hash(id)
        let index = Int(hash >> UInt64(64 - Self.indexBits))
        let rest = hash << UInt64(Self.indexBits)
        let rank = UInt8(min(rest.leadingZeroBitCount, 64 - Self.indexBits) + 1)
        if registers.isEmpty { registers = [UInt8](repeating: 0, count: Self.registerCount) }
        if rank > registers[index] { registers[index] = rank }
    }

    /// Adds every device of `other`.
    public mutating func merge(_ other: DeviceSketch) {
        guard !other.registers.isEmpty else { return }
        guard !registers.isEmpty else { registers = other.registers; return }
        for index in registers.indices where other.registers[index] > registers[index] {
            registers[index] = other.registers[index]
        }
    }

    /// The estimated number of distinct devices (0 for an empty sketch).
    public var estimate: Int {
        guard !registers.isEmpty else { return 0 }
        let m = Double(Self.registerCount)
        var sum = 0.0
        var zeros = 0
        for register in registers {
            sum += 1 / Double(UInt64(1) << UInt64(register))
            if register == 0 { zeros += 1 }
        }
        let alpha = 0.7213 / (1 + 1.079 / m)
        let raw = alpha * m * m / sum
        if raw <= 2.5 * m, zeros > 0 {
            return Int((m * log(m / Double(zeros))).rounded())
        }
        return Int(raw.rounded())
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
