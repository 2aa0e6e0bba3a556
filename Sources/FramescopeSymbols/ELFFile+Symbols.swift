extension ELFFile {
    /// The size of one `Elf64_Sym`, in bytes.
    static let symbolSize: UInt64 = 24

    /// The defined function symbols of `.symtab` (`SHT_SYMTAB`), or of `.dynsym`
    /// (`SHT_DYNSYM`) when there is no `.symtab`, with names from the string table their
    /// `sh_link` names.
    ///
    /// Kept: `STT_FUNC` (2) and `STT_GNU_IFUNC` (10) with `st_shndx != SHN_UNDEF`. A
    /// symbol's offset is its `st_value`, the file's own virtual address (the runtime
    /// address minus the load bias); its size is `st_size`, or when that is 0, up to the next
    /// kept symbol's start or else its section's end.
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
        var kept: [(name: String, nameOffset: UInt64, value: UInt64, size: UInt64, section: Int)] = []
        for entry in 0..<count {
            let at = entry * stride
            let type = try table.uint8(at: at + 4, field: "st_info of symbol \(entry)") & 0xf
            guard type == 2 || type == 10 else { continue }
            let sectionIndex = Int(try table.uint16(at: at + 6, field: "st_shndx of symbol \(entry)"))
            guard sectionIndex != 0 else { continue }
            let nameAt = UInt64(try table.uint32(at: at, field: "st_name of symbol \(entry)"))
            kept.append((
                name: try strings.cString(at: nameAt, field: "st_name of symbol \(entry)"),
                nameOffset: strings.fileOffset(nameAt),
                value: try table.uint64(at: at + 8, field: "st_value of symbol \(entry)"),
                size: try table.uint64(at: at + 16, field: "st_size of symbol \(entry)"),
                section: sectionIndex))
        }
        kept.sort { $0.value < $1.value }
        var symbols: [Symbol] = []
        symbols.reserveCapacity(kept.count)
        var next = 0 // the first kept symbol starting after the current one
        for entry in kept {
            while next < kept.count, kept[next].value <= entry.value { next += 1 }
            var size = entry.size
            if size == 0 {
                if next < kept.count {
                    size = kept[next].value - entry.value
                } else if entry.section < sections.count, sections[entry.section].address <= entry.value {
                    let (end, overflow) = sections[entry.section].address.addingReportingOverflow(sections[entry.section].size)
                    size = overflow ? .max - entry.value : max(end, entry.value) - entry.value
                }
            }
            symbols.append(Symbol(name: entry.name, offset: entry.value, size: size, nameOffset: entry.nameOffset, format: .elf))
        }
        return SymbolTable(symbols)
    }
}
