/// One 64-bit little-endian ELF file: its header, section and program headers, GNU build
/// id, `.gnu_debuglink` and function symbols.
///
/// Extended numbering is honoured: `e_shnum == 0` takes the count from section 0's
/// `sh_size`, `e_shstrndx == SHN_XINDEX` (0xffff) from its `sh_link`, and
/// `e_phnum == PN_XNUM` (0xffff) from its `sh_info`. Counts are bounded by the bytes that
/// hold their tables, and a section is only checked against the file when it is read (a
/// symbol table, a string table, a note), so a section this reader does not need cannot
/// make it refuse a file.
public struct ELFFile: Sendable {
    /// A section header (`Elf64_Shdr`).
    public struct Section: Hashable, Sendable {
        /// Its name from the section-header string table (empty when the file has none).
        public var name: String
        /// `sh_type`: `SHT_SYMTAB` 2, `SHT_STRTAB` 3, `SHT_NOTE` 7, `SHT_NOBITS` 8,
        /// `SHT_DYNSYM` 11, …
        public var type: UInt32
        /// `sh_addr`: its virtual address when loaded, 0 when not loaded.
        public var address: UInt64
        /// `sh_offset`: where its bytes are in the file.
        public var offset: UInt64
        /// `sh_size`: its length in bytes.
        public var size: UInt64
        /// `sh_link`: a related section (a symbol table's string table).
        public var link: UInt32
        /// `sh_addralign`: its alignment in bytes.
        public var alignment: UInt64
        /// `sh_entsize`: the size of one entry of a table, in bytes.
        public var entrySize: UInt64
    }

    /// A program header (`Elf64_Phdr`).
    public struct Segment: Hashable, Sendable {
        /// `p_type`: `PT_LOAD` 1, `PT_NOTE` 4, …
        public var type: UInt32
        /// `p_offset`: where its bytes are in the file.
        public var offset: UInt64
        /// `p_vaddr`: its virtual address.
        public var address: UInt64
        /// `p_filesz`: how many bytes the file holds for it.
        public var fileSize: UInt64
        /// `p_memsz`: how many bytes it maps.
        public var memorySize: UInt64
        /// `p_align`: its alignment in bytes.
        public var alignment: UInt64
    }

    /// `SHT_NOBITS`: a section that takes no bytes in the file (`.bss`, a debug file's
    /// emptied `.dynsym`).
    static let noBits: UInt32 = 8

    /// `e_type`: `ET_REL` 1, `ET_EXEC` 2, `ET_DYN` 3, `ET_CORE` 4.
    public let fileType: UInt16
    /// `e_machine`: `EM_X86_64` 62, `EM_AARCH64` 183, …
    public let machine: UInt16
    /// The section headers, in file order (section 0 included).
    public let sections: [Section]
    /// The program headers, in file order.
    public let segments: [Segment]
    /// The `NT_GNU_BUILD_ID` note's bytes; nil when the file has none.
    public let buildID: [UInt8]?
    /// The file name in `.gnu_debuglink`; nil when there is no such section.
    public let debugLink: String?
    /// The defined function symbols (see ``ELFFile/symbols(_:sections:)``).
    public let symbols: SymbolTable

    /// The ELF file in `reader`.
    /// - Throws: ``ObjectFileError`` for a 32-bit or big-endian file, or a header or table
    ///   that does not fit or makes no sense.
    public init(_ reader: ByteReader) throws(ObjectFileError) {
        switch try reader.uint8(at: 4, field: "e_ident[EI_CLASS]") {
        case 2: break
        case 1: throw reader.error(.unsupported, "e_ident[EI_CLASS]", at: 4, "a 32-bit ELF file: only 64-bit ELF is read")
        case let other: throw reader.error(.malformed, "e_ident[EI_CLASS]", at: 4, "EI_CLASS \(other) is neither 1 (32-bit) nor 2 (64-bit)")
        }
        switch try reader.uint8(at: 5, field: "e_ident[EI_DATA]") {
        case 1: break
        case 2: throw reader.error(.unsupported, "e_ident[EI_DATA]", at: 5, "a big-endian ELF file: only little-endian ELF is read")
        case let other: throw reader.error(.malformed, "e_ident[EI_DATA]", at: 5, "EI_DATA \(other) is neither 1 (little-endian) nor 2 (big-endian)")
        }
        fileType = try reader.uint16(at: 16, field: "e_type")
        machine = try reader.uint16(at: 18, field: "e_machine")
        let headers = try Self.sectionHeaders(reader)
        sections = headers.sections
        segments = try Self.programHeaders(reader, extendedCount: headers.extendedSegmentCount)
        buildID = try Self.buildID(reader, sections: sections, segments: segments)
        debugLink = try Self.debugLink(reader, sections: sections)
        symbols = try Self.symbols(reader, sections: sections)
    }

