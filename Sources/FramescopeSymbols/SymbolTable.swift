/// An image's function symbols sorted by offset, answering "which function holds this
/// offset?".
///
/// Symbols at the same offset (aliases) keep an order that does not depend on the file's:
/// those without a clone suffix first, then the longer, then by name, and a lookup returns
/// the first of them that contains the offset. Symbols do not overlap in practice; when an
/// ELF symbol with an explicit size ends before the offset, the lookup does not search
/// further back, and answers nil.
public struct SymbolTable: Hashable, Sendable {
    /// The symbols, sorted by ``Symbol/offset``.
    public let symbols: [Symbol]

    /// A table of `symbols`, in any order.
    /// - Complexity: O(n log n).
    public init(_ symbols: [Symbol]) {
        // The readers mostly hand symbols over in order already: then nothing moves.
        let inOrder = zip(symbols, symbols.dropFirst()).allSatisfy { !Self.precedes($1, $0) }
        self.symbols = inOrder ? symbols : symbols.sorted(by: Self.precedes)
    }

    /// The table's order: by offset; at one offset, a name without a clone suffix first,
    /// then the longer symbol, then by name.
    static func precedes(_ a: Symbol, _ b: Symbol) -> Bool {
        if a.offset != b.offset { return a.offset < b.offset }
        let aPlain = Symbol.suffixStart(a.name) == nil, bPlain = Symbol.suffixStart(b.name) == nil
        if aPlain != bPlain { return aPlain }
        if a.size != b.size { return a.size > b.size }
        return a.name < b.name
    }

    /// How many symbols the table holds.
    public var count: Int { symbols.count }

    /// Whether the table holds no symbol (a stripped binary, a data-only dSYM).
    public var isEmpty: Bool { symbols.isEmpty }

    /// The symbol containing `offset` and how far into it `offset` lies, in bytes; nil when
    /// no symbol contains it.
    ///
    /// A return address (every frame of a stack but the innermost) points just after its
    /// call instruction, which may be the first byte of the next function when the call
    /// was the last instruction (a call to a function that does not return). With
    /// `isReturnAddress`, the symbol is looked up at `offset - 1`; the delta is still
    /// measured from `offset`, as crash reports print it.
    /// - Complexity: O(log n).
    public func lookup(_ offset: UInt64, isReturnAddress: Bool = false) -> (symbol: Symbol, delta: UInt64)? {
        let probe: UInt64
        if isReturnAddress {
            guard offset > 0 else { return nil }
            probe = offset - 1
        } else {
            probe = offset
        }
        // The first symbol starting after `probe`.
        var low = 0, high = symbols.count
        while low < high {
            let middle = low + (high - low) / 2
            if symbols[middle].offset <= probe { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let start = symbols[low - 1].offset
        var first = low - 1
        while first > 0, symbols[first - 1].offset == start { first -= 1 }
        for index in first..<low where symbols[index].contains(probe) {
            return (symbols[index], offset - symbols[index].offset)
        }
        return nil
    }
}
