import CFramescopeZlib

/// gzip (RFC 1952) compression with the system's zlib, for upload bodies.
enum Gzip {
    /// An error zlib reported, with its code.
    struct Failure: Error, CustomStringConvertible {
        /// zlib's return code.
        let code: Int32
        var description: String { "zlib failed with code \(code)" }
    }

    /// `bytes` compressed as one gzip member (default compression level).
    static func compress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        let initialized = deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                        ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initialized == Z_OK else { throw Failure(code: initialized) }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, UInt(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        var input = bytes
        let result = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer -> Int32 in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = UInt32(outputBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        // With a buffer of deflateBound bytes, one Z_FINISH call completes the stream.
        guard result == Z_STREAM_END else { throw Failure(code: result) }
        output.removeLast(Int(stream.avail_out))
        return output
    }

    /// Decompresses one gzip member (the tests read the bodies the SDK sends with it).
    static func decompress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        let initialized = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initialized == Z_OK else { throw Failure(code: initialized) }
        defer { inflateEnd(&stream) }
        var input = bytes
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let result: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let (code, produced) = chunk.withUnsafeMutableBufferPointer { chunkBuffer -> (Int32, Int) in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = UInt32(chunkBuffer.count)
                    let code = inflate(&stream, Z_NO_FLUSH)
                    return (code, chunkBuffer.count - Int(stream.avail_out))
                }
                output.append(contentsOf: chunk[0..<produced])
                if code == Z_STREAM_END { return code }
                if code != Z_OK || (produced == 0 && stream.avail_in == 0) { return code == Z_OK ? Z_BUF_ERROR : code }
            }
        }
        guard result == Z_STREAM_END else { throw Failure(code: result) }
        return output
    }
}
