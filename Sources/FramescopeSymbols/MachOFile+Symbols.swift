extension MachOFile {
    /// The size of one `nlist_64` entry, in bytes.
    static let nlistSize: UInt64 = 16

    /// The function symbols of `LC_SYMTAB`'s `nlist_64` table.
    ///
    /// An entry is kept when it is a plain symbol defined in a section, `(n_type & 0xe0) == 0`
    /// (no debugging stab) and `(n_type & 0x0e) == N_SECT` (0xe), and its `n_value` lies
    /// inside the section `n_sect` names (counted from 1 over the sections of all segments,
    /// in load-command order), and that section holds code (``Section/isCode``). So a
    /// stripped app's `__mh_execute_header`, which `n_sect` 1 attributes to `__text` though
    /// it lies before it, is dropped, and a lookup answers "no symbol" rather than naming it
    /// everywhere. A symbol's size runs to the next kept symbol's start in the same section,
    /// or to the section's end; its offset is `n_value - base` (a symbol before `base`
    /// cannot be expressed and is dropped).
    static func symbols(_ reader: ByteReader, symtab: SymtabCommand?, sections: [Section], base: UInt64) throws(ObjectFileError) -> SymbolTable {
        guard let symtab else { return SymbolTable([]) }
        guard symtab.nsyms <= UInt64(reader.count) / nlistSize else {
            throw reader.error(.tooMany, "nsyms", at: symtab.commandOffset + 12,
                               "nsyms \(symtab.nsyms) entries of 16 bytes cannot fit in the \(reader.count)-byte image")
        }
        let table = try reader.window(at: symtab.symoff, length: symtab.nsyms * nlistSize, field: "symoff")
        let strings = try reader.window(at: symtab.stroff, length: symtab.strsize, field: "stroff")
        // The kept entries, as parallel arrays sorted below through `order` (moving Ints,
        // not names).
        var sectionOf: [Int] = [], valueOf: [UInt64] = [], names: [String] = [], nameOffsets: [UInt64] = []
        for index in 0..<symtab.nsyms {
            let at = index * nlistSize
            let type = try table.uint8(at: at + 4, field: "n_type of symbol \(index)")
            guard type & 0xe0 == 0, type & 0x0e == 0x0e else { continue }
            let sectionNumber = Int(try table.uint8(at: at + 5, field: "n_sect of symbol \(index)"))
            guard sectionNumber >= 1, sectionNumber <= sections.count else { continue }
            let section = sections[sectionNumber - 1]
            let value = try table.uint64(at: at + 8, field: "n_value of symbol \(index)")
            guard section.isCode, section.contains(value), value >= base else { continue }
            let strx = UInt64(try table.uint32(at: at, field: "n_strx of symbol \(index)"))
            names.append(try strings.cString(at: strx, field: "n_strx of symbol \(index)"))
            nameOffsets.append(strings.fileOffset(strx))
            sectionOf.append(sectionNumber - 1)
            valueOf.append(value)
        }
        let order = valueOf.indices.sorted { (sectionOf[$0], valueOf[$0]) < (sectionOf[$1], valueOf[$1]) }
        let kept = order.map { (section: sectionOf[$0], value: valueOf[$0], name: names[$0], nameOffset: nameOffsets[$0]) }
        var symbols: [Symbol] = []
        symbols.reserveCapacity(kept.count)
        var first = 0
        while first < kept.count {
            // A group of entries at one address (aliases) ends at the next address of its
            // section, or at the section's end.
            let (section, value) = (kept[first].section, kept[first].value)
            var after = first + 1
            while after < kept.count, kept[after].section == section, kept[after].value == value { after += 1 }
            let end: UInt64
            if after < kept.count, kept[after].section == section {
                end = kept[after].value
            } else {
                let (sectionEnd, overflow) = sections[section].address.addingReportingOverflow(sections[section].size)
                end = overflow ? .max : sectionEnd
            }
            for entry in kept[first..<after] {
                symbols.append(Symbol(name: entry.name, offset: value - base, size: end - value,
                                      nameOffset: entry.nameOffset, format: .machO))
            }
            first = after
        }
        return SymbolTable(symbols)
    }
}
