/// Parses an ASCII decimal number (`-12.5`, `3e-2`, `nan`) from `bytes[start..<end]`.
///
/// Numbers with at most 15 significant digits and a decimal exponent within ±22 —
/// every timestamp a trace holds — are converted exactly with one multiplication or
/// division (both operands are exact doubles, so the result is correctly rounded).
/// Anything else goes to the standard library's parser. Returns `nil` when the bytes
/// are not a number.
@inline(__always)
func parseDouble(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Double? {
    var index = start
    guard index < end else { return nil }
    var negative = false
    if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
    else if bytes[index] == UInt8(ascii: "+") { index += 1 }
    var mantissa: UInt64 = 0
    var digits = 0
    var exponent = 0
    var sawDigit = false
    while index < end, bytes[index] &- 48 < 10 {
        if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[index] &- 48); if mantissa != 0 { digits += 1 } } else { exponent += 1 }
        sawDigit = true
        index += 1
    }
    if index < end, bytes[index] == UInt8(ascii: ".") {
        index += 1
        while index < end, bytes[index] &- 48 < 10 {
            if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[index] &- 48); if mantissa != 0 { digits += 1 }; exponent -= 1 }
            sawDigit = true
            index += 1
        }
    }
    if sawDigit, index < end, bytes[index] | 0x20 == UInt8(ascii: "e") {
        index += 1
        var exponentNegative = false
        if index < end, bytes[index] == UInt8(ascii: "-") { exponentNegative = true; index += 1 }
        else if index < end, bytes[index] == UInt8(ascii: "+") { index += 1 }
        var written = 0
        var sawExponentDigit = false
        while index < end, bytes[index] &- 48 < 10 {
            if written < 10_000 { written = written * 10 + Int(bytes[index] &- 48) }
            sawExponentDigit = true
            index += 1
        }
        guard sawExponentDigit else { return slowParseDouble(bytes, start, end) }
        exponent += exponentNegative ? -written : written
    }
    guard sawDigit, index == end else { return slowParseDouble(bytes, start, end) }
    if digits <= 15 && exponent >= -22 && exponent <= 22 {
        var value = Double(mantissa)
        if exponent < 0 { value /= powersOfTen[-exponent] } else if exponent > 0 { value *= powersOfTen[exponent] }
        return negative ? -value : value
    }
    return slowParseDouble(bytes, start, end)
}

/// A whole buffer's bytes as a number (``parseDouble(_:_:_:)``): the parser the streaming
/// JSON readers hand their lexer.
func parseDouble(_ bytes: UnsafeRawBufferPointer) -> Double? {
    parseDouble(bytes, 0, bytes.count)
}

private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

private func slowParseDouble(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Double? {
    guard end - start <= 64 else { return nil }
    let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    return Double(text)
}
