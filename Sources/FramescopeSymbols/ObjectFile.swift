/// An object file read from its bytes: one or more Mach-O images (a thin file, or the
/// slices of a fat one) or an ELF image, recognised by its magic number.
///
/// ```swift
/// let images = try ObjectFile.images(in: bytes)
/// let arm64 = images.first { $0.arch == "arm64" }
/// arm64?.symbols.lookup(0x215c)?.symbol.name   // "_$s5trashAA5pathsySaySSG_tFTf4d_n"
/// ```
///
/// Read: fat Mach-O (`0xCAFEBABE`, and `0xCAFEBABF` with 64-bit offsets, at most 32
/// slices), thin 64-bit little-endian Mach-O (`0xFEEDFACF`), and 64-bit little-endian ELF.
/// Refused with a message: 32-bit Mach-O and ELF, big-endian Mach-O and ELF, a Java class
/// file (which also starts with `0xCAFEBABE`), and anything else.
public enum ObjectFile: Sendable {
    /// Mach-O images: one for a thin file, one per 64-bit slice for a fat file.
    case machO([MachOFile])
    /// An ELF image.
    case elf(ELFFile)

    /// The file in `bytes`, parsed.
    /// - Throws: ``ObjectFileError`` naming the first field that is wrong and its offset.
    /// - Complexity: O(file size) at most; tables are read once.
    public init(_ bytes: [UInt8]) throws(ObjectFileError) {
        try self.init(ByteReader(bytes))
    }

    /// The file `reader` holds, parsed.
    init(_ reader: ByteReader) throws(ObjectFileError) {
        let magic = try reader.uint32(at: 0, field: "magic", bigEndian: true)
        switch magic {
        case MachOFile.fatMagic, MachOFile.fatMagic64:
            self = .machO(try MachOFile.slices(of: reader))
        case 0xCFFA_EDFE: // 0xFEEDFACF stored little-endian
            self = .machO([try MachOFile(reader)])
        case 0xCEFA_EDFE, 0xFEED_FACE:
            throw reader.error(.unsupported, "magic", at: 0, "a 32-bit Mach-O file: only 64-bit Mach-O is read")
        case 0xFEED_FACF:
            throw reader.error(.unsupported, "magic", at: 0, "a big-endian 64-bit Mach-O file: only little-endian Mach-O is read")
        case 0x7F45_4C46: // "\x7fELF"
            self = .elf(try ELFFile(reader))
        default:
            throw reader.error(.badMagic, "magic", at: 0,
                               "not a Mach-O or ELF file: it starts with 0x\(String(magic, radix: 16, uppercase: true))")
        }
    }

    /// Checks the first bytes of a file of `fileSize` bytes, `head`, before the whole file is
    /// read: the file is parsed as ``init(_:)`` parses it, every range measured against
    /// `fileSize`, until the first read past `head`. So a file refused for its magic number,
    /// its header or a table that cannot fit in `fileSize` is refused from a small read, with
    /// the error reading the whole file would give, and a 3 GiB file is not read for that.
    /// - Throws: ``ObjectFileError`` for what is wrong within `head`; nothing for a file
    ///   whose head is right so far (the whole file may still be refused).
    public static func checkHead(_ head: [UInt8], fileSize: Int) throws(ObjectFileError) {
        do {
            _ = try ObjectFile(ByteReader(head: head, fileSize: fileSize))
        } catch where error.code == .pastHead {
            return
        }
    }

    /// The images of the file in `bytes`: one per Mach-O slice, or the ELF file's one.
    /// - Throws: ``ObjectFileError`` naming the first field that is wrong and its offset.
    public static func images(in bytes: [UInt8]) throws(ObjectFileError) -> [SymbolImage] {
        try ObjectFile(bytes).images
    }

    /// The images: one per Mach-O slice, or the ELF file's one.
    public var images: [SymbolImage] {
        switch self {
        case let .machO(slices): slices.map(\.image)
        case let .elf(file): [file.image]
        }
    }
}
