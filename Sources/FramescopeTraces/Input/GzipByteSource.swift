import CFramescopeZlib

/// The decompressed bytes of a gzip stream (RFC 1952), inflated while they are read with
/// the system's zlib, in constant memory. Several gzip members one after another (what
/// `cat a.gz b.gz` or `gzip -c a b` gives) read as their contents one after another.
///
/// A **gzip bomb** is stopped: once more than ``bombFloor`` bytes have come out, the
/// output may be at most ``maximumRatio`` times the compressed input read so far. Real
/// traces compress 5-30 times (a regular CSV of 60 Hz ticks about 12 times); deflate's own
/// limit is about 1,032 times, reached only by long runs of one byte.
///
/// A stream that ends before its end-of-stream marker is an error naming the compressed
/// byte offset, marked ``TraceError/truncated``: the bytes handed out before it were good.
/// A corrupt stream (a bad header, block or checksum) is an error naming the offset where
/// zlib found it, not marked: deflate finds most damage only at the checksum, so the bytes
/// before it cannot be trusted.
public struct GzipByteSource<Base: ByteSource>: ByteSource {
    /// The most output per byte of compressed input read so far.
    public static var maximumRatio: Int { 200 }
    /// Output up to this many bytes is never judged by the ratio (64 MiB).
    public static var bombFloor: Int { 64 << 20 }

    private var base: Base
    private let file: String
    private let state: ZlibState
    /// Compressed bytes read from the base so far.
    public private(set) var compressedBytesRead = 0
    /// Decompressed bytes handed out so far.
    public private(set) var bytesRead = 0
    private var ended = false

    /// Decompresses what `base` gives; errors name `file`.
    public init(base: Base, file: String) throws(TraceError) {
        self.base = base
        self.file = file
        guard let state = ZlibState() else {
            throw TraceError(kind: .io, file: file, message: "zlib could not start inflating (out of memory?)")
        }
        self.state = state
    }

    /// Reads the next decompressed bytes; 0 at the end of the last member.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        guard !ended, buffer.count > 0 else { return 0 }
        while true {
            if state.stream.avail_in == 0 {
                let count = try base.read(into: state.input)
                if count == 0 {
                    guard state.idle else {
                        throw truncated("the gzip stream ends early, after \(compressedBytesRead) compressed bytes, without its end-of-stream marker")
                    }
                    ended = true
                    return 0
                }
                compressedBytesRead += count
                state.stream.next_in = state.input.baseAddress?.assumingMemoryBound(to: Bytef.self)
                state.stream.avail_in = UInt32(count)
            }
            if state.idle {
                // A new member starts (the first, or another after one ended).
                if state.started, inflateReset(&state.stream) != Z_OK {
                    throw TraceError(kind: .io, file: file, message: "zlib could not start the next gzip member")
                }
                state.started = true
                state.idle = false
            }
            state.stream.next_out = buffer.baseAddress?.assumingMemoryBound(to: Bytef.self)
            state.stream.avail_out = UInt32(min(buffer.count, Int(UInt32.max)))
            let before = Int(state.stream.avail_out)
            let code = inflate(&state.stream, Z_NO_FLUSH)
            let produced = before - Int(state.stream.avail_out)
            switch code {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                state.idle = true
            default:
                // Corrupt, not cut short: what came out before may be wrong too.
                let offset = compressedBytesRead - Int(state.stream.avail_in)
                throw TraceError(kind: .data, file: file,
                                 message: "not a valid gzip stream at compressed byte \(offset): \(state.message ?? "zlib error \(code)")")
            }
            bytesRead += produced
            if bytesRead > Self.bombFloor, bytesRead / max(compressedBytesRead, 1) > Self.maximumRatio {
                throw TraceError(kind: .data, file: file, message: "decompresses more than \(Self.maximumRatio) times its size (\(bytesRead) bytes from \(compressedBytesRead)): refused as a gzip bomb")
            }
            if produced > 0 { return produced }
        }
    }

    private func truncated(_ message: String) -> TraceError {
        var error = TraceError(kind: .data, file: file, message: message)
        error.truncated = true
        return error
    }
}

/// zlib's stream and the compressed input buffer, freed together.
private final class ZlibState {
    var stream = z_stream()
    let input: UnsafeMutableRawBufferPointer
    /// Between members: the next input starts a new one.
    var idle = true
    /// Whether a member has begun (the next one needs `inflateReset`).
    var started = false

    init?() {
        input = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 8)
        // 15 + 16: gzip's header and trailer (the trailer's CRC-32 and length are checked).
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            input.deallocate()
            return nil
        }
    }

    /// zlib's message for the last error, if it gave one.
    var message: String? {
        stream.msg.map { String(cString: $0) }
    }

    deinit {
        inflateEnd(&stream)
        input.deallocate()
    }
}
