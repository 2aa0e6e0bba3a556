/// Splits a byte stream into lines for the line-oriented readers (SurfaceFlinger latency,
/// gfxinfo), in bounded memory.
struct LineSplitter {
    /// The file's name, for errors.
    let file: String
    /// The longest line accepted, in bytes, without its end.
    let maximumLineBytes: Int
    /// The format's name for the error on an over-long line ("SurfaceFlinger latency output").
    let formatName: String

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
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { buffer.deallocate() }
        var line: [UInt8] = []
        line.reserveCapacity(min(maximumLineBytes, 4096))
        var number = 0
        var total = 0
        while true {
            let count = try source.read(into: buffer)
            if count == 0 { break }
            total += count
            for byte in buffer[0..<count] {
                if byte == UInt8(ascii: "\n") {
                    number += 1
                    try handle(line, number)
                    line.removeAll(keepingCapacity: true)
                } else {
                    guard line.count < maximumLineBytes else {
                        throw TraceError(kind: .data, file: file, line: number + 1, message: "line longer than \(maximumLineBytes) bytes: not \(formatName)")
                    }
                    line.append(byte)
                }
            }
            progress(total)
        }
        if !line.isEmpty {
            number += 1
            try handle(line, number)
        }
    }
}
