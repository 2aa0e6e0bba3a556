import Foundation

/// One image's symbols as the stores keep them (one value per image), and the lookup of
/// an offset in them.
///
/// The binary form: `FSY1`, the count (4 bytes, little-endian), then per symbol its offset
/// as the difference from the previous symbol's end, its size and its name's length as
/// LEB128, and the name's UTF-8. Sorted, so a lookup is a binary search over the decoded
/// offsets.
///
/// In memory a table keeps its binary form as it was read and, per symbol, its offset, size
/// and where its name lies in those bytes (``memoryBytes``: about 24 bytes a symbol beside
/// the binary form); a name becomes a `String` only when a lookup finds it. Reading a table
/// of a million symbols therefore makes no string and allocates four arrays, where a
/// `String` per name took most of the time and about 96 bytes a name (issue 43, item 7).
public struct SymbolTableBlob: Sendable, Hashable {
    /// Start of each symbol, bytes from the image's base, ascending.
    public private(set) var offsets: [UInt64] = []
    /// Length of each symbol, in bytes.
    public private(set) var sizes: [UInt64] = []
    /// Where each symbol's name starts in ``bytes``.
    private var nameStarts: [UInt32] = []
    /// Each symbol's name length, in bytes of UTF-8.
    private var nameLengths: [UInt32] = []
    /// The binary form.
    public let bytes: [UInt8]

    /// The table of `symbols` (sorted, not overlapping: ``SymbolUpload/problem()`` holds).
    public init(_ symbols: [SymbolUpload.Symbol]) {
        // The binary form of valid symbols always reads back.
        self.init(reading: Self.bytes(of: symbols))!
    }

    /// How many symbols.
    public var count: Int { offsets.count }

    /// Tables are equal when their binary forms are (everything else is read from it).
    public static func == (left: SymbolTableBlob, right: SymbolTableBlob) -> Bool { left.bytes == right.bytes }

    /// Hashes the binary form.
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// The name of symbol `index` (0 ..< ``count``).
    public func name(of index: Int) -> String {
        let start = Int(nameStarts[index])
        return String(decoding: bytes[start..<(start + Int(nameLengths[index]))], as: UTF8.self)
    }

    /// The name of each symbol, in order (made on each call: for tests and tools, not lookups).
    public var names: [String] { (0..<count).map(name(of:)) }

    /// Bytes the table holds in memory: its binary form and 24 bytes a symbol (offset, size,
    /// name start and length), plus a fixed 256 for the arrays' headers. What
    /// ``SymbolCache`` counts against its capacity.
    public var memoryBytes: Int { bytes.count + 24 * count + 256 }

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
        return offset - offsets[index] < sizes[index] ? name(of: index) : nil
    }

    private static let magic: [UInt8] = Array("FSY1".utf8)

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
        self.init(reading: bytes)
    }

    /// Reads the binary form, keeping `bytes` as it is; `nil` for bytes this type did not
    /// write, or past 4 GiB (an upload is at most 64 MiB).
    /// - Complexity: O(*n*), one pass, no string made.
    private init?(reading bytes: [UInt8]) {
        guard bytes.count >= 8, bytes.count <= Int(UInt32.max), Array(bytes[0..<4]) == Self.magic else { return nil }
        var count = 0
        for index in 0..<4 { count |= Int(bytes[4 + index]) << (8 * index) }
        // Each symbol takes at least 3 bytes: a count past that is not ours.
        guard count <= (bytes.count - 8) / 3 else { return nil }
        var position = 8
        var previousEnd: UInt64 = 0
        offsets.reserveCapacity(count)
        sizes.reserveCapacity(count)
        nameStarts.reserveCapacity(count)
        nameLengths.reserveCapacity(count)
        for _ in 0..<count {
            guard let gap = Self.readLEB(bytes, &position), let size = Self.readLEB(bytes, &position),
                  let length = Self.readLEB(bytes, &position), length <= UInt64(bytes.count - position) else { return nil }
            let (offset, overflow) = previousEnd.addingReportingOverflow(gap)
            guard !overflow else { return nil }
            offsets.append(offset)
            sizes.append(size)
            nameStarts.append(UInt32(position))
            nameLengths.append(UInt32(length))
            position += Int(length)
            previousEnd = offset &+ size
        }
        guard position == bytes.count else { return nil }
        self.bytes = bytes
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
