/// Bounds-checked reads of integers and C strings from a window of an object file's bytes.
///
/// A reader sees `count` bytes starting at file offset ``base`` (the whole file, or one fat
/// slice) and takes offsets relative to that start, as Mach-O's `symoff` is relative to its
/// slice. A reader of a file's head (``init(head:fileSize:)``) holds only its first bytes but
/// measures every range against the whole file's size, as a reader of the whole file does; a
/// read past the bytes it holds throws `pastHead`. Every read checks its range with overflow-reporting arithmetic and throws
/// ``ObjectFileError`` (`truncated`) naming the field and the absolute file offset instead of
/// trapping, so hostile bytes can only ever produce an error.
public struct ByteReader: Sendable {
    /// The whole file.
    public let bytes: [UInt8]
    /// The file offset of the window's first byte.
    public let base: Int
    /// The window's length in bytes.
    public let count: Int

    /// A reader over all of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.base = 0
        self.count = bytes.count
    }

    /// A reader of a file of `fileSize` bytes that holds only its first bytes, `head`: every
    /// range is checked against `fileSize`, and a read past `head` throws `pastHead`.
    public init(head: [UInt8], fileSize: Int) {
        self.bytes = head
        self.base = 0
        self.count = max(fileSize, head.count)
    }

    private init(bytes: [UInt8], base: Int, count: Int) {
        self.bytes = bytes
        self.base = base
        self.count = count
    }

    /// The absolute file offset of `offset` (relative to the window), saturating at
    /// `UInt64.max`, for error messages.
    public func fileOffset(_ offset: UInt64) -> UInt64 {
        let (sum, overflow) = offset.addingReportingOverflow(UInt64(base))
        return overflow ? .max : sum
    }

    /// The window's start index in ``bytes`` for `length` bytes at `offset`, or nil when
    /// any of them lies outside the window.
    public func index(_ offset: UInt64, length: UInt64) -> Int? {
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard !overflow, end <= UInt64(count) else { return nil }
        return base + Int(offset)
    }

    /// Whether `length` bytes at `offset` lie inside the window.
    public func contains(_ offset: UInt64, length: UInt64) -> Bool {
        index(offset, length: length) != nil
    }

    /// A refusal of `field` at `offset` (relative to the window).
    public func error(_ code: ObjectFileError.Code, _ field: String, at offset: UInt64, _ message: String) -> ObjectFileError {
        ObjectFileError(code, field: field, offset: fileOffset(offset), message)
    }

    /// The index of `length` bytes at `offset`, or a `truncated` refusal of `field`.
    private func checked(_ offset: UInt64, _ length: UInt64, _ field: @autoclosure () -> String) throws(ObjectFileError) -> Int {
        guard let start = index(offset, length: length) else {
            throw error(.truncated, field(), at: offset,
                        "\(field()) needs \(length) bytes at offset \(offset), past the end of the \(count) bytes that hold it: the file or a structure in it is cut short")
        }
        guard start + Int(length) <= bytes.count else { throw pastHead(field(), at: offset) }
        return start
    }

    /// The refusal a reader of a file's head throws for a read past the bytes it holds.
    private func pastHead(_ field: String, at offset: UInt64) -> ObjectFileError {
        error(.pastHead, field, at: offset, "\(field) lies past the \(bytes.count) bytes read so far")
    }

    /// A window of `length` bytes at `offset`, for a fat slice or a table; refused as
    /// `outOfBounds` when it reaches past this window's end.
    public func window(at offset: UInt64, length: UInt64, field: @autoclosure () -> String) throws(ObjectFileError) -> ByteReader {
        guard let start = index(offset, length: length) else {
            throw error(.outOfBounds, field(), at: offset,
                        "\(field()) claims \(length) bytes at offset \(offset), past the end of the \(count) bytes that hold it")
        }
        return ByteReader(bytes: bytes, base: start, count: Int(length))
    }

    /// The byte at `offset`.
    public func uint8(at offset: UInt64, field: @autoclosure () -> String) throws(ObjectFileError) -> UInt8 {
        bytes[try checked(offset, 1, field())]
    }

    /// An unsigned integer of `width` bytes (at most 8) at `offset`.
    private func unsigned(_ offset: UInt64, width: Int, bigEndian: Bool, field: @autoclosure () -> String) throws(ObjectFileError) -> UInt64 {
        let start = try checked(offset, UInt64(width), field())
        var value: UInt64 = 0
        for position in 0..<width {
            let byte = UInt64(bytes[start + (bigEndian ? position : width - 1 - position)])
            value = value << 8 | byte
        }
        return value
    }

    /// The 16-bit unsigned integer at `offset`, little-endian unless `bigEndian`.
    public func uint16(at offset: UInt64, field: @autoclosure () -> String, bigEndian: Bool = false) throws(ObjectFileError) -> UInt16 {
        UInt16(truncatingIfNeeded: try unsigned(offset, width: 2, bigEndian: bigEndian, field: field()))
    }

    /// The 32-bit unsigned integer at `offset`, little-endian unless `bigEndian`.
    public func uint32(at offset: UInt64, field: @autoclosure () -> String, bigEndian: Bool = false) throws(ObjectFileError) -> UInt32 {
        UInt32(truncatingIfNeeded: try unsigned(offset, width: 4, bigEndian: bigEndian, field: field()))
    }

    /// The 64-bit unsigned integer at `offset`, little-endian unless `bigEndian`.
    public func uint64(at offset: UInt64, field: @autoclosure () -> String, bigEndian: Bool = false) throws(ObjectFileError) -> UInt64 {
        try unsigned(offset, width: 8, bigEndian: bigEndian, field: field())
    }

    /// `length` raw bytes at `offset` (a UUID, a build id).
    public func bytes(at offset: UInt64, length: UInt64, field: @autoclosure () -> String) throws(ObjectFileError) -> ArraySlice<UInt8> {
        let start = try checked(offset, length, field())
        return bytes[start..<start + Int(length)]
    }

    /// The NUL-terminated string at `offset`, which must end before `limit` (relative to
    /// the window; the window's end when nil). Bytes that are not UTF-8 become U+FFFD.
    /// - Complexity: O(length of the string).
    public func cString(at offset: UInt64, limit: UInt64? = nil, field: @autoclosure () -> String) throws(ObjectFileError) -> String {
        let end = min(limit ?? UInt64(count), UInt64(count))
        guard offset < end else {
            throw error(.outOfBounds, field(), at: offset, "\(field()) points at offset \(offset), outside its \(end)-byte table")
        }
        let start = base + Int(offset)
        let stop = min(base + Int(end), bytes.count)
        guard start < stop else { throw pastHead(field(), at: offset) }
        let text: String? = bytes.withUnsafeBufferPointer { buffer in
            let table = UnsafeBufferPointer(rebasing: buffer[start..<stop])
            guard let terminator = table.firstIndex(of: 0) else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: table[..<terminator]), as: UTF8.self)
        }
        guard let text else {
            if stop < base + Int(end) { throw pastHead(field(), at: offset) }
            throw error(.malformed, field(), at: offset, "\(field()) at offset \(offset) runs to the end of its table without a terminating NUL")
        }
        return text
    }

    /// The name in a fixed field of `length` bytes (a Mach-O `segname`), up to its first
    /// NUL or the field's end.
    public func fixedString(at offset: UInt64, length: UInt64, field: @autoclosure () -> String) throws(ObjectFileError) -> String {
        let raw = try bytes(at: offset, length: length, field: field())
        let end = raw.firstIndex(of: 0) ?? raw.endIndex
        return String(decoding: raw[raw.startIndex..<end], as: UTF8.self)
    }
}
