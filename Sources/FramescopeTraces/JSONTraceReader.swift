import FramescopeCore

/// Reads Framescope's JSON trace format as a stream, in constant memory:
///
/// ```json
/// {"refreshRate": 60, "ticks": [{"timestamp": 1.0, "targetTimestamp": 1.0167, "segment": "scroll 1"}, …]}
/// ```
///
/// `refreshRate` (Hz) must come before `ticks` to apply to ticks without a target.
/// `targetTimestamp` and `segment` may be missing or `null`. Keys the format does
/// not define are skipped, so newer writers stay readable. Any syntax error stops the
/// read with a ``TraceError`` naming the line.
struct JSONTraceReader {
    let file: String

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var lexer = JSONLexer(file: file)
        defer { lexer.deallocate() }
        try lexer.skipByteOrderMark(&source)
        try lexer.expect(UInt8(ascii: "{"), &source, "a JSON object")
        var sawTicks = false
        var currentSegment: String? = nil
        if try !lexer.consumeIf(UInt8(ascii: "}"), &source) {
            repeat {
                let key = try lexer.string(&source)
                try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                switch key {
                case "refreshRate":
                    if try !lexer.null(&source) {
                        let rate = try lexer.number(&source)
                        guard rate.isFinite, rate > 0 else {
                            throw lexer.error("refreshRate \(rate) must be a positive number of Hz")
                        }
                        try handle(.refreshRate(rate), lexer.line)
                    }
                case "ticks":
                    sawTicks = true
                    try lexer.expect(UInt8(ascii: "["), &source, "'[' to start the list of ticks")
                    if try !lexer.consumeIf(UInt8(ascii: "]"), &source) {
                        var reported = 0
                        repeat {
                            try readTick(&lexer, &source, &currentSegment, handle)
                            if lexer.totalRead != reported { reported = lexer.totalRead; progress(reported) }
                        } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
                    }
                default:
                    try lexer.skipValue(&source)
                }
            } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        }
        guard try lexer.atEnd(&source) else { throw lexer.error("unexpected content after the trace object") }
        guard sawTicks else { throw lexer.error("no \"ticks\" list in the trace object") }
    }

    private func readTick<Source: ByteSource>(
        _ lexer: inout JSONLexer, _ source: inout Source, _ currentSegment: inout String?,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        try lexer.expect(UInt8(ascii: "{"), &source, "'{' to start a tick")
        let line = lexer.line
        var timestamp: Double?
        var target: Double?
        var segment: String?
        if try !lexer.consumeIf(UInt8(ascii: "}"), &source) {
            repeat {
                let key = try lexer.string(&source)
                try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                switch key {
                case "timestamp":
                    timestamp = try lexer.number(&source)
                case "targetTimestamp":
                    target = try lexer.null(&source) ? nil : try lexer.number(&source)
                case "segment":
                    segment = try lexer.null(&source) ? nil : try lexer.string(&source)
                    if segment == "" { segment = nil }
                default:
                    try lexer.skipValue(&source)
                }
            } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        }
        guard let timestamp else {
            throw TraceError(kind: .data, file: file, line: line, message: "tick has no \"timestamp\"")
        }
        if let target, timestamp.isFinite, target.isFinite, target <= timestamp {
            throw TraceError(kind: .data, file: file, line: line, message: "targetTimestamp \(target) is not after timestamp \(timestamp): the refresh interval would be negative or zero")
        }
        if segment != currentSegment {
            currentSegment = segment
            try handle(.segment(segment), line)
        }
        try handle(.tick(FrameTick(timestamp: timestamp, targetTimestamp: target)), line)
    }
}

/// A pull tokenizer over a byte stream, refilling a fixed buffer as it goes and
/// counting lines for error messages.
struct JSONLexer {
    private let storage: UnsafeMutableRawBufferPointer
    private var position = 0
    private var end = 0
    private var finished = false
    /// Bytes read from the source so far.
    private(set) var totalRead = 0
    let file: String
    private(set) var line = 1

    init(file: String) {
        self.file = file
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
    }

    func deallocate() { storage.deallocate() }

    func error(_ message: String) -> TraceError {
        TraceError(kind: .data, file: file, line: line, message: message)
    }

    /// The next byte without consuming it, or `nil` at the end of the input.
    private mutating func peekByte<Source: ByteSource>(_ source: inout Source) throws(TraceError) -> UInt8? {
        if position == end {
            guard !finished else { return nil }
            let count = try source.read(into: storage)
            if count == 0 { finished = true; return nil }
            if storage[0..<count].contains(0) {
                throw error("contains NUL bytes: this is a binary file, not a JSON trace")
            }
            position = 0
            end = count
            totalRead += count
        }
        return storage[position]
    }

    private mutating func nextByte<Source: ByteSource>(_ source: inout Source) throws(TraceError) -> UInt8? {
        guard let byte = try peekByte(&source) else { return nil }
        position += 1
        if byte == UInt8(ascii: "\n") { line += 1 }
        return byte
    }