    /// The section headers with their names, and section 0's `sh_info` (the program header
    /// count when `e_phnum` is `PN_XNUM`).
    static func sectionHeaders(_ reader: ByteReader) throws(ObjectFileError) -> (sections: [Section], extendedSegmentCount: UInt64?) {
        let shoff = try reader.uint64(at: 40, field: "e_shoff")
        let shentsize = UInt64(try reader.uint16(at: 58, field: "e_shentsize"))
        var shnum = UInt64(try reader.uint16(at: 60, field: "e_shnum"))
        var shstrndx = UInt64(try reader.uint16(at: 62, field: "e_shstrndx"))
        guard shoff != 0 else { return ([], nil) }
        guard shentsize >= 64 else {
            throw reader.error(.malformed, "e_shentsize", at: 58, "e_shentsize \(shentsize) is below the 64 bytes of an Elf64_Shdr")
        }
        guard reader.contains(shoff, length: 64) else {
            throw reader.error(.outOfBounds, "e_shoff", at: 40, "e_shoff \(shoff) puts the section headers past the end of the \(reader.count)-byte file")
        }
        let extendedSegmentCount: UInt64? = UInt64(try reader.uint32(at: shoff + 44, field: "sh_info of section 0"))
        if shnum == 0 { shnum = try reader.uint64(at: shoff + 32, field: "sh_size of section 0 (the section count)") }
        if shstrndx == 0xffff { shstrndx = UInt64(try reader.uint32(at: shoff + 40, field: "sh_link of section 0 (the name table's index)")) }
        guard shnum <= (UInt64(reader.count) - shoff) / shentsize else {
            throw reader.error(.tooMany, "e_shnum", at: 60,
                               "\(shnum) section headers of \(shentsize) bytes at e_shoff \(shoff) cannot fit in the \(reader.count)-byte file")
        }
        var sections: [Section] = []
        var nameOffsets: [UInt64] = []
        sections.reserveCapacity(Int(shnum))
        for index in 0..<shnum {
            let at = shoff + index * shentsize
            nameOffsets.append(UInt64(try reader.uint32(at: at, field: "sh_name of section \(index)")))
            sections.append(Section(
                name: "",
                type: try reader.uint32(at: at + 4, field: "sh_type of section \(index)"),
                address: try reader.uint64(at: at + 16, field: "sh_addr of section \(index)"),
                offset: try reader.uint64(at: at + 24, field: "sh_offset of section \(index)"),
                size: try reader.uint64(at: at + 32, field: "sh_size of section \(index)"),
                link: try reader.uint32(at: at + 40, field: "sh_link of section \(index)"),
                alignment: try reader.uint64(at: at + 48, field: "sh_addralign of section \(index)"),
                entrySize: try reader.uint64(at: at + 56, field: "sh_entsize of section \(index)")))
        }
        guard shstrndx != 0 else { return (sections, extendedSegmentCount) } // SHN_UNDEF: no names
        guard shstrndx < shnum else {
            throw reader.error(.malformed, "e_shstrndx", at: 62, "e_shstrndx \(shstrndx) names no section: there are \(shnum)")
        }
        let names = try contents(reader, of: sections, index: Int(shstrndx), field: "the section name table (e_shstrndx)")
        for index in sections.indices {
            sections[index].name = try names.cString(at: nameOffsets[index], field: "sh_name of section \(index)")
        }
        return (sections, extendedSegmentCount)
    }

    /// The bytes of section `index`, which must lie in the file.
    static func contents(_ reader: ByteReader, of sections: [Section], index: Int, field: String) throws(ObjectFileError) -> ByteReader {
        let section = sections[index]
        guard section.type != noBits else {
            throw reader.error(.malformed, "sh_type of section \(index)", at: section.offset, "\(field) is section \(index), which has no bytes in the file (SHT_NOBITS)")
        }
        return try reader.window(at: section.offset, length: section.size, field: "sh_offset and sh_size of section \(index), \(field)")
    }

    /// The program headers; `e_phnum` `PN_XNUM` (0xffff) takes the count from
    /// `extendedCount`.
    static func programHeaders(_ reader: ByteReader, extendedCount: UInt64?) throws(ObjectFileError) -> [Segment] {
        let phoff = try reader.uint64(at: 32, field: "e_phoff")
        let phentsize = UInt64(try reader.uint16(at: 54, field: "e_phentsize"))
        var phnum = UInt64(try reader.uint16(at: 56, field: "e_phnum"))
        if phnum == 0xffff, let extendedCount { phnum = extendedCount }
        guard phnum > 0 else { return [] }
        guard phentsize >= 56 else {
            throw reader.error(.malformed, "e_phentsize", at: 54, "e_phentsize \(phentsize) is below the 56 bytes of an Elf64_Phdr")
        }
        guard phoff <= UInt64(reader.count), phnum <= (UInt64(reader.count) - phoff) / phentsize else {
            throw reader.error(.tooMany, "e_phnum", at: 56,
                               "\(phnum) program headers of \(phentsize) bytes at e_phoff \(phoff) cannot fit in the \(reader.count)-byte file")
        }
        var segments: [Segment] = []
        segments.reserveCapacity(Int(phnum))
        for index in 0..<phnum {
            let at = phoff + index * phentsize
            segments.append(Segment(
                type: try reader.uint32(at: at, field: "p_type of program header \(index)"),
                offset: try reader.uint64(at: at + 8, field: "p_offset of program header \(index)"),
                address: try reader.uint64(at: at + 16, field: "p_vaddr of program header \(index)"),
                fileSize: try reader.uint64(at: at + 32, field: "p_filesz of program header \(index)"),
                memorySize: try reader.uint64(at: at + 40, field: "p_memsz of program header \(index)"),
                alignment: try reader.uint64(at: at + 48, field: "p_align of program header \(index)")))
        }
        return segments
    }

    /// The image with its identity and symbols.
    public var image: SymbolImage {
        var extent: UInt64 = 0
        for segment in segments where segment.type == 1 { // PT_LOAD
            let (end, overflow) = segment.address.addingReportingOverflow(segment.memorySize)
            extent = max(extent, overflow ? .max : end)
        }
        return SymbolImage(
            id: buildID?.lowercaseHex, format: .elf, arch: Self.machineName(machine),
            kind: Self.kind(fileType), typeName: Self.fileTypeName(fileType),
            extent: extent, fileOffset: 0, symbols: symbols, debugLink: debugLink)
    }
}
