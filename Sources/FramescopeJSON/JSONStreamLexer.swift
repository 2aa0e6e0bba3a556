/// A source of bytes read in chunks: a file, a pipe, memory.
public protocol JSONByteInput {
    /// What a read can fail with; the lexer reports its own refusals as this type too.
    associatedtype Failure: Error
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(Failure) -> Int
}

/// A pull tokenizer over a byte stream of any length, in constant memory: it refills a
/// fixed buffer from the input as it goes and counts lines for messages.
///
/// The grammar is ``JSONScanner``'s (RFC 8259, through ``JSONText``); strings are limited
/// to ``maximumStringBytes`` so a hostile file cannot make one token large. Refusals are
/// made by the `refusal` function given at creation (a message and the line), so they come
/// out as the caller's own error type, beside the input's read errors.
public struct JSONStreamLexer<Failure: Error> {
    @usableFromInline let storage: UnsafeMutableRawBufferPointer
    @usableFromInline var position = 0
    @usableFromInline var end = 0
    @usableFromInline var finished = false
    /// Bytes read from the input so far.
    public private(set) var totalRead = 0
    @usableFromInline var lineCount = 1
    /// The line the lexer is on, from 1.
    public var line: Int { lineCount }
    private let refusal: (_ message: String, _ line: Int) -> Failure
    /// The longest string accepted, in bytes of UTF-8 after unescaping.
    public static var maximumStringBytes: Int { 4096 }

