/// A recording as the CLI reads it: a file, a FIFO, a process substitution or standard
/// input (`-`), gzip-compressed or not, opened once and read once.
///
/// gzip is recognised by its magic bytes (`1f 8b`), never by the name, and decompressed
/// while it is read (``GzipByteSource``). ``peek(_:)`` shows the first bytes of the
/// (decompressed) content so a caller can decide what it is; the reader it then picks gets
/// the same bytes. Nothing re-opens, seeks or asks for the size to decide anything; the
/// size is only for a progress line.
public final class TraceInput: ByteSource {
    // One of the two is set; optional chaining mutates it in place.
    private var plain: LookaheadSource<FileByteSource>?
    private var gzip: LookaheadSource<GzipByteSource<LookaheadSource<FileByteSource>>>?
    /// The file as opened.
    public let file: FileByteSource
    /// Whether the content is gzip-compressed.
    public let isCompressed: Bool

    /// Opens `path` (`-` for standard input) and looks at its first bytes.
    /// - Throws: ``TraceError``: `.io` when it cannot be opened or read, `.data` for a
    ///   directory or an invalid gzip header.
    public convenience init(path: String) throws(TraceError) {
        try self.init(file: try FileByteSource(path: path))
    }

    /// Looks at the first bytes of a file already opened: this is the first read, so a
    /// caller that wants to say something before it blocks on a terminal (see
    /// ``FileByteSource/isInteractive``) opens the file itself and says it first.
    /// - Throws: ``TraceError``: `.io` when it cannot be read, `.data` for an invalid gzip
    ///   header.
    public init(file: FileByteSource) throws(TraceError) {
        self.file = file
        var lookahead = LookaheadSource(base: file)
        if try lookahead.peek(2) == [0x1F, 0x8B] {
            isCompressed = true
            gzip = LookaheadSource(base: try GzipByteSource(base: lookahead, file: file.name))
        } else {
            isCompressed = false
            plain = lookahead
        }
    }

    /// The name errors and reports use: the path, or `stdin`.
    public var name: String { file.name }

    /// Bytes of the file itself read so far (compressed bytes for gzip), for progress.
    public private(set) var fileBytesRead = 0
    /// Bytes of content read so far (decompressed for gzip).
    public private(set) var contentBytesRead = 0

    /// The first `count` bytes of the content (fewer if it is shorter), not consumed.
    public func peek(_ count: Int) throws(TraceError) -> [UInt8] {
        if gzip != nil { return try gzip?.peek(count) ?? [] }
        return try plain?.peek(count) ?? []
    }

    /// Reads the next bytes of content.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        let count: Int
        if gzip != nil {
            count = try gzip?.read(into: buffer) ?? 0
            fileBytesRead = gzip?.base.compressedBytesRead ?? fileBytesRead
        } else {
            count = try plain?.read(into: buffer) ?? 0
            fileBytesRead += count
        }
        contentBytesRead += count
        return count
    }

    /// All the content left, up to `limit` bytes (a report or a budget, not a trace).
    /// - Throws: ``TraceError`` of kind `.data` past `limit` bytes.
    public func readAll(limit: Int) throws(TraceError) -> [UInt8] {
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { chunk.deallocate() }
        while true {
            let count = try read(into: chunk)
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw TraceError(kind: .data, file: name, message: "is larger than \(limit) bytes") }
        }
    }
}
