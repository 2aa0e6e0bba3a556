/// A strict, forward-only JSON scanner over bytes in memory (a request body): RFC 8259's
/// grammar, UTF-8 checked, nesting bounded, without building a tree.
///
/// Every method leaves ``index`` just after what it read and throws ``JSONScanError`` on
/// anything it does not accept; a caller reads the structure it expects and skips the
/// rest with ``skipValue()``. Keys are returned as byte ranges (``key()``) and compared
/// with ``matches(_:_:)``, so reading a known object allocates nothing for its keys.
public struct JSONScanner {
    /// The input.
    public let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    public var index = 0
    /// How many objects and arrays are open.
    public private(set) var depth = 0
    /// Deeper nesting is refused (Foundation's `JSONDecoder` refuses deeper than 512 itself).
    public static let maximumDepth = 512

    /// A scanner at the start of `bytes`, which must outlive it.
    public init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// A refusal at the current offset.
    public func error(_ message: String) -> JSONScanError {
        JSONScanError(offset: index, message: message)
    }

    // MARK: Objects and arrays

    /// Reads `{`, counting the nesting.
    public mutating func beginObject() throws(JSONScanError) {
        skipWhitespace()
        try expect(UInt8(ascii: "{"), "'{'")
        try enter()
    }

    /// Reads `}` if it comes next (an empty object) and then returns true.
    public mutating func isEmptyObject() -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "}") else { return false }
        index += 1
        depth -= 1
        return true
    }

    /// After a member's value: true after `,`, false after the closing `}`.
    public mutating func nextMember() throws(JSONScanError) -> Bool {
        try separator(closing: UInt8(ascii: "}"))
    }

    /// Reads `[`, counting the nesting.
    public mutating func beginArray() throws(JSONScanError) {
        skipWhitespace()
        try expect(UInt8(ascii: "["), "'['")
        try enter()
    }

    /// Reads `]` if it comes next (an empty array) and then returns true.
    public mutating func isEmptyArray() -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "]") else { return false }
        index += 1
        depth -= 1
        return true
    }

    /// After an element: true after `,`, false after the closing `]`.
    public mutating func nextElement() throws(JSONScanError) -> Bool {
        try separator(closing: UInt8(ascii: "]"))
    }

    /// A member's key up to and including the `:`, as the range of its bytes between the
    /// quotes: printable ASCII without escapes. Any other key is refused, so that an
    /// escaped spelling of a known key cannot slip past ``matches(_:_:)``.
    public mutating func key() throws(JSONScanError) -> Range<Int> {
        skipWhitespace()
        try expect(UInt8(ascii: "\""), "a key in double quotes")
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { throw error("a key with an escape or a non-ASCII byte") }
            index += 1
        }
        guard index < bytes.count else { throw error("the input ends inside a key") }
        let range = start..<index
        index += 1
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "':' after a key")
        return range
    }

    /// Whether the key at `range` is `name`.
    public func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { text in
            for offset in 0..<text.count where bytes[range.lowerBound + offset] != text[offset] { return false }
            return true
        }
    }

    // MARK: Values

    /// A string, with its escapes decoded and its UTF-8 checked.
    public mutating func string() throws(JSONScanError) -> String {
        skipWhitespace()
        try expect(UInt8(ascii: "\""), "a string in double quotes")
        let start = index
        var plainASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20 else { throw error("control character inside a string") }
            if byte == UInt8(ascii: "\\") {
                plainASCII = false
                index += 2
                continue
            }
            if byte >= 0x80 { plainASCII = false }
            index += 1
        }
        guard index < bytes.count else { throw error("the input ends inside a string") }
        let content = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        index += 1
        if plainASCII { return String(decoding: content, as: UTF8.self) }
        switch JSONText.unescape(content) {
        case let .success(text): return text
        case let .failure(problem): throw JSONScanError(offset: start + problem.offset, message: problem.message)
        }
    }

    /// `null` if it comes next (read, true); otherwise nothing is read (false).
    public mutating func null() throws(JSONScanError) -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// `true` or `false`.
    public mutating func boolean() throws(JSONScanError) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw error("expected true or false")
        }
    }

    /// A number as `JSONDecoder` reads a `Double`, correctly rounded; out of `Double`'s
    /// range, or a non-zero number that underflows to zero (`1e-400`), is refused.
    public mutating func double() throws(JSONScanError) -> Double {
        let range = try number()
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw JSONScanError(offset: range.lowerBound, message: "number out of range") }
        if value == 0 {
            var position = range.lowerBound
            while position < range.upperBound, bytes[position] | 0x20 != UInt8(ascii: "e") {
                if bytes[position] >= UInt8(ascii: "1"), bytes[position] <= UInt8(ascii: "9") {
                    throw JSONScanError(offset: range.lowerBound, message: "number underflows to zero")
                }
                position += 1
            }
        }
        return value
    }

    /// A number written as a whole number within `Int`'s range (`-0` is 0); a fraction or
    /// an exponent is refused.
    public mutating func integer() throws(JSONScanError) -> Int {
        let range = try number()
        var position = range.lowerBound
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value = 0
        while position < range.upperBound {
            let byte = bytes[position]
            guard byte &- 0x30 < 10 else { throw JSONScanError(offset: range.lowerBound, message: "expected a whole number") }
            let digit = Int(byte - 0x30)
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowTimes, !overflowSum else { throw JSONScanError(offset: range.lowerBound, message: "whole number out of range") }
            value = sum
            position += 1
        }
        return value
    }

    /// The bytes of a number in JSON's grammar (``JSONText/numberLength(_:)``).
    public mutating func number() throws(JSONScanError) -> Range<Int> {
        skipWhitespace()
        let start = index
        guard let length = JSONText.numberLength(UnsafeRawBufferPointer(rebasing: bytes[index...])) else {
            throw error(index < bytes.count ? "expected a value, found '\(JSONText.describe(bytes[index]))'" : "the input ends where a value was expected")
        }
        index += length
        return start..<index
    }

    /// Checks and reads any JSON value without keeping it.
    public mutating func skipValue() throws(JSONScanError) {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "{"):
            try beginObject()
            if !isEmptyObject() {
                repeat {
                    _ = try string()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"), "':' after a key")
                    try skipValue()
                } while try nextMember()
            }
        case UInt8(ascii: "["):
            try beginArray()
            if !isEmptyArray() {
                repeat { try skipValue() } while try nextElement()
            }
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try number()
        }
    }

    /// Reads only whitespace to the end of the input; refuses anything else.
    public mutating func end() throws(JSONScanError) {
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected content after the JSON value") }
    }

    // MARK: Bytes

    /// The next byte, or 0 at the end (never valid where a byte is expected).
    @inlinable
    public func peek() -> UInt8 {
        index < bytes.count ? bytes[index] : 0
    }

    /// Reads `byte`, or refuses naming `what` was expected.
    public mutating func expect(_ byte: UInt8, _ what: @autoclosure () -> String) throws(JSONScanError) {
        guard peek() == byte else {
            throw error(index < bytes.count ? "expected \(what()), found '\(JSONText.describe(bytes[index]))'" : "the input ends where \(what()) was expected")
        }
        index += 1
    }

    /// Skips spaces, tabs and line breaks.
    @inlinable
    public mutating func skipWhitespace() {
        while index < bytes.count, JSONText.isWhitespace(bytes[index]) { index += 1 }
    }

    private mutating func literal(_ word: StaticString) throws(JSONScanError) {
        let count = word.utf8CodeUnitCount
        let start = index
        let same = start + count <= bytes.count && word.withUTF8Buffer { text in
            (0..<text.count).allSatisfy { bytes[start + $0] == text[$0] }
        }
        guard same else { throw error("expected '\(word)'") }
        index += count
    }

    private mutating func enter() throws(JSONScanError) {
        guard depth < Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth)") }
        depth += 1
    }

    private mutating func separator(closing: UInt8) throws(JSONScanError) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: ","):
            index += 1
            return true
        case closing:
            index += 1
            depth -= 1
            return false
        default:
            throw error(index < bytes.count
                ? "expected ',' or '\(JSONText.describe(closing))', found '\(JSONText.describe(bytes[index]))'"
                : "the input ends inside a JSON \(closing == UInt8(ascii: "]") ? "array" : "object")")
        }
    }
}

extension JSONScanner {
    /// The byte ranges of the elements of the top-level object's array member `name`, in
    /// order, checking the whole input's syntax on the way; nil when the input is not an
    /// object, has no such member written plainly, the member is not an array, or any of
    /// it is not valid JSON. Used to keep each element's bytes exactly as sent.
    public static func elementRanges(ofMember name: StaticString, in bytes: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var scanner = JSONScanner(bytes: bytes)
        var found: [Range<Int>]?
        do {
            try scanner.beginObject()
            if !scanner.isEmptyObject() {
                repeat {
                    let key = try scanner.key()
                    guard found == nil, scanner.matches(key, name) else {
                        try scanner.skipValue()
                        continue
                    }
                    try scanner.beginArray()
                    var ranges: [Range<Int>] = []
                    if !scanner.isEmptyArray() {
                        repeat {
                            scanner.skipWhitespace()
                            let start = scanner.index
                            try scanner.skipValue()
                            ranges.append(start..<scanner.index)
                        } while try scanner.nextElement()
                    }
                    found = ranges
                } while try scanner.nextMember()
            }
            try scanner.end()
        } catch {
            return nil
        }
        return found
    }
}
