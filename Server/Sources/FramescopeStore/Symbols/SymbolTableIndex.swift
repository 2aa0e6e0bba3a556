/// Where each chunk of a symbol table stored in chunks starts: what a lookup past the
/// symbol cache needs to read only the chunk an offset falls in (issue 43, item 7).
///
/// A table of *n* symbols is stored as ⌈*n* / ``chunkSymbols``⌉ chunks, chunk *i* holding
/// symbols *i*·``chunkSymbols`` ..< (*i* + 1)·``chunkSymbols`` as a table of its own (`FSY1`,
/// ``SymbolTableBlob``), and this index beside them. The symbol holding an offset is in the
/// last chunk that starts at or below it (``chunk(holding:)``), so reading that chunk answers
/// the lookup as the whole table would, whatever the table's size.
///
/// The binary form, `FSI1`: the magic, then as 4-byte little-endian integers the count of
/// symbols, ``chunkSymbols`` and ``tableBytes``, then each chunk's first offset as 8 bytes
/// little-endian. Frozen: a change is a new magic, and `FSI1` keeps reading.
public struct SymbolTableIndex: Sendable, Hashable {
    /// Symbols a chunk holds when an upload is stored: 256 symbols, about 18 KiB of a table
    /// of 70-byte names, and 8 bytes of index (a table's index is 1/2,300 of it).
    public static let defaultChunkSymbols = 256

    /// Symbols in the whole table.
    public let count: Int
    /// Symbols in each chunk but the last, which holds the rest (1 or more).
    public let chunkSymbols: Int
    /// Bytes of the whole table's binary form (``SymbolTableBlob/bytes``), as read whole.
    public let tableBytes: Int
    /// Each chunk's first symbol's offset, bytes from the image's base, ascending.
    public let chunkStarts: [UInt64]

    /// The index of `symbols` (sorted, not overlapping: ``SymbolUpload/problem()`` holds) in
    /// chunks of `chunkSymbols` (1 or more), and the range of `symbols` each chunk holds.
    public static func chunks(of symbols: [SymbolUpload.Symbol], chunkSymbols: Int = defaultChunkSymbols)
        -> (index: SymbolTableIndex, chunks: [Range<Int>]) {
        precondition(chunkSymbols > 0, "a chunk holds at least one symbol")
        let ranges = stride(from: 0, to: symbols.count, by: chunkSymbols).map { $0..<min($0 + chunkSymbols, symbols.count) }
        let index = SymbolTableIndex(count: symbols.count, chunkSymbols: chunkSymbols, tableBytes: SymbolTableBlob.encodedSize(of: symbols),
                                     chunkStarts: ranges.map { symbols[$0.lowerBound].offset })
        return (index, ranges)
    }

    private init(count: Int, chunkSymbols: Int, tableBytes: Int, chunkStarts: [UInt64]) {
        self.count = count
        self.chunkSymbols = chunkSymbols
        self.tableBytes = tableBytes
        self.chunkStarts = chunkStarts
    }

    /// How many chunks.
    public var chunkCount: Int { chunkStarts.count }

    /// The chunk that holds the symbol holding `offset` if any symbol does: the last one
    /// starting at or below it; `nil` below the first symbol.
    /// - Complexity: O(log chunks).
    public func chunk(holding offset: UInt64) -> Int? {
        var low = 0, high = chunkStarts.count
        while low < high {
            let middle = (low + high) / 2
            if chunkStarts[middle] <= offset { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? low - 1 : nil
    }

    /// How many symbols chunk `chunk` (0 ..< ``chunkCount``) holds.
    public func symbols(inChunk chunk: Int) -> Int {
        min(chunkSymbols, count - chunk * chunkSymbols)
    }

    /// Whether `table`, read as chunk `chunk`, is that chunk: as many symbols, the first at
    /// the chunk's start, the last ending at or below the next chunk's start. A chunk of
    /// another upload of the image (stored between reading the index and the chunk) almost
    /// never passes.
    public func isChunk(_ chunk: Int, _ table: SymbolTableBlob) -> Bool {
        guard chunkStarts.indices.contains(chunk), table.count == symbols(inChunk: chunk), table.offsets.first == chunkStarts[chunk],
              let last = table.offsets.last, let size = table.sizes.last else { return false }
        let (end, overflow) = last.addingReportingOverflow(size)
        return !overflow && (chunk + 1 == chunkStarts.count || end <= chunkStarts[chunk + 1])
    }

    /// Bytes the whole table would hold in memory (``SymbolTableBlob/memoryBytes``).
    public var tableMemoryBytes: Int { SymbolTableBlob.memoryBytes(binaryBytes: tableBytes, count: count) }

    /// Bytes the index holds in memory: 8 a chunk and 128 for the rest.
    public var memoryBytes: Int { 8 * chunkStarts.count + 128 }

    private static let magic: [UInt8] = Array("FSI1".utf8)

    /// The binary form.
    public var bytes: [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(16 + 8 * chunkStarts.count)
        for value in [count, chunkSymbols, tableBytes] {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: UInt32(clamping: value) >> UInt32(shift))) }
        }
        for start in chunkStarts {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: start >> UInt64(shift))) }
        }
        return bytes
    }

    /// Whether `bytes` begin as an index's binary form does (and not as a whole table's, `FSY1`).
    public static func isIndex(_ bytes: some Collection<UInt8>) -> Bool { bytes.starts(with: magic) }

    /// Reads the binary form; `nil` for bytes this type did not write: a count, chunk size
    /// or table size that cannot be, chunks not ascending, or a length that is not exactly
    /// the chunks'.
    /// - Complexity: O(chunks).
    public init?(bytes: [UInt8]) {
        guard bytes.count >= 16, Self.isIndex(bytes) else { return nil }
        func word(_ at: Int, _ width: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<width { value |= UInt64(bytes[at + index]) << (8 * UInt64(index)) }
            return value
        }
        let count = Int(word(4, 4)), chunkSymbols = Int(word(8, 4)), tableBytes = Int(word(12, 4))
        // Every symbol takes at least 3 bytes of the table, which has an 8-byte header.
        guard chunkSymbols > 0, tableBytes >= 8, count <= (tableBytes - 8) / 3 else { return nil }
        let chunks = (count + chunkSymbols - 1) / chunkSymbols
        guard bytes.count == 16 + 8 * chunks else { return nil }
        let starts = (0..<chunks).map { word(16 + 8 * $0, 8) }
        guard zip(starts, starts.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        self.init(count: count, chunkSymbols: chunkSymbols, tableBytes: tableBytes, chunkStarts: starts)
    }
}
