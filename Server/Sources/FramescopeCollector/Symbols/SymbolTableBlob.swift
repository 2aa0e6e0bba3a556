/// One image's symbols as the stores keep them (one value per image), and the lookup of
/// an offset in them.
///
/// The binary form: `FSY1`, the count (4 bytes, little-endian), then per symbol its offset
/// as the difference from the previous symbol's end, its size and its name's length as
/// LEB128, and the name's UTF-8. Sorted, so a lookup is a binary search over the decoded
/// offsets.
public struct SymbolTableBlob: Sendable, Hashable {
    /// Start of each symbol, bytes from the image's base, ascending.
    public private(set) var offsets: [UInt64] = []
    /// Length of each symbol, in bytes.
    public private(set) var sizes: [UInt64] = []
    /// Name of each symbol.
    public private(set) var names: [String] = []

    /// The table of `symbols` (sorted, not overlapping: ``SymbolUpload/problem()`` holds).
    public init(_ symbols: [SymbolUpload.Symbol]) {
        offsets = symbols.map(\.offset)
        sizes = symbols.map(\.size)
        names = symbols.map(\.name)
    }

    /// How many symbols.
    public var count: Int { offsets.count }

    /// The name of the symbol holding `offset`, or `nil` when none does.
    /// - Complexity: O(log *n*).
    public func name(at offset: UInt64) -> String? {
        var low = 0, high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] <= offset { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let index = low - 1
        return offset - offsets[index] < sizes[index] ? names[index] : nil
    }

    private static let magic: [UInt8] = Array("FSY1".utf8)

    /// The binary form.
    public var bytes: [UInt8] {
        var out = Self.magic
        let count = UInt32(clamping: offsets.count)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
        var previousEnd: UInt64 = 0
        for index in offsets.indices {
            Self.appendLEB(offsets[index] &- previousEnd, to: &out)
            Self.appendLEB(sizes[index], to: &out)
            let name = Array(names[index].utf8)
            Self.appendLEB(UInt64(name.count), to: &out)
            out += name
            previousEnd = offsets[index] &+ sizes[index]
        }
        return out
    }

    /// Reads the binary form; `nil` for bytes this type did not write.
    public init?(bytes: [UInt8]) {
        guard bytes.count >= 8, Array(bytes[0..<4]) == Self.magic else { return nil }
        var count = 0
        for index in 0..<4 { count |= Int(bytes[4 + index]) << (8 * index) }
        // Each symbol takes at least 3 bytes: a count past that is not ours.
        guard count <= (bytes.count - 8) / 3 else { return nil }
        var position = 8
        var previousEnd: UInt64 = 0
        offsets.reserveCapacity(count)
        for _ in 0..<count {
            guard let gap = Self.readLEB(bytes, &position), let size = Self.readLEB(bytes, &position),
                  let length = Self.readLEB(bytes, &position), length <= UInt64(bytes.count - position) else { return nil }
            let (offset, overflow) = previousEnd.addingReportingOverflow(gap)
            guard !overflow else { return nil }
            offsets.append(offset)
            sizes.append(size)
            names.append(String(decoding: bytes[position..<(position + Int(length))], as: UTF8.self))
            position += Int(length)
            previousEnd = offset &+ size
        }
        guard position == bytes.count else { return nil }
    }

    private static func appendLEB(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            out.append(byte)
        } while value != 0
    }

    private static func readLEB(_ bytes: [UInt8], _ position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
