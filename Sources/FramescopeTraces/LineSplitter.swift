#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines for the line-oriented readers (SurfaceFlinger latency,
/// gfxinfo, PresentMon), in bounded memory: one buffer of 1 MiB plus the longest line.
struct LineSplitter {
    /// The file's name, for errors.
    let file: String
    /// The longest line accepted, in bytes, without its end.
    let maximumLineBytes: Int
    /// The format's name for the error on an over-long line ("SurfaceFlinger latency output").
    let formatName: String

    /// Bytes asked of the source per read.
    static let chunkBytes = 1 << 20

    /// Calls `handle` with each line (without its `\n`; a `\r` before it is left for the
    /// caller to treat as white space) and its 1-based number; a last line without a `\n`
    /// counts too.
    /// - Throws: ``TraceError`` from the source or `handle`, or for a line longer than
    ///   ``maximumLineBytes``.
    func forEachLine<Source: ByteSource>(
        of source: inout Source,
        progress: (Int) -> Void,
        _ handle: (_ line: [UInt8], _ number: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        try forEachLineSlice(of: &source, progress: progress) { (line, number) throws(TraceError) in
            try handle(Array(line), number)
        }
    }

    /// Calls `handle` with each line as a view into the reader's buffer, valid only during
    /// the call (without its `\n`), and its 1-based number; a last line without a `\n`
    /// counts too.
    /// - Throws: ``TraceError`` from the source or `handle`, or for a line longer than
    ///   ``maximumLineBytes``.
    func forEachLineSlice<Source: ByteSource>(
        of source: inout Source,
        progress: (Int) -> Void,
        _ handle: (_ line: UnsafeRawBufferPointer, _ number: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        let capacity = Self.chunkBytes + maximumLineBytes + 1
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { storage.deallocate() }
        guard let base = storage.baseAddress else { return }
        var start = 0
        var end = 0
        var number = 0
        var total = 0
        var finished = false
        while true {
            if start < end, let found = memchr(base + start, 0x0A, end - start) {
                let stop = base.distance(to: found)
                guard stop - start <= maximumLineBytes else { throw overLong(number + 1) }
                number += 1
                try handle(UnsafeRawBufferPointer(rebasing: storage[start..<stop]), number)
                start = stop + 1
                continue
            }
            guard end - start <= maximumLineBytes else { throw overLong(number + 1) }
            if finished {
                if start < end {
                    number += 1
                    try handle(UnsafeRawBufferPointer(rebasing: storage[start..<end]), number)
                }
                return
            }
            if start > 0 {
                if end > start { (base).copyMemory(from: base + start, byteCount: end - start) }
                end -= start
                start = 0
            }
            let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[end..<min(capacity, end + Self.chunkBytes)]))
            if count == 0 {
                finished = true
            } else {
                end += count
                total += count
                progress(total)
            }
        }
    }

    private func overLong(_ line: Int) -> TraceError {
        TraceError(kind: .data, file: file, line: line, message: "line longer than \(maximumLineBytes) bytes: not \(formatName)")
    }
}
