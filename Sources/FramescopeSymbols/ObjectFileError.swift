/// Why an object file (Mach-O or ELF) was refused, and where.
///
/// Every refusal names the field that was wrong (`nsyms`, `sh_offset of section 12`, …) and
/// the file offset, in bytes from the start of the file (not of a fat slice), where that
/// field or the data it points at lies, so that `llvm-readobj` or a hex dump can confirm it.
public struct ObjectFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: String, Hashable, Sendable {
        /// A structure (a header, a load command, a table entry) runs past the end of the
        /// file or of its fat slice: the file was cut short.
        case truncated
        /// The first bytes are not a magic number this module reads.
        case badMagic
        /// A real format or variant that this module does not read (32-bit, big-endian ELF).
        case unsupported
        /// An offset or size field points outside the file or its slice.
        case outOfBounds
        /// A count claims more entries than could fit in the bytes that hold them.
        case tooMany
        /// A field holds a value the format does not allow (a `cmdsize` below 8, a link to
        /// a section that does not exist).
        case malformed
        /// A read reached past the first bytes of the file that were read
        /// (``ObjectFile/checkHead(_:fileSize:)``): not a problem of the file, only where a
        /// check of its head stops.
        case pastHead
    }

    /// What kind of problem it is.
    public var code: Code
    /// The field that was wrong, as the format's headers name it (`symoff`, `e_shnum`).
    public var field: String
    /// The offset in bytes from the start of the file where the field, or what it points
    /// at, lies.
    public var offset: UInt64
    /// What was wrong, for a person.
    public var message: String

    /// A refusal of `field` at `offset` (bytes from the start of the file).
    public init(_ code: Code, field: String, offset: UInt64, _ message: String) {
        self.code = code
        self.field = field
        self.offset = offset
        self.message = message
    }

    /// `message (field, at byte N)`, with N in decimal and hexadecimal.
    public var description: String {
        "\(message) (\(field), at byte \(offset) = 0x\(String(offset, radix: 16)))"
    }
}
