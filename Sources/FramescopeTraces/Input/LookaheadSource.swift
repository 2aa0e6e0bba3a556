/// A source whose first bytes can be looked at before they are read: format detection
/// (gzip's magic, CSV or JSON, a report or a trace) looks at them, and the reader that is
/// chosen then gets the same bytes. Nothing is read twice, so a pipe works like a file.
public struct LookaheadSource<Base: ByteSource>: ByteSource {
    /// The source behind the lookahead.
    public private(set) var base: Base
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var baseEnded = false

    /// A lookahead over `base`.
    public init(base: Base) { self.base = base }

    /// The next `count` bytes (fewer at the end of the input) without consuming them.
    public mutating func peek(_ count: Int) throws(TraceError) -> [UInt8] {
        if pendingStart > 0 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        if pending.count < count, !baseEnded {
            let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count - pending.count, 4096), alignment: 8)
            defer { storage.deallocate() }
            while pending.count < count {
                let read = try base.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[0..<min(storage.count, count - pending.count)]))
                if read == 0 { baseEnded = true; break }
                pending.append(contentsOf: storage[0..<read])
            }
        }
        return Array(pending[pendingStart..<min(pending.count, pendingStart + count)])
    }

    /// Hands out the looked-at bytes first, then the base's.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        let waiting = pending.count - pendingStart
        if waiting > 0 {
            let count = min(buffer.count, waiting)
            pending.withUnsafeBytes { bytes in
                buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + pendingStart, byteCount: count)
            }
            pendingStart += count
            if pendingStart == pending.count {
                pending = []
                pendingStart = 0
            }
            return count
        }
        if baseEnded { return 0 }
        return try base.read(into: buffer)
    }
}

/// A source read through a function, one chunk per call: the one concrete type the
/// readers are compiled for (``TraceReader/read(from:format:progress:note:_:)``).
struct FunctionByteSource: ByteSource {
    let readChunk: (UnsafeMutableRawBufferPointer) throws(TraceError) -> Int

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        try readChunk(buffer)
    }
}

/// A source held by reference, for ``FunctionByteSource``'s function to read and the
/// caller to take back.
final class ByteSourceBox<Source: ByteSource> {
    var source: Source
    init(_ source: Source) { self.source = source }
}
