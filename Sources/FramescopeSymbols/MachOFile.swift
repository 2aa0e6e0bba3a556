/// One 64-bit little-endian Mach-O image (a thin file or one slice of a fat file): its
/// header, segments and sections, `LC_UUID`, and the function symbols of `LC_SYMTAB`.
///
/// Load commands read: `LC_SEGMENT_64` (0x19), `LC_UUID` (0x1b) and `LC_SYMTAB` (0x2); the
/// first of each of the last two counts, the others are skipped by their `cmdsize`.
/// `ncmds` and `nsects` are bounded by the bytes that hold them, so no count can make the
/// reader allocate more than the file's size. See ``symbols`` for which symbols are kept.
public struct MachOFile: Sendable {
    /// A section of a segment, from its `section_64` header.
    public struct Section: Hashable, Sendable {
        /// `segname`, such as `__TEXT`.
        public var segmentName: String
        /// `sectname`, such as `__text`.
        public var name: String
        /// `addr`: the section's virtual address.
        public var address: UInt64
        /// `size`: its length in bytes.
        public var size: UInt64
        /// `flags`: its type (low byte) and attributes.
        public var flags: UInt32

        /// Whether the section holds code: `__TEXT,__text`, or any section whose flags have
        /// `S_ATTR_PURE_INSTRUCTIONS` (0x80000000) or `S_ATTR_SOME_INSTRUCTIONS` (0x400).
        public var isCode: Bool {
            (segmentName == "__TEXT" && name == "__text") || flags & 0x8000_0400 != 0
        }

        /// Whether `address` lies inside the section.
        public func contains(_ address: UInt64) -> Bool {
            SymbolBounds.Section(start: self.address, size: size).contains(address)
        }
    }

    /// A segment, from its `LC_SEGMENT_64` command.
    public struct Segment: Hashable, Sendable {
        /// `segname`, such as `__TEXT`.
        public var name: String
        /// `vmaddr`: where it is mapped, before the image slides.
        public var vmAddress: UInt64
        /// `vmsize`: how many bytes it maps.
        public var vmSize: UInt64
        /// Its sections, in file order.
        public var sections: [Section]
    }

    /// `FAT_MAGIC`, big-endian on disk.
    static let fatMagic: UInt32 = 0xCAFE_BABE
    /// `FAT_MAGIC_64`, big-endian on disk.
    static let fatMagic64: UInt32 = 0xCAFE_BABF
    /// The size of `mach_header_64`, in bytes.
    static let headerSize: UInt64 = 32

    /// Where the image starts in the file, in bytes (a fat slice's offset, otherwise 0).
    public let fileOffset: UInt64
    /// `cputype`, such as `CPU_TYPE_ARM64` (0x0100000c).
    public let cpuType: UInt32
    /// `cpusubtype` (`CPU_SUBTYPE_ARM64E` is 2 in its low 24 bits).
    public let cpuSubtype: UInt32
    /// `filetype`, such as `MH_EXECUTE` (2) or `MH_DSYM` (0xa).
    public let fileType: UInt32
    /// The 16 bytes of `LC_UUID`; nil when the image has none.
    public let uuid: [UInt8]?
    /// The `LC_SEGMENT_64` segments in load-command order; a symbol's `n_sect` counts their
    /// sections from 1 in this order.
    public let segments: [Segment]
    /// The function symbols (see the type's summary).
    public let symbols: SymbolTable

    /// The image in `reader`'s window (a whole thin file or one fat slice).
    /// - Throws: ``ObjectFileError`` for a header, load command or table that does not fit
    ///   or makes no sense.
    public init(_ reader: ByteReader) throws(ObjectFileError) {
        fileOffset = UInt64(reader.base)
        let magic = try reader.uint32(at: 0, field: "magic")
        guard magic == 0xFEED_FACF else {
            throw reader.error(.badMagic, "magic", at: 0,
                               "a fat slice that is not a 64-bit Mach-O image: it starts with 0x\(String(magic, radix: 16, uppercase: true))")
        }
        cpuType = try reader.uint32(at: 4, field: "cputype")
        cpuSubtype = try reader.uint32(at: 8, field: "cpusubtype")
        fileType = try reader.uint32(at: 12, field: "filetype")
        let commands = try Self.loadCommands(reader)
        uuid = commands.uuid
        segments = commands.segments
        symbols = try Self.symbols(reader, symtab: commands.symtab, sections: segments.flatMap(\.sections),
                                   base: Self.textVMAddress(segments))
    }

    /// `LC_SYMTAB`'s four fields, relative to the image's start.
    struct SymtabCommand {
        var symoff: UInt64, nsyms: UInt64, stroff: UInt64, strsize: UInt64
        /// Where the command is, for errors.
        var commandOffset: UInt64
    }

    /// What the load commands give.
    struct LoadCommands {
        var uuid: [UInt8]?
        var segments: [Segment] = []
        var symtab: SymtabCommand?
    }

