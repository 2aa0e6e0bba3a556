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
    /// everywhere. Sizes follow the rule both readers share (`SymbolBounds`): a symbol runs
    /// to the next kept symbol's start in the same section, or to the section's end; its
    /// offset is `n_value - base` (a symbol before `base` cannot be expressed and is dropped).
    static func symbols(_ reader: ByteReader, symtab: SymtabCommand?, sections: [Section], base: UInt64) throws(ObjectFileError) -> SymbolTable {
        guard let symtab else { return SymbolTable([]) }
        guard symtab.nsyms <= UInt64(reader.count) / nlistSize else {
            throw reader.error(.tooMany, "nsyms", at: symtab.commandOffset + 12,
                               "nsyms \(symtab.nsyms) entries of 16 bytes cannot fit in the \(reader.count)-byte image")
        }
        let table = try reader.window(at: symtab.symoff, length: symtab.nsyms * nlistSize, field: "symoff")
        let strings = try reader.window(at: symtab.stroff, length: symtab.strsize, field: "stroff")
        var entries: [SymbolBounds.Entry] = []
        for index in 0..<symtab.nsyms {
            let at = index * nlistSize
            let type = try table.uint8(at: at + 4, field: "n_type of symbol \(index)")
            guard type & 0xe0 == 0, type & 0x0e == 0x0e else { continue }
            let sectionNumber = Int(try table.uint8(at: at + 5, field: "n_sect of symbol \(index)"))
            guard sectionNumber >= 1, sectionNumber <= sections.count else { continue }
            let section = sections[sectionNumber - 1]
            let value = try table.uint64(at: at + 8, field: "n_value of symbol \(index)")
            // Dropped before its name is read: outside its section or before the base, the
            // shared rule would drop it too.
            guard section.isCode, section.contains(value), value >= base else { continue }
            let strx = UInt64(try table.uint32(at: at, field: "n_strx of symbol \(index)"))
            entries.append(SymbolBounds.Entry(
                name: try strings.cString(at: strx, field: "n_strx of symbol \(index)"), nameOffset: strings.fileOffset(strx),
                section: sectionNumber - 1, address: value, declaredSize: 0))
        }
        let bounds = sections.map { SymbolBounds.Section(start: $0.address, size: $0.size) }
        return SymbolTable(SymbolBounds.symbols(entries, sections: bounds, base: base, format: .machO))
    }
}
