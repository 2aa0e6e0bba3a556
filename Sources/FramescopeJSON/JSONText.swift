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
        var out: [UInt8] = []
        out.reserveCapacity(content.count)
        var position = 0
        func refuse(_ message: String) -> Result<String, JSONScanError> {
            .failure(JSONScanError(offset: position, message: message))
        }
        func hex4() -> UInt32? {
            guard position + 4 <= content.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = hexValue(content[position]) else { return nil }
                value = value << 4 | digit
                position += 1
            }
            return value
        }
        while position < content.count {
            // A run of plain bytes is copied whole: a base64 report with its slashes
            // escaped once cost an append per byte (1.7 s for 5 MB in a debug build).
            let runStart = position
            while position < content.count, content[position] != UInt8(ascii: "\\"), content[position] >= 0x20 { position += 1 }
            if position > runStart { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: content[runStart..<position])) }
            guard position < content.count else { break }
            let byte = content[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else { return refuse("control character inside a string") }
            guard position < content.count else { return refuse("a string ends inside an escape") }
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
                guard var scalar = hex4() else { return refuse("bad \\u escape in a string") }
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard position + 2 <= content.count, content[position] == UInt8(ascii: "\\"),
                          content[position + 1] == UInt8(ascii: "u") else { return refuse("a lone surrogate in a \\u escape") }
                    position += 2
                    guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return refuse("a lone surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let value = Unicode.Scalar(scalar) else { return refuse("a lone surrogate in a \\u escape") }
                UTF8.encode(value) { out.append($0) }
            default:
                return refuse("bad escape '\\\(describe(escape))' in a string")
            }
        }
        guard let text = String(utf8Validating: out) else { return refuse("string is not valid UTF-8") }
        return .success(text)
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
