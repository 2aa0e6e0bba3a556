/// The one rule that gives every function symbol its bytes, in both readers (issue 42).
///
/// A symbol runs from its address to the first of:
/// 1. the end its format declares: ELF's `st_size` when it is not 0 (Mach-O declares none);
/// 2. the start of the next symbol of its section at a higher address;
/// 3. its section's end (`addr + size`, `sh_addr + sh_size`).
///
/// So a symbol the format gives no size (ELF's `_init`, size 0, in `.init`) never reaches
/// past its section into the next one (the `.plt` that follows `.init`), a declared size
/// that overlaps the next symbol is cut where that symbol starts, and aliases (symbols at
/// one address) end together. A symbol whose address lies outside its section, or below
/// the image's base, covers no byte of it and is dropped.
///
/// ``MachOFile`` and ``ELFFile`` both hand their entries to ``symbols(_:sections:base:format:)``.
enum SymbolBounds {
    /// A section's address range, `start ..< start + size` (its end saturating at
    /// `UInt64.max`): Mach-O's `addr` and `size`, ELF's `sh_addr` and `sh_size`, in bytes.
    struct Section: Hashable, Sendable {
        /// The section's first address.
        var start: UInt64
        /// Its length in bytes.
        var size: UInt64

        /// One past the section's last byte (saturating at `UInt64.max`).
        var end: UInt64 {
            let (sum, overflow) = start.addingReportingOverflow(size)
            return overflow ? .max : sum
        }

        /// Whether `address` lies inside the section.
        func contains(_ address: UInt64) -> Bool {
            address >= start && address < end
        }
    }

    /// A defined function symbol as a reader found it, before its size is settled.
    struct Entry {
        /// The name as the file spells it.
        var name: String
        /// The file offset of the name's first byte.
        var nameOffset: UInt64
        /// The index of its section in the `sections` given to
        /// ``SymbolBounds/symbols(_:sections:base:format:)``.
        var section: Int
        /// Its address in the file's own address space (`n_value`, `st_value`).
        var address: UInt64
        /// The size the format declares, in bytes; 0 when it declares none.
        var declaredSize: UInt64
    }

    /// `entries` as symbols sized by the rule of the type's summary, in the order of their
    /// sections, then addresses; offsets are `address - base`.
    /// - Complexity: O(n log n) for n entries (the entries are sorted by position, their names
    ///   never moved).
    static func symbols(_ entries: [Entry], sections: [Section], base: UInt64, format: ObjectFormat) -> [Symbol] {
        let order = entries.indices.filter { index in
            let entry = entries[index]
            return sections.indices.contains(entry.section) && sections[entry.section].contains(entry.address) && entry.address >= base
        }.sorted { (entries[$0].section, entries[$0].address) < (entries[$1].section, entries[$1].address) }
        var symbols: [Symbol] = []
        symbols.reserveCapacity(order.count)
        var next = 0 // in `order`: the first entry past the current one's address or section
        for (position, index) in order.enumerated() {
            let entry = entries[index]
            if next <= position { next = position + 1 }
            while next < order.count, entries[order[next]].section == entry.section, entries[order[next]].address == entry.address { next += 1 }
            var end = sections[entry.section].end
            if next < order.count, entries[order[next]].section == entry.section {
                end = min(end, entries[order[next]].address)
            }
            if entry.declaredSize != 0 {
                let (declared, overflow) = entry.address.addingReportingOverflow(entry.declaredSize)
                if !overflow { end = min(end, declared) }
            }
            symbols.append(Symbol(name: entry.name, offset: entry.address - base, size: end - entry.address,
                                  nameOffset: entry.nameOffset, format: format))
        }
        return symbols
    }
}