    /// A lexer with a buffer of `bufferSize` bytes (call ``deallocate()`` when done).
    /// - Parameter refusal: Makes the error for a syntax problem: a message and a line.
    public init(bufferSize: Int = 1 << 20, refusal: @escaping (_ message: String, _ line: Int) -> Failure) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bufferSize, 16), alignment: 8)
        self.refusal = refusal
    }

    /// Frees the buffer.
    public func deallocate() { storage.deallocate() }

    /// A refusal on the current line.
    public func error(_ message: String) -> Failure {
        refusal(message, line)
    }

    /// The next byte without consuming it, or `nil` at the end of the input. A NUL byte
    /// (never valid JSON text) is refused as the sign of a binary file.
    @inlinable
    public mutating func peekByte<Input: JSONByteInput>(_ input: inout Input) throws(Failure) -> UInt8? where Input.Failure == Failure {
        if position == end { return try refill(&input) }
        return storage[position]
    }

    @usableFromInline
    mutating func refill<Input: JSONByteInput>(_ input: inout Input) throws(Failure) -> UInt8? where Input.Failure == Failure {
        guard !finished else { return nil }
        let count = try input.read(into: storage)
        if count == 0 { finished = true; return nil }
        if Self.containsZero(UnsafeRawBufferPointer(rebasing: storage[0..<count])) {
            throw error("contains NUL bytes: this is a binary file, not JSON text")
        }
        position = 0
        end = count
        totalRead += count
        return storage[0]
    }

    /// Whether `bytes` holds a 0, eight bytes at a time (a word has a zero byte when
    /// `(w − 0x01…01) & ~w & 0x80…80` is not zero).
    static func containsZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] == 0 { return true }
            index += 1
        }
        return false
    }

    /// Consumes and returns the next byte (counting lines), or `nil` at the end.
    @inlinable
    public mutating func nextByte<Input: JSONByteInput>(_ input: inout Input) throws(Failure) -> UInt8? where Input.Failure == Failure {
        guard let byte = try peekByte(&input) else { return nil }
        position += 1
        if byte == 0x0A { lineCount += 1 }
        return byte
    }

    /// Consumes white space (counting lines).
    @inlinable
    public mutating func skipWhitespace<Input: JSONByteInput>(_ input: inout Input) throws(Failure) where Input.Failure == Failure {
        while let byte = try peekByte(&input), JSONText.isWhitespace(byte) {
            position += 1
            if byte == 0x0A { lineCount += 1 }
        }
    }

    /// Skips a UTF-8 byte order mark at the start; refuses the first bytes of one that is not.
    public mutating func skipByteOrderMark<Input: JSONByteInput>(_ input: inout Input) throws(Failure) where Input.Failure == Failure {
        if try peekByte(&input) == 0xEF {
            for expected: UInt8 in [0xEF, 0xBB, 0xBF] {
                guard try nextByte(&input) == expected else { throw error("not UTF-8 text: this is a binary file, not JSON") }
            }
        }
    }

    /// Reads `byte` after any whitespace, or refuses naming `what` was expected.
    @inlinable
    public mutating func expect<Input: JSONByteInput>(_ byte: UInt8, _ input: inout Input, _ what: String) throws(Failure) where Input.Failure == Failure {
        try skipWhitespace(&input)
        guard let found = try nextByte(&input) else { throw error("file ends where \(what) was expected") }
        guard found == byte else { throw error("expected \(what), found '\(JSONText.describe(found))'") }
    }

    /// Reads `byte` if it comes next after any whitespace.
    @inlinable
    public mutating func consumeIf<Input: JSONByteInput>(_ byte: UInt8, _ input: inout Input) throws(Failure) -> Bool where Input.Failure == Failure {
        try skipWhitespace(&input)
        if try peekByte(&input) == byte { _ = try nextByte(&input); return true }
        return false
    }

    /// After a member or element: `true` on ',' (another follows), `false` on `closing`.
    @inlinable
    public mutating func separator<Input: JSONByteInput>(closing: UInt8, _ input: inout Input) throws(Failure) -> Bool where Input.Failure == Failure {
        try skipWhitespace(&input)
        guard let byte = try nextByte(&input) else { throw error("file ends inside a JSON \(closing == UInt8(ascii: "]") ? "list" : "object")") }
        if byte == UInt8(ascii: ",") { return true }
        if byte == closing { return false }
        throw error("expected ',' or '\(JSONText.describe(closing))', found '\(JSONText.describe(byte))'")
    }

    /// Whether only whitespace is left.
    @inlinable
    public mutating func atEnd<Input: JSONByteInput>(_ input: inout Input) throws(Failure) -> Bool where Input.Failure == Failure {
        try skipWhitespace(&input)
        return try peekByte(&input) == nil
    }

    /// Consumes `null` if it comes next.
    @inlinable
    public mutating func null<Input: JSONByteInput>(_ input: inout Input) throws(Failure) -> Bool where Input.Failure == Failure {
        try skipWhitespace(&input)
        guard try peekByte(&input) == UInt8(ascii: "n") else { return false }
        try literal("null", &input)
        return true
    }

    @inlinable
    mutating func literal<Input: JSONByteInput>(_ word: StaticString, _ input: inout Input) throws(Failure) where Input.Failure == Failure {
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard try nextByte(&input) == expected else { throw error("expected '\(word)'") }
        }
    }

    /// A number in JSON's grammar, as a `Double` (correctly rounded).
    /// - Parameter parse: Converts the number's bytes (already checked against the
    ///   grammar); nil refuses them.
    @inlinable
    public mutating func number<Input: JSONByteInput>(
        _ input: inout Input, parse: (UnsafeRawBufferPointer) -> Double?
    ) throws(Failure) -> Double where Input.Failure == Failure {
        try skipWhitespace(&input)
        var digits: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        while let byte = try peekByte(&input), byte &- 0x30 < 10 || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e") {
            guard count < 64 else { throw error("number is too long") }
            withUnsafeMutableBytes(of: &digits) { $0[count] = byte }
            count += 1
            position += 1
        }
        guard count > 0 else {
            let found = try peekByte(&input).map(JSONText.describe) ?? "end of file"
            throw error("expected a number, found '\(found)'")
        }
        let value: Double? = withUnsafeBytes(of: &digits) { raw in
            let written = UnsafeRawBufferPointer(rebasing: raw[0..<count])
            guard JSONText.numberLength(written) == count else { return nil }
            return parse(written)
        }
        guard let value else {
            throw error("'\(withUnsafeBytes(of: &digits) { String(decoding: $0[0..<count], as: UTF8.self) })' is not a number")
        }
        return value
    }

    /// A string, escapes decoded (``JSONText/unescape(_:)``), at most ``maximumStringBytes``.
    @inlinable
    public mutating func string<Input: JSONByteInput>(_ input: inout Input) throws(Failure) -> String where Input.Failure == Failure {
        try skipWhitespace(&input)
        guard try nextByte(&input) == UInt8(ascii: "\"") else { throw error("expected a string in double quotes") }
        var content: [UInt8] = []
        var escaped = false
        while true {
            guard let byte = try nextByte(&input) else { throw error("file ends inside a string") }
            if byte == UInt8(ascii: "\""), !escaped { break }
            if byte < 0x20 { throw error("control character inside a string") }
            escaped = byte == UInt8(ascii: "\\") && !escaped
            content.append(byte)
            // Escapes only shorten a string: six bytes of escape give at most four of UTF-8.
            if content.count > 6 * Self.maximumStringBytes { throw error("string longer than \(Self.maximumStringBytes) bytes") }
        }
        let text = content.withUnsafeBytes { JSONText.unescape($0) }
        switch text {
        case let .success(text):
            guard text.utf8.count <= Self.maximumStringBytes else { throw error("string longer than \(Self.maximumStringBytes) bytes") }
            return text
        case let .failure(problem):
            throw error(problem.message)
        }
    }

    /// Reads a string and answers which of `candidates` it equals (its index), or `nil` for
    /// none, without making a `String` when the string has no escapes and lies in the
    /// buffer (a key or an event name in a trace: almost always). Checked as
    /// ``string(_:)`` checks.
    @inlinable
    public mutating func matchString<Input: JSONByteInput>(_ input: inout Input, among candidates: [StaticString]) throws(Failure) -> Int? where Input.Failure == Failure {
        try skipWhitespace(&input)
        if try peekByte(&input) == UInt8(ascii: "\""), position + 1 < end {
            var cursor = position + 1
            while cursor < end {
                let byte = storage[cursor]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                cursor += 1
            }
            if cursor < end, storage[cursor] == UInt8(ascii: "\"") {
                let start = position + 1
                let length = cursor - start
                position = cursor + 1
                let storage = storage
                for (index, candidate) in candidates.enumerated() where candidate.utf8CodeUnitCount == length {
                    let same = candidate.withUTF8Buffer { bytes in
                        for offset in 0..<length where storage[start + offset] != bytes[offset] { return false }
                        return true
                    }
                    if same { return index }
                }
                guard length <= 6 * Self.maximumStringBytes else { throw error("string longer than \(Self.maximumStringBytes) bytes") }
                // Not a candidate: still checked as text, as string(_:) would check it.
                var ascii = true
                for offset in start..<cursor where storage[offset] >= 0x80 {
                    ascii = false
                    break
                }
                guard ascii || String(utf8Validating: UnsafeRawBufferPointer(rebasing: storage[start..<cursor])) != nil else {
                    throw error("string is not valid UTF-8")
                }
                return nil
            }
        }
        let text = try string(&input)
        return candidates.firstIndex { candidate in candidate.withUTF8Buffer { text.utf8.elementsEqual($0) } }
    }

    /// Skips a string of any length without keeping it (a screenshot's base64 in a trace):
    /// control characters and escapes are checked as ``string(_:)`` checks them; the bytes
    /// between are not decoded.
    @inlinable
    public mutating func skipString<Input: JSONByteInput>(_ input: inout Input) throws(Failure) where Input.Failure == Failure {
        try skipWhitespace(&input)
        guard try nextByte(&input) == UInt8(ascii: "\"") else { throw error("expected a string in double quotes") }
        while true {
            // The common bytes, without a call per byte.
            while position < end {
                let byte = storage[position]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                position += 1
            }
            guard let byte = try nextByte(&input) else { throw error("file ends inside a string") }
            if byte == UInt8(ascii: "\"") { return }
            if byte < 0x20 { throw error("control character inside a string") }
            if byte == UInt8(ascii: "\\") {
                guard let escape = try nextByte(&input) else { throw error("file ends inside a string") }
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let digit = try nextByte(&input), digit &- 0x30 < 10 || (digit | 0x20) &- 0x61 < 6 else {
                            throw error("\\u must be followed by four hexadecimal digits")
                        }
                    }
                default:
                    throw error("'\\\(JSONText.describe(escape))' is not a JSON escape")
                }
            }
        }
    }

    /// Skips any JSON value without keeping it, its syntax checked as the readers check it.
    ///
    /// The skip is a loop, not a recursion: each open object or array costs one bit, so a
    /// part a reader does not read may be skipped at any depth (`maximumDepth: .max`)
    /// without a nesting limit refusing the whole document. A 16 MiB body of `[` holds
    /// 2 MiB of bits; a MetricKit crash diagnostic's call-stack tree 300 frames deep, 600
    /// levels, holds 10 words.
    /// - Parameter maximumDepth: The most containers a value may sit inside; deeper is
    ///   refused ("nested deeper than …"). ``JSONScanner/maximumDepth`` (512) by default,
    ///   the limit of every reader that builds what it reads.
    /// - Complexity: O(*n*) in the bytes skipped.
    @inlinable
    public mutating func skipValue<Input: JSONByteInput>(
        _ input: inout Input, maximumDepth: Int = JSONScanner.maximumDepth
    ) throws(Failure) where Input.Failure == Failure {
        var open = OpenContainers()
        while true {
            // A value starts here, inside `open.count` containers.
            guard open.count < maximumDepth else { throw error("nested deeper than \(maximumDepth)") }
            try skipWhitespace(&input)
            guard let byte = try peekByte(&input) else { throw error("file ends where a value was expected") }
            switch byte {
            case UInt8(ascii: "\""): try skipString(&input)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                _ = try nextByte(&input)
                let isObject = byte == UInt8(ascii: "{")
                if try !consumeIf(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"), &input) {
                    open.push(isObject: isObject)
                    if isObject {
                        try skipString(&input)
                        try expect(UInt8(ascii: ":"), &input, "':' after a key")
                    }
                    continue
                }
            case UInt8(ascii: "t"): try literal("true", &input)
            case UInt8(ascii: "f"): try literal("false", &input)
            case UInt8(ascii: "n"): try literal("null", &input)
            default: _ = try number(&input) { _ in 0 }
            }
            // A value ended: close the containers that end with it, up to the next element.
            while true {
                guard let isObject = open.innermostIsObject else { return }
                if try separator(closing: isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"), &input) {
                    if isObject {
                        try skipString(&input)
                        try expect(UInt8(ascii: ":"), &input, "':' after a key")
                    }
                    break
                }
                open.pop()
            }
        }
    }
}

/// The containers a skip is inside, innermost last, one bit each (1 for an object).
@usableFromInline
struct OpenContainers {
    @usableFromInline var words: [UInt64] = []
    /// How many are open.
    @usableFromInline var count = 0

    @inlinable init() {}

    /// Whether the innermost is an object; nil when none is open.
    @inlinable var innermostIsObject: Bool? {
        guard count > 0 else { return nil }
        let last = count - 1
        return words[last >> 6] >> UInt64(last & 63) & 1 == 1
    }

    @inlinable mutating func push(isObject: Bool) {
        if count & 63 == 0 { words.append(0) }
        if isObject { words[count >> 6] |= 1 << UInt64(count & 63) }
        count += 1
    }

    @inlinable mutating func pop() {
        count -= 1
        words[count >> 6] &= ~(1 << UInt64(count & 63))
        if count & 63 == 0 { words.removeLast() }
    }
}
