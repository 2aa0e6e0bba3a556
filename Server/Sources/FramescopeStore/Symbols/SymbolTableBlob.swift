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
    public init<Symbols: Collection<SymbolUpload.Symbol>>(_ symbols: Symbols) {
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
    public var memoryBytes: Int { Self.memoryBytes(binaryBytes: bytes.count, count: count) }

    /// ``memoryBytes`` of a table of `count` symbols whose binary form is `binaryBytes` long.
    public static func memoryBytes(binaryBytes: Int, count: Int) -> Int { binaryBytes + 24 * count + 256 }

    /// The name of the symbol holding `offset`, or `nil` when none does. On a part of a
    /// table (``init(joining:)``), the answer for an offset its chunks cover is the whole
    /// table's.
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
    /// A slice of an upload's symbols is a table of its own (a chunk, ``SymbolTableIndex``).
    public static func bytes<Symbols: Collection<SymbolUpload.Symbol>>(of symbols: Symbols) -> [UInt8] {
        encoded(count: symbols.count, visiting(symbols))
    }

    /// The binary form of `symbols` as `Data`, written in place (the SQLite store's blob):
    /// one copy of the table beside the upload, where building the table, then its bytes,
    /// then `Data` of them held three (docs/benchmarks.md, "Symbol uploads").
    public static func data<Symbols: Collection<SymbolUpload.Symbol>>(of symbols: Symbols) -> Data {
        let each = visiting(symbols)
        var data = Data(count: encodedSize(count: symbols.count, each))
        data.withUnsafeMutableBytes { write(count: symbols.count, into: $0, each) }
        return data
    }

    /// One table of the symbols of `parts`, in order: what a lookup past the cache reads
    /// (the chunks its offsets fall in, ``SymbolTableIndex/chunk(holding:)``), and a table
    /// stored in chunks read whole; `nil` when a part's symbols do not all lie below the
    /// next part's (parts read from a store are data, not a promise).
    /// - Complexity: O(bytes of the parts), no string made.
    public init?(joining parts: [SymbolTableBlob]) {
        if parts.count == 1 {
            self = parts[0]
            return
        }
        var previousEnd: UInt64 = 0
        for part in parts where part.count > 0 {
            let (end, overflow) = part.offsets[part.count - 1].addingReportingOverflow(part.sizes[part.count - 1])
            guard part.offsets[0] >= previousEnd, !overflow else { return nil }
            previousEnd = end
        }
        let count = parts.reduce(0) { $0 + $1.count }
        let each: Visitor = { visit in
            for part in parts {
                part.bytes.withUnsafeBytes { raw in
                    for index in 0..<part.count {
                        let start = Int(part.nameStarts[index])
                        visit(part.offsets[index], part.sizes[index], UnsafeRawBufferPointer(rebasing: raw[start..<(start + Int(part.nameLengths[index]))]))
                    }
                }
            }
        }
        // Parts in order, each valid, make a valid table.
        self.init(reading: Self.encoded(count: count, each))
    }

    /// Calls its argument with each symbol's offset, size and name's UTF-8, in order.
    private typealias Visitor = ((UInt64, UInt64, UnsafeRawBufferPointer) -> Void) -> Void

    /// The visitor of `symbols`.
    private static func visiting<Symbols: Collection<SymbolUpload.Symbol>>(_ symbols: Symbols) -> Visitor {
        { visit in
            for symbol in symbols {
                var name = symbol.name
                name.withUTF8 { visit(symbol.offset, symbol.size, UnsafeRawBufferPointer($0)) }
            }
        }
    }

    /// The binary form of `count` symbols, which `each` visits.
    private static func encoded(count: Int, _ each: Visitor) -> [UInt8] {
        let size = encodedSize(count: count, each)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            write(count: count, into: UnsafeMutableRawBufferPointer(buffer), each)
            initialized = size
        }
    }

    /// Bytes of the binary form of `count` symbols, which `each` visits.
    private static func encodedSize(count: Int, _ each: Visitor) -> Int {
        var size = magic.count + 4
        var previousEnd: UInt64 = 0
        each { offset, length, name in
            size += lebSize(offset &- previousEnd) + lebSize(length) + lebSize(UInt64(name.count)) + name.count
            previousEnd = offset &+ length
        }
        return size
    }

    /// Bytes of the binary form of `symbols`, without writing it.
    public static func encodedSize<Symbols: Collection<SymbolUpload.Symbol>>(of symbols: Symbols) -> Int {
        encodedSize(count: symbols.count, visiting(symbols))
    }

    /// Writes the binary form of `count` symbols, which `each` visits, into `buffer`, which
    /// holds exactly ``encodedSize(count:_:)`` bytes.
    private static func write(count: Int, into buffer: UnsafeMutableRawBufferPointer, _ each: Visitor) {
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
        each { offset, length, name in
            putLEB(offset &- previousEnd)
            putLEB(length)
            putLEB(UInt64(name.count))
            UnsafeMutableRawBufferPointer(rebasing: buffer[position..<(position + name.count)]).copyMemory(from: name)
            position += name.count
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
