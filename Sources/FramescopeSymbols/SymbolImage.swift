/// The container format of an object file.
public enum ObjectFormat: String, Hashable, Sendable {
    /// Apple's Mach-O (64-bit, little-endian), thin or one slice of a fat file.
    case machO
    /// ELF (64-bit, little-endian).
    case elf
}

/// What an image is for, from Mach-O's `filetype` or ELF's `e_type`.
public enum ImageKind: Hashable, Sendable {
    /// A program: `MH_EXECUTE`, `ET_EXEC` (a position-independent executable is `ET_DYN`,
    /// so it is a ``sharedLibrary`` here).
    case executable
    /// A library loaded at a chosen address: `MH_DYLIB`, `ET_DYN`.
    case sharedLibrary
    /// A loadable bundle: `MH_BUNDLE`.
    case bundle
    /// Debug symbols only, no code: `MH_DSYM`.
    case debugSymbols
    /// An object file before linking: `MH_OBJECT`, `ET_REL`.
    case relocatable
    /// Any other type, with the format's raw value.
    case other(UInt32)
}

/// One image's identity and function symbols: a thin Mach-O file, one slice of a fat
/// file, or an ELF file.
///
/// Symbol offsets, ``extent`` and lookups share one address space: bytes from the image's
/// base (for Mach-O the `__TEXT` segment's `vmaddr`; for ELF address 0, the file's own
/// virtual addresses), so that a frame's runtime address minus the image's load address
/// (Mach-O) or load bias (ELF) can be looked up directly.
public struct SymbolImage: Hashable, Sendable {
    /// The identity that matches a binary to its debug file and to a crash report's image:
    /// a Mach-O `LC_UUID` as 32 lowercase hex digits without dashes, or an ELF
    /// `NT_GNU_BUILD_ID` as lowercase hex (usually 40 digits); nil when the file has none.
    public var id: String?
    /// The container format.
    public var format: ObjectFormat
    /// The CPU architecture: `arm64`, `arm64e`, `x86_64`, `aarch64` (ELF's name), or the
    /// format's raw number when unknown (`cputype 0x…`, `e_machine 243`).
    public var arch: String
    /// What the image is for.
    public var kind: ImageKind
    /// The format's name for ``kind``: `MH_EXECUTE`, `MH_DSYM`, `ET_EXEC`, `ET_DYN`, …
    public var typeName: String
    /// One past the highest byte the image maps when loaded, in the symbols' address space:
    /// for ELF the highest `p_vaddr + p_memsz` of a `PT_LOAD` segment, for Mach-O the highest
    /// segment end (`__PAGEZERO` and a dSYM's `__DWARF` aside) minus the `__TEXT` `vmaddr`;
    /// 0 when the file maps nothing.
    public var extent: UInt64
    /// Where the image starts in the file, in bytes: a fat slice's `offset`, otherwise 0.
    public var fileOffset: UInt64
    /// The function symbols.
    public var symbols: SymbolTable
    /// The file name an ELF `.gnu_debuglink` section gives for the separate debug file
    /// (`crash.debug`); nil when there is none, and always for Mach-O.
    public var debugLink: String?

    /// An image with the given fields (see each property).
    public init(id: String?, format: ObjectFormat, arch: String, kind: ImageKind, typeName: String,
                extent: UInt64, fileOffset: UInt64, symbols: SymbolTable, debugLink: String?) {
        self.id = id
        self.format = format
        self.arch = arch
        self.kind = kind
        self.typeName = typeName
        self.extent = extent
        self.fileOffset = fileOffset
        self.symbols = symbols
        self.debugLink = debugLink
    }
}

extension Collection where Element == UInt8 {
    /// The bytes as lowercase hexadecimal, two digits each.
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