    /// Walks `ncmds` load commands, each at most as long as `sizeofcmds` leaves.
    static func loadCommands(_ reader: ByteReader) throws(ObjectFileError) -> LoadCommands {
        let ncmds = UInt64(try reader.uint32(at: 16, field: "ncmds"))
        let sizeofcmds = UInt64(try reader.uint32(at: 20, field: "sizeofcmds"))
        guard reader.contains(headerSize, length: sizeofcmds) else {
            throw reader.error(.outOfBounds, "sizeofcmds", at: 20,
                               "sizeofcmds \(sizeofcmds) reaches past the end of the \(reader.count)-byte image")
        }
        guard ncmds <= sizeofcmds / 8 else {
            throw reader.error(.tooMany, "ncmds", at: 16,
                               "ncmds \(ncmds) load commands cannot fit in sizeofcmds \(sizeofcmds) bytes (8 bytes each at least)")
        }
        var result = LoadCommands()
        var cursor = headerSize
        let end = headerSize + sizeofcmds
        for number in 0..<ncmds {
            let cmd = try reader.uint32(at: cursor, field: "cmd of load command \(number)")
            let cmdsize = UInt64(try reader.uint32(at: cursor + 4, field: "cmdsize of load command \(number)"))
            guard cmdsize >= 8 else {
                throw reader.error(.malformed, "cmdsize of load command \(number)", at: cursor + 4, "cmdsize \(cmdsize) is below the 8 bytes of cmd and cmdsize")
            }
            guard cmdsize <= end - cursor else {
                throw reader.error(.outOfBounds, "cmdsize of load command \(number)", at: cursor + 4,
                                   "cmdsize \(cmdsize) reaches past the \(sizeofcmds) bytes of load commands (sizeofcmds)")
            }
            let command = try reader.window(at: cursor, length: cmdsize, field: "load command \(number)")
            switch cmd {
            case 0x19:
                result.segments.append(try segment(command, number: number))
            case 0x1b where result.uuid == nil:
                result.uuid = Array(try command.bytes(at: 8, length: 16, field: "uuid of LC_UUID"))
            case 0x2 where result.symtab == nil:
                result.symtab = SymtabCommand(
                    symoff: UInt64(try command.uint32(at: 8, field: "symoff")),
                    nsyms: UInt64(try command.uint32(at: 12, field: "nsyms")),
                    stroff: UInt64(try command.uint32(at: 16, field: "stroff")),
                    strsize: UInt64(try command.uint32(at: 20, field: "strsize")),
                    commandOffset: cursor)
            default:
                break
            }
            cursor += cmdsize
        }
        return result
    }

    /// One `LC_SEGMENT_64` command and its `section_64` headers (80 bytes each after the
    /// command's 72).
    static func segment(_ command: ByteReader, number: UInt64) throws(ObjectFileError) -> Segment {
        let nsects = UInt64(try command.uint32(at: 64, field: "nsects of load command \(number)"))
        guard nsects <= (UInt64(command.count) - min(UInt64(command.count), 72)) / 80 else {
            throw command.error(.tooMany, "nsects of load command \(number)", at: 64,
                                "nsects \(nsects) sections of 80 bytes cannot fit in a \(command.count)-byte LC_SEGMENT_64")
        }
        var sections: [Section] = []
        sections.reserveCapacity(Int(nsects))
        for index in 0..<nsects {
            let at = 72 + index * 80
            let field = "section \(index) of load command \(number)"
            sections.append(Section(
                segmentName: try command.fixedString(at: at + 16, length: 16, field: "segname of \(field)"),
                name: try command.fixedString(at: at, length: 16, field: "sectname of \(field)"),
                address: try command.uint64(at: at + 32, field: "addr of \(field)"),
                size: try command.uint64(at: at + 40, field: "size of \(field)"),
                flags: try command.uint32(at: at + 64, field: "flags of \(field)")))
        }
        return Segment(
            name: try command.fixedString(at: 8, length: 16, field: "segname of load command \(number)"),
            vmAddress: try command.uint64(at: 24, field: "vmaddr of load command \(number)"),
            vmSize: try command.uint64(at: 32, field: "vmsize of load command \(number)"),
            sections: sections)
    }

    /// The `__TEXT` segment's `vmaddr`: the base symbol offsets are measured from (0 when
    /// there is no `__TEXT` segment, as in an `MH_OBJECT` file).
    static func textVMAddress(_ segments: [Segment]) -> UInt64 {
        segments.first { $0.name == "__TEXT" }?.vmAddress ?? 0
    }

    /// The `__TEXT` segment's `vmaddr`, which symbol offsets are measured from.
    public var textVMAddress: UInt64 { Self.textVMAddress(segments) }

    /// The image with its identity and symbols.
    public var image: SymbolImage {
        let base = textVMAddress
        var highest: UInt64 = 0
        for segment in segments where segment.name != "__PAGEZERO" && segment.name != "__DWARF" {
            let (end, overflow) = segment.vmAddress.addingReportingOverflow(segment.vmSize)
            highest = max(highest, overflow ? .max : end)
        }
        return SymbolImage(
            id: uuid?.lowercaseHex, format: .machO, arch: Self.archName(cpuType: cpuType, subtype: cpuSubtype),
            kind: Self.kind(fileType), typeName: Self.fileTypeName(fileType),
            extent: highest > base ? highest - base : 0, fileOffset: fileOffset, symbols: symbols, debugLink: nil)
    }
}