    private mutating func skipWhitespace<Source: ByteSource>(_ source: inout Source) throws(TraceError) {
        while let byte = try peekByte(&source), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            _ = try nextByte(&source)
        }
    }

    mutating func skipByteOrderMark<Source: ByteSource>(_ source: inout Source) throws(TraceError) {
        if try peekByte(&source) == 0xEF {
            for expected: UInt8 in [0xEF, 0xBB, 0xBF] {
                guard try nextByte(&source) == expected else { throw error("not UTF-8 text: this is a binary file, not a JSON trace") }
            }
        }
    }

    mutating func expect<Source: ByteSource>(_ byte: UInt8, _ source: inout Source, _ what: String) throws(TraceError) {
        try skipWhitespace(&source)
        guard let found = try nextByte(&source) else { throw error("file ends where \(what) was expected") }
        guard found == byte else { throw error("expected \(what), found '\(Self.describe(found))'") }
    }

    mutating func consumeIf<Source: ByteSource>(_ byte: UInt8, _ source: inout Source) throws(TraceError) -> Bool {
        try skipWhitespace(&source)
        if try peekByte(&source) == byte { _ = try nextByte(&source); return true }
        return false
    }

    /// After a member or element: `true` on ',' (another follows), `false` on `closing`.
    mutating func separator<Source: ByteSource>(closing: UInt8, _ source: inout Source) throws(TraceError) -> Bool {
        try skipWhitespace(&source)
        guard let byte = try nextByte(&source) else { throw error("file ends inside a JSON \(closing == UInt8(ascii: "]") ? "list" : "object")") }
        if byte == UInt8(ascii: ",") { return true }
        if byte == closing { return false }
        throw error("expected ',' or '\(Self.describe(closing))', found '\(Self.describe(byte))'")
    }

    mutating func atEnd<Source: ByteSource>(_ source: inout Source) throws(TraceError) -> Bool {
        try skipWhitespace(&source)
        return try peekByte(&source) == nil
    }

    /// Consumes `null` if it comes next.
    mutating func null<Source: ByteSource>(_ source: inout Source) throws(TraceError) -> Bool {
        try skipWhitespace(&source)
        guard try peekByte(&source) == UInt8(ascii: "n") else { return false }
        try literal("null", &source)
        return true
    }

    private mutating func literal<Source: ByteSource>(_ word: StaticString, _ source: inout Source) throws(TraceError) {
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard try nextByte(&source) == expected else { throw error("expected '\(word)'") }
        }
    }

    mutating func number<Source: ByteSource>(_ source: inout Source) throws(TraceError) -> Double {
        try skipWhitespace(&source)
        var digits: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        while let byte = try peekByte(&source), (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e") {
            guard count < 64 else { throw error("number is too long") }
            withUnsafeMutableBytes(of: &digits) { $0[count] = byte }
            count += 1
            _ = try nextByte(&source)
        }
        guard count > 0 else {
            let found = try peekByte(&source).map(Self.describe) ?? "end of file"
            throw error("expected a number, found '\(found)'")
        }
        let value = withUnsafeBytes(of: &digits) { parseDouble($0, 0, count) }
        guard let value else { throw error("'\(withUnsafeBytes(of: &digits) { String(decoding: $0[0..<count], as: UTF8.self) })' is not a number") }
        return value
    }

    mutating func string<Source: ByteSource>(_ source: inout Source) throws(TraceError) -> String {
        try skipWhitespace(&source)
        guard try nextByte(&source) == UInt8(ascii: "\"") else { throw error("expected a string in double quotes") }
        var bytes: [UInt8] = []
        while true {
            guard let byte = try nextByte(&source) else { throw error("file ends inside a string") }
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw error("control character inside a string") }
            if byte == UInt8(ascii: "\\") {
                guard let escaped = try nextByte(&source) else { throw error("file ends inside a string") }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escaped)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar: UInt32 = 0
                    for _ in 0..<4 {
                        guard let hex = try nextByte(&source), let digit = Self.hexValue(hex) else { throw error("bad \\u escape in a string") }
                        scalar = scalar << 4 | digit
                    }
                    let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                    bytes.append(contentsOf: Array(String(character).utf8))
                default: throw error("bad escape '\\\(Self.describe(escaped))' in a string")
                }
            } else {
                bytes.append(byte)
            }
            if bytes.count > 4096 { throw error("string longer than 4096 bytes") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return text
    }

    /// Skips any JSON value, however nested.
    mutating func skipValue<Source: ByteSource>(_ source: inout Source) throws(TraceError) {
        try skipWhitespace(&source)
        guard let byte = try peekByte(&source) else { throw error("file ends where a value was expected") }
        switch byte {
        case UInt8(ascii: "\""): _ = try string(&source)
        case UInt8(ascii: "{"):
            _ = try nextByte(&source)
            if try !consumeIf(UInt8(ascii: "}"), &source) {
                repeat {
                    _ = try string(&source)
                    try expect(UInt8(ascii: ":"), &source, "':' after a key")
                    try skipValue(&source)
                } while try separator(closing: UInt8(ascii: "}"), &source)
            }
        case UInt8(ascii: "["):
            _ = try nextByte(&source)
            if try !consumeIf(UInt8(ascii: "]"), &source) {
                repeat { try skipValue(&source) } while try separator(closing: UInt8(ascii: "]"), &source)
            }
        case UInt8(ascii: "t"): try literal("true", &source)
        case UInt8(ascii: "f"): try literal("false", &source)
        case UInt8(ascii: "n"): try literal("null", &source)
        default: _ = try number(&source)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x41...0x46: return UInt32(byte - 0x41 + 10)
        case 0x61...0x66: return UInt32(byte - 0x61 + 10)
        default: return nil
        }
    }

    static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "byte 0x" + String(byte, radix: 16)
    }
}
