extension ELFFile {
    /// The size of one `Elf64_Sym`, in bytes.
    static let symbolSize: UInt64 = 24

    /// The defined function symbols of `.symtab` (`SHT_SYMTAB`), or of `.dynsym`
    /// (`SHT_DYNSYM`) when there is no `.symtab`, with names from the string table their
    /// `sh_link` names.
    ///
    /// Kept: `STT_FUNC` (2) and `STT_GNU_IFUNC` (10) defined in a section: `st_shndx` names
    /// one (`SHN_XINDEX`, 0xffff, takes the index from the `SHT_SYMTAB_SHNDX` section linked
    /// to the table), and `st_value` lies inside it. `SHN_UNDEF` and the other reserved
    /// indices (`SHN_ABS`, `SHN_COMMON`) have no section to bound a symbol, so they are not
    /// kept. A symbol's offset is its `st_value`, the file's own virtual address (the runtime
    /// address minus the load bias); its size follows the rule both readers share
    /// (`SymbolBounds`): `st_size` when not 0, cut at the next kept symbol's start in the
    /// same section and at the section's end (`sh_addr + sh_size`, which a debug file's
    /// `SHT_NOBITS` sections keep).
    static func symbols(_ reader: ByteReader, sections: [Section]) throws(ObjectFileError) -> SymbolTable {
        guard let index = sections.firstIndex(where: { $0.type == 2 }) ?? sections.firstIndex(where: { $0.type == 11 }) else {
            return SymbolTable([])
        }
        let section = sections[index]
        let stride = section.entrySize == 0 ? symbolSize : section.entrySize
        guard stride >= symbolSize else {
            throw reader.error(.malformed, "sh_entsize of section \(index)", at: section.offset,
                               "sh_entsize \(stride) of the symbol table is below the 24 bytes of an Elf64_Sym")
        }
        let count = section.size / stride
        guard Int(section.link) < sections.count, section.link != 0 else {
            throw reader.error(.malformed, "sh_link of section \(index)", at: section.offset,
                               "the symbol table's sh_link \(section.link) names no string table: there are \(sections.count) sections")
        }
        let table = try reader.window(at: section.offset, length: count * stride, field: "sh_offset and sh_size of section \(index), the symbol table")
        let strings = try contents(reader, of: sections, index: Int(section.link), field: "the symbol table's string table (sh_link)")
        let extendedIndices = try extendedSectionIndices(reader, sections: sections, table: index)
        var entries: [SymbolBounds.Entry] = []
        for entry in 0..<count {
            let at = entry * stride
            let type = try table.uint8(at: at + 4, field: "st_info of symbol \(entry)") & 0xf
            guard type == 2 || type == 10 else { continue }
            var sectionIndex = UInt64(try table.uint16(at: at + 6, field: "st_shndx of symbol \(entry)"))
            if sectionIndex == shnXIndex, let extendedIndices {
                sectionIndex = UInt64(try extendedIndices.uint32(at: entry * 4, field: "entry \(entry) of SHT_SYMTAB_SHNDX (st_shndx of symbol \(entry) is SHN_XINDEX)"))
            } else if sectionIndex >= shnLoReserve {
                continue // SHN_ABS, SHN_COMMON, …: no section to bound it
            }
            guard sectionIndex != 0, sectionIndex < UInt64(sections.count) else { continue } // SHN_UNDEF, or no such section
            let nameAt = UInt64(try table.uint32(at: at, field: "st_name of symbol \(entry)"))
            entries.append(SymbolBounds.Entry(
                name: try strings.cString(at: nameAt, field: "st_name of symbol \(entry)"),
                nameOffset: strings.fileOffset(nameAt),
                section: Int(sectionIndex),
                address: try table.uint64(at: at + 8, field: "st_value of symbol \(entry)"),
                declaredSize: try table.uint64(at: at + 16, field: "st_size of symbol \(entry)")))
        }
        let bounds = sections.map { SymbolBounds.Section(start: $0.address, size: $0.size) }
        return SymbolTable(SymbolBounds.symbols(entries, sections: bounds, base: 0, format: .elf))
    }

    /// `SHN_LORESERVE`: section indices from here on are reserved (`SHN_ABS` 0xfff1,
    /// `SHN_COMMON` 0xfff2, `SHN_XINDEX` 0xffff), not sections.
    static let shnLoReserve: UInt64 = 0xff00
    /// `SHN_XINDEX`: the symbol's section index is in the `SHT_SYMTAB_SHNDX` section.
    static let shnXIndex: UInt64 = 0xffff

    /// The `SHT_SYMTAB_SHNDX` (18) section whose `sh_link` is the symbol table `table`: one
    /// 32-bit section index per symbol, for those whose `st_shndx` is `SHN_XINDEX`; nil when
    /// the file has none.
    static func extendedSectionIndices(_ reader: ByteReader, sections: [Section], table: Int) throws(ObjectFileError) -> ByteReader? {
        guard let index = sections.firstIndex(where: { $0.type == 18 && Int($0.link) == table }) else { return nil }
        return try contents(reader, of: sections, index: index, field: "the symbol table's extended section indices (SHT_SYMTAB_SHNDX)")
    }
}
