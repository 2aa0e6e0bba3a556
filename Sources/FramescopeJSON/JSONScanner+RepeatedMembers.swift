/// One step of a path into a JSON value: an object's member or an array's element.
public enum JSONPathComponent: Hashable, Sendable {
    /// A member, by its key (escapes decoded).
    case member(String)
    /// An element, by its position from 0.
    case element(Int)
}

extension JSONScanner {
    /// The path of every member whose key appears more than once in its object, in the
    /// order met (one path per repeated key per object), or `nil` when `bytes` is not valid
    /// JSON.
    ///
    /// Parsers disagree on such objects (Foundation keeps one value, Python, `jq` and
    /// JavaScript the last), so a value checked by one reader could be read differently by
    /// another. Keys are compared after their escapes are decoded and as Swift compares
    /// strings (canonical equivalence), which is how `JSONDecoder` would key them, so
    /// `"scr\u0065en"` repeats `"screen"`.
    public static func repeatedMembers(in bytes: UnsafeRawBufferPointer) -> [[JSONPathComponent]]? {
        var scanner = JSONScanner(bytes: bytes)
        var path: [JSONPathComponent] = []
        var found: [[JSONPathComponent]] = []
        do {
            try scanner.collectRepeated(path: &path, into: &found)
            try scanner.end()
        } catch {
            return nil
        }
        return found
    }

    private mutating func collectRepeated(path: inout [JSONPathComponent], into found: inout [[JSONPathComponent]]) throws(JSONScanError) {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "{"):
            try beginObject()
            guard !isEmptyObject() else { return }
            var keys: Set<String> = []
            var reported: Set<String> = []
            repeat {
                let key = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after a key")
                if !keys.insert(key).inserted, reported.insert(key).inserted {
                    found.append(path + [.member(key)])
                }
                path.append(.member(key))
                try collectRepeated(path: &path, into: &found)
                path.removeLast()
            } while try nextMember()
        case UInt8(ascii: "["):
            try beginArray()
            guard !isEmptyArray() else { return }
            var position = 0
            repeat {
                path.append(.element(position))
                try collectRepeated(path: &path, into: &found)
                path.removeLast()
                position += 1
            } while try nextElement()
        default:
            try skipValue()
        }
    }
}

extension Array where Element == JSONPathComponent {
    /// The path as the collector names fields: `events[2].screen`.
    public var fieldPath: String {
        var text = ""
        for component in self {
            switch component {
            case let .member(key): text += (text.isEmpty ? "" : ".") + key
            case let .element(index): text += "[\(index)]"
            }
        }
        return text
    }
}
