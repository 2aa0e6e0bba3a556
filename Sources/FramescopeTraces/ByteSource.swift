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

/// A file opened for reading with POSIX `open`/`read`: no copies beyond the reader's buffer.
public final class FileByteSource: ByteSource {
    private let descriptor: Int32
    /// The path as given.
    public let path: String
    /// The file's size in bytes when opened (for progress).
    public let size: Int

    /// Opens `path`.
    /// - Throws: ``TraceError`` of kind `.io` when it cannot be opened, of kind `.data`
    ///   when it is a directory or not a regular file.
    public init(path: String) throws(TraceError) {
        self.path = path
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw TraceError(kind: .io, file: path, message: "cannot open: \(reason)")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            throw TraceError(kind: .io, file: path, message: "cannot stat: \(String(cString: strerror(errno)))")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            close(descriptor)
            throw TraceError(kind: .data, file: path, message: "is a directory, not a trace file")
        }
        self.descriptor = descriptor
        self.size = Int(info.st_size)
    }

    deinit { close(descriptor) }

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
            throw TraceError(kind: .io, file: path, message: "read failed: \(String(cString: strerror(errno)))")
        }
    }
}
