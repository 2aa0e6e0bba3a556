import Foundation

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
        Self.encoded(count: count) { (offsets[$0], sizes[$0], names[$0]) }
    }

    /// The binary form of `symbols` (sorted, not overlapping), written in one pass into an
    /// array of exactly its size: no table's arrays built first, no array grown by doubling.
    public static func bytes(of symbols: [SymbolUpload.Symbol]) -> [UInt8] {
        encoded(count: symbols.count, fields(of: symbols))
    }

    /// The binary form of `symbols` as `Data`, written in place (the SQLite store's blob):
    /// one copy of the table beside the upload, where building the table, then its bytes,
    /// then `Data` of them held three (docs/benchmarks.md, "Symbol uploads").
    public static func data(of symbols: [SymbolUpload.Symbol]) -> Data {
        let symbol = fields(of: symbols)
        var data = Data(count: encodedSize(count: symbols.count, symbol))
        data.withUnsafeMutableBytes { write(count: symbols.count, into: $0, symbol) }
        return data
    }

    /// The (offset, size, name) of each of `symbols`, by position.
    private static func fields(of symbols: [SymbolUpload.Symbol]) -> (Int) -> (UInt64, UInt64, String) {
        { (symbols[$0].offset, symbols[$0].size, symbols[$0].name) }
    }

    /// The binary form of `count` symbols, each given by `symbol(index)` as (offset, size, name).
    private static func encoded(count: Int, _ symbol: (Int) -> (UInt64, UInt64, String)) -> [UInt8] {
        let size = encodedSize(count: count, symbol)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            write(count: count, into: UnsafeMutableRawBufferPointer(buffer), symbol)
            initialized = size
        }
    }

    /// Bytes of the binary form of `count` symbols.
    private static func encodedSize(count: Int, _ symbol: (Int) -> (UInt64, UInt64, String)) -> Int {
        var size = magic.count + 4
        var previousEnd: UInt64 = 0
        for index in 0..<count {
            let (offset, length, name) = symbol(index)
            let nameBytes = name.utf8.count
            size += lebSize(offset &- previousEnd) + lebSize(length) + lebSize(UInt64(nameBytes)) + nameBytes
            previousEnd = offset &+ length
        }
        return size
    }

    /// Writes the binary form of `count` symbols into `buffer`, which holds exactly
    /// ``encodedSize(count:_:)`` bytes.
    private static func write(count: Int, into buffer: UnsafeMutableRawBufferPointer, _ symbol: (Int) -> (UInt64, UInt64, String)) {
        var position = 0
        func put(_ byte: UInt8) {
            buffer[position] = byte
            position += 1
        }
        func putLEB(_ value: UInt64) {
            var value = value
            repeat {
                var byte = UInt8(value & 0x7F)
                value >>= 7
                if value != 0 { byte |= 0x80 }
                put(byte)
            } while value != 0
        }
        for byte in magic { put(byte) }
        let stored = UInt32(clamping: count)
        for shift in stride(from: 0, to: 32, by: 8) { put(UInt8(truncatingIfNeeded: stored >> UInt32(shift))) }
        var previousEnd: UInt64 = 0
        for index in 0..<count {
            let (offset, length, text) = symbol(index)
            var name = text
            putLEB(offset &- previousEnd)
            putLEB(length)
            name.withUTF8 { utf8 in
                putLEB(UInt64(utf8.count))
                UnsafeMutableRawBufferPointer(rebasing: buffer[position..<(position + utf8.count)]).copyMemory(from: UnsafeRawBufferPointer(utf8))
                position += utf8.count
            }
            previousEnd = offset &+ length
        }
        precondition(position == buffer.count, "the symbol table's size was measured wrong")
    }

    /// Bytes of `value` as LEB128.
    private static func lebSize(_ value: UInt64) -> Int {
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
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
