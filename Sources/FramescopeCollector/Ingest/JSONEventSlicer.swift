/// Finds the bytes of each element of a JSON body's top-level `"events"` array, so the
/// collector can store each accepted event exactly as it was sent instead of encoding it
/// again (which cost more CPU than decoding it).
///
/// A single forward scan that tracks strings (with escapes) and nesting; it does not
/// validate the JSON, which `JSONDecoder` has already done. Returns `nil` when the body
/// is not shaped as expected (no `"events"` key written plainly, or not an array), and
/// the caller then encodes the events itself.
enum JSONEventSlicer {
    /// Byte ranges of the `"events"` array's elements, in order.
    static func eventRanges(in bytes: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var index = 0
        let count = bytes.count
        func skipWhitespace() {
            while index < count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }
        /// Moves past the string that starts at `index` (a quote); false if unterminated.
        func skipString() -> Bool {
            index += 1
            while index < count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): index += 1; return true
                default: index += 1
                }
            }
            return false
        }
        /// Moves past the value that starts at `index`; false on malformed input.
        func skipValue() -> Bool {
            guard index < count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard skipString() else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { index += 1; return true }
                    default:
                        break
                    }
                    index += 1
                }
                return false
            default:
                while index < count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
                return true
            }
        }
        let key = Array("\"events\"".utf8)
        skipWhitespace()
        guard index < count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        while true {
            skipWhitespace()
            guard index < count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = index
            guard skipString() else { return nil }
            let isEvents = index - keyStart == key.count && (0..<key.count).allSatisfy { bytes[keyStart + $0] == key[$0] }
            skipWhitespace()
            guard index < count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            if isEvents {
                guard index < count, bytes[index] == UInt8(ascii: "[") else { return nil }
                index += 1
                var ranges: [Range<Int>] = []
                skipWhitespace()
                if index < count, bytes[index] == UInt8(ascii: "]") { return ranges }
                while true {
                    skipWhitespace()
                    let start = index
                    guard skipValue() else { return nil }
                    ranges.append(start..<index)
                    skipWhitespace()
                    guard index < count else { return nil }
                    if bytes[index] == UInt8(ascii: "]") { return ranges }
                    guard bytes[index] == UInt8(ascii: ",") else { return nil }
                    index += 1
                }
            }
            guard skipValue() else { return nil }
            skipWhitespace()
            guard index < count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return nil }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }
}
