/// The parts of JSON's grammar (RFC 8259) both scanners share: whitespace, escapes,
/// numbers and how a byte is shown in a message.
public enum JSONText {
    /// Whether `byte` is JSON whitespace (space, tab, line feed, carriage return).
    @inlinable
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The value of a hexadecimal digit, or nil.
    @inlinable
    public static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }

    /// The text of a string's content (the bytes between its quotes): escapes decoded
    /// (`\uD83D\uDE00` surrogate pairs joined; a lone surrogate refused), UTF-8 checked.
    /// - Returns: The text, or a message saying what is wrong and the offset in `content`.
    public static func unescape(_ content: UnsafeRawBufferPointer) -> Result<String, JSONScanError> {
        // No nested functions over `position`: a captured variable costs an exclusivity
        // check at every access in a debug build, and base64 reports with their slashes
        // escaped come through here megabytes at a time.
        var out: [UInt8] = []
        out.reserveCapacity(content.count)
        let count = content.count
        var position = 0
        while position < count {
            // A run of plain bytes is copied whole.
            var end = position
            while end < count {
                let byte = content[end]
                if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                end += 1
            }
            if end > position { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: content[position..<end])) }
            position = end
            guard position < count else { break }
            let byte = content[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else { return refusal("control character inside a string", at: position) }
            guard position < count else { return refusal("a string ends inside an escape", at: position) }
            let escape = content[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(content, at: &position) else { return refusal("bad \\u escape in a string", at: position) }
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard position + 2 <= count, content[position] == UInt8(ascii: "\\"), content[position + 1] == UInt8(ascii: "u") else {
                        return refusal("a lone surrogate in a \\u escape", at: position)
                    }
                    position += 2
                    guard let low = hex4(content, at: &position), (0xDC00..<0xE000).contains(low) else {
                        return refusal("a lone surrogate in a \\u escape", at: position)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let value = Unicode.Scalar(scalar) else { return refusal("a lone surrogate in a \\u escape", at: position) }
                UTF8.encode(value) { out.append($0) }
            default:
                return refusal("bad escape '\\\(describe(escape))' in a string", at: position)
            }
        }
        guard let text = out.withUnsafeBytes({ String(utf8Validating: $0) }) else { return refusal("string is not valid UTF-8", at: position) }
        return .success(text)
    }

    /// A refusal of ``unescape(_:)`` at `offset`.
    private static func refusal(_ message: String, at offset: Int) -> Result<String, JSONScanError> {
        .failure(JSONScanError(offset: offset, message: message))
    }

    /// The four hexadecimal digits at `position` as a number, `position` moved past them;
    /// nil when they are not four hexadecimal digits.
    private static func hex4(_ content: UnsafeRawBufferPointer, at position: inout Int) -> UInt32? {
        guard position + 4 <= content.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = hexValue(content[position]) else { return nil }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// The length of the number at the start of `bytes` in JSON's grammar,
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, or nil when it does not
    /// start with one. What follows the number is not looked at.
    @inlinable
    public static func numberLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        // Plain loops, no nested functions: a closure over `index` cost an exclusivity
        // check per byte, and every number of a trace comes through here.
        let count = bytes.count
        var index = 0
        if index < count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        if index < count, bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            let start = index
            while index < count, bytes[index] &- 0x30 < 10 { index += 1 }
            guard index > start else { return nil }
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < count, bytes[index] &- 0x30 < 10 { index += 1 }
            guard index > start else { return nil }
        }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let start = index
            while index < count, bytes[index] &- 0x30 < 10 { index += 1 }
            guard index > start else { return nil }
        }
        return index
    }

    /// A byte as a message shows it: the character when printable ASCII, else `byte 0xNN`.
    public static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "byte 0x" + String(byte, radix: 16)
    }

    /// `text` as a JSON string literal, quotes included, escaped per Unicode scalar:
    /// `"` and `\` escaped, control characters (and DEL) as `\u00XX`, and U+2028 and U+2029 escaped
    /// too, so the literal is also safe inside JavaScript.
    public static func quote(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        out.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            default:
                if scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
                } else {
                    out.append(scalar)
                }
            }
        }
        out.append("\"")
        return String(out)
    }
}
