#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FramescopeJSON

/// Where a trace's bytes come from: a file, or memory in tests. The JSON lexer reads it
/// directly (``JSONByteInput``), its read errors and its refusals both ``TraceError``s.
public protocol ByteSource: JSONByteInput where Failure == TraceError {
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int
}

/// Bytes held in memory, handed out in chunks of at most `chunkSize` (small chunks
/// let tests cross every buffer boundary).
public struct MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private let chunkSize: Int
    private var offset = 0

    /// A source over `bytes`.
    public init(_ bytes: [UInt8], chunkSize: Int = .max) {
        self.bytes = bytes
        self.chunkSize = max(1, chunkSize)
    }

    /// A source over the UTF-8 of `text`.
    public init(_ text: String, chunkSize: Int = .max) {
        self.init(Array(text.utf8), chunkSize: chunkSize)
    }

    /// Copies the next chunk.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        let count = min(buffer.count, chunkSize, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

/// A file opened for reading with POSIX `open`/`read`: no copies beyond the reader's
/// buffer. A FIFO, a process substitution (`<(…)`) or a character device reads like a
/// regular file; `-` is standard input. Nothing here seeks or needs the size.
public final class FileByteSource: ByteSource {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// The path as given (`-` for standard input).
    public let path: String
    /// The name errors and reports use: the path, or `stdin` for `-`.
    public let name: String
    /// The file's size in bytes when it is a regular file (for progress); nil for a pipe,
    /// a terminal or a device.
    public let size: Int?
    /// Whether this is standard input and standard input is a terminal (nobody piped
    /// anything in).
    public let isInteractive: Bool

    /// Opens `path`, or standard input for `-`.
    /// - Throws: ``TraceError`` of kind `.io` when it cannot be opened, of kind `.data`
    ///   when it is a directory.
    public init(path: String) throws(TraceError) {
        self.path = path
        let descriptor: Int32
        if path == "-" {
            name = "stdin"
            descriptor = 0
            ownsDescriptor = false
            isInteractive = isatty(0) == 1
        } else {
            name = path
            descriptor = open(path, O_RDONLY)
            ownsDescriptor = true
            isInteractive = false
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno))
                throw TraceError(kind: .io, file: path, message: "cannot open: \(reason)")
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            if path != "-" { close(descriptor) }
            throw TraceError(kind: .io, file: name, message: "cannot stat: \(reason)")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            if path != "-" { close(descriptor) }
            throw TraceError(kind: .data, file: name, message: "is a directory, not a trace file")
        }
        self.descriptor = descriptor
        size = (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// Reads the next bytes, retrying on `EINTR`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        while true {
            #if canImport(Darwin)
            let count = Darwin.read(descriptor, buffer.baseAddress, buffer.count)
            #elseif canImport(Musl)
            let count = Musl.read(descriptor, buffer.baseAddress, buffer.count)
            #else
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            #endif
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw TraceError(kind: .io, file: name, message: "read failed: \(String(cString: strerror(errno)))")
        }
    }
}
