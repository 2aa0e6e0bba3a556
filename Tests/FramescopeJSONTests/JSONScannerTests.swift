import Foundation
import FramescopeJSON
import Testing

/// A JSON value as both scanners read it, for comparing them with each other and with
/// Foundation.
indirect enum Value: Equatable {
    case null, bool(Bool), number(Double), string(String), array([Value]), object([String: Value])

    /// Foundation's reading of the same text.
    init?(foundation: Any) {
        switch foundation {
        case is NSNull: self = .null
        case let flag as Bool where type(of: foundation) == Bool.self: self = .bool(flag)
        case let number as NSNumber where String(cString: number.objCType) == "c": self = .bool(number.boolValue)
        case let number as NSNumber: self = .number(number.doubleValue)
        case let string as String: self = .string(string)
        case let array as [Any]:
            var values: [Value] = []
            for element in array {
                guard let value = Value(foundation: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case let dictionary as [String: Any]:
            var values: [String: Value] = [:]
            for (key, element) in dictionary {
                guard let value = Value(foundation: element) else { return nil }
                values[key] = value
            }
            self = .object(values)
        default: return nil
        }
    }
}

/// Numbers as both readers convert them: finite doubles only.
func finiteDouble(_ bytes: UnsafeRawBufferPointer) -> Double? {
    Double(String(decoding: bytes, as: UTF8.self)).flatMap { $0.isFinite ? $0 : nil }
}

/// Reads one whole document with ``JSONScanner``.
func scan(_ bytes: [UInt8]) -> Value? {
    bytes.withUnsafeBytes { raw in
        var scanner = JSONScanner(bytes: raw)
        func value() throws(JSONScanError) -> Value {
            scanner.skipWhitespace()
            switch scanner.peek() {
            case UInt8(ascii: "{"):
                try scanner.beginObject()
                var members: [String: Value] = [:]
                if !scanner.isEmptyObject() {
                    repeat {
                        let key = try scanner.string()
                        scanner.skipWhitespace()
                        try scanner.expect(UInt8(ascii: ":"), "':'")
                        members[key] = try value()
                    } while try scanner.nextMember()
                }
                return .object(members)
            case UInt8(ascii: "["):
                try scanner.beginArray()
                var elements: [Value] = []
                if !scanner.isEmptyArray() {
                    repeat { elements.append(try value()) } while try scanner.nextElement()
                }
                return .array(elements)
            case UInt8(ascii: "\""): return .string(try scanner.string())
            case UInt8(ascii: "n"): _ = try scanner.null(); return .null
            case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool(try scanner.boolean())
            default:
                let range = try scanner.number()
                guard let number = finiteDouble(UnsafeRawBufferPointer(rebasing: raw[range])) else { throw scanner.error("range") }
                return .number(number)
            }
        }
        do {
            let result = try value()
            try scanner.end()
            return result
        } catch {
            return nil
        }
    }
}

/// An input that hands out `bytes` in chunks of `chunk` bytes.
struct ChunkedInput: JSONByteInput {
    let bytes: [UInt8]
    let chunk: Int
    var offset = 0

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(JSONScanError) -> Int {
        let count = min(chunk, buffer.count, bytes.count - offset)
        for index in 0..<count { buffer[index] = bytes[offset + index] }
        offset += count
        return count
    }
}

/// Reads one whole document with ``JSONStreamLexer``, refilling a `buffer`-byte buffer
/// from reads of `chunk` bytes.
func stream(_ bytes: [UInt8], buffer: Int = 1 << 16, chunk: Int = 1 << 16) -> Value? {
    var lexer = JSONStreamLexer<JSONScanError>(bufferSize: buffer) { message, _ in JSONScanError(message: message) }
    defer { lexer.deallocate() }
    var input = ChunkedInput(bytes: bytes, chunk: chunk)
    func value(_ depth: Int) throws(JSONScanError) -> Value {
        guard depth < JSONScanner.maximumDepth else { throw JSONScanError(message: "depth") }
        if try lexer.consumeIf(UInt8(ascii: "{"), &input) {
            var members: [String: Value] = [:]
            if try !lexer.consumeIf(UInt8(ascii: "}"), &input) {
                repeat {
                    let key = try lexer.string(&input)
                    try lexer.expect(UInt8(ascii: ":"), &input, "':'")
                    members[key] = try value(depth + 1)
                } while try lexer.separator(closing: UInt8(ascii: "}"), &input)
            }
            return .object(members)
        }
        if try lexer.consumeIf(UInt8(ascii: "["), &input) {
            var elements: [Value] = []
            if try !lexer.consumeIf(UInt8(ascii: "]"), &input) {
                repeat { elements.append(try value(depth + 1)) } while try lexer.separator(closing: UInt8(ascii: "]"), &input)
            }
            return .array(elements)
        }
        if try lexer.null(&input) { return .null }
        switch try lexer.peekByte(&input) {
        case UInt8(ascii: "\""): return .string(try lexer.string(&input))
        case UInt8(ascii: "t"):
            for expected in "true".utf8 where try lexer.nextByte(&input) != expected { throw JSONScanError(message: "literal") }
            return .bool(true)
        case UInt8(ascii: "f"):
            for expected in "false".utf8 where try lexer.nextByte(&input) != expected { throw JSONScanError(message: "literal") }
            return .bool(false)
        default: return .number(try lexer.number(&input, parse: finiteDouble))
        }
    }
    do {
        let result = try value(0)
        guard try lexer.atEnd(&input) else { return nil }
        return result
    } catch {
        return nil
    }
}

/// Whether ``JSONStreamLexer/skipValue(_:maximumDepth:)`` skips `text` whole, read through a
/// `buffer`-byte buffer in reads of `chunk` bytes.
func skips(_ text: String, maximumDepth: Int = JSONScanner.maximumDepth, buffer: Int = 1 << 16, chunk: Int = 1 << 16) -> Bool {
    skipRefusal(Array(text.utf8), maximumDepth: maximumDepth, buffer: buffer, chunk: chunk) == nil
}

/// The skip's refusal of `text`, or nil when it skips it whole.
func skipRefusal(_ text: String) -> String? {
    skipRefusal(Array(text.utf8), maximumDepth: JSONScanner.maximumDepth, buffer: 1 << 16, chunk: 1 << 16)
}

func skipRefusal(_ bytes: [UInt8], maximumDepth: Int, buffer: Int, chunk: Int) -> String? {
    var lexer = JSONStreamLexer<JSONScanError>(bufferSize: buffer) { message, _ in JSONScanError(message: message) }
    defer { lexer.deallocate() }
    var input = ChunkedInput(bytes: bytes, chunk: chunk)
    do {
        try lexer.skipValue(&input, maximumDepth: maximumDepth)
        return try lexer.atEnd(&input) ? nil : "content after the value"
    } catch {
        return error.message
    }
}

/// The lexer's skip as it was before issue 43, a recursion of depth 512 over the same
/// primitives: the loop that replaced it must accept and refuse exactly what this does.
func recursiveSkipAccepts(_ bytes: [UInt8], chunk: Int) -> Bool {
    var lexer = JSONStreamLexer<JSONScanError>(bufferSize: 16 + chunk) { message, _ in JSONScanError(message: message) }
    defer { lexer.deallocate() }
    var input = ChunkedInput(bytes: bytes, chunk: chunk)
    func literal(_ word: String) throws(JSONScanError) {
        for expected in word.utf8 where try lexer.nextByte(&input) != expected { throw JSONScanError(message: "literal") }
    }
    func skip(_ depth: Int) throws(JSONScanError) {
        guard depth < JSONScanner.maximumDepth else { throw JSONScanError(message: "depth") }
        try lexer.skipWhitespace(&input)
        switch try lexer.peekByte(&input) {
        case nil: throw JSONScanError(message: "end")
        case UInt8(ascii: "\""): try lexer.skipString(&input)
        case UInt8(ascii: "{"):
            _ = try lexer.nextByte(&input)
            if try !lexer.consumeIf(UInt8(ascii: "}"), &input) {
                repeat {
                    try lexer.skipString(&input)
                    try lexer.expect(UInt8(ascii: ":"), &input, "':'")
                    try skip(depth + 1)
                } while try lexer.separator(closing: UInt8(ascii: "}"), &input)
            }
        case UInt8(ascii: "["):
            _ = try lexer.nextByte(&input)
            if try !lexer.consumeIf(UInt8(ascii: "]"), &input) {
                repeat { try skip(depth + 1) } while try lexer.separator(closing: UInt8(ascii: "]"), &input)
            }
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try lexer.number(&input) { _ in 0 }
        }
    }
    do {
        try skip(0)
        return try lexer.atEnd(&input)
    } catch {
        return false
    }
}

@Suite("FramescopeJSON: one strict scanner for bodies in memory and streams")
struct JSONScannerTests {
    static let valid: [String] = [
        #"{}"#, #"[]"#, #"0"#, #"-0"#, #"-0.5e+3"#, #"1E-2"#, #"" ""#, #"true"#, #"null"#,
        #"{"a": [1, 2.5, -3e2, true, false, null, "x"], "b": {"c": {}}}"#,
        #"  {"escapes": "\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"}  "#,
        #"["é", "日本", "😀"]"#, "[\n1,\n2\n]",
    ]

    static let invalid: [String] = [
        "", " ", "{", "[1,]", "[1 2]", #"{"a" 1}"#, #"{"a":}"#, #"{a: 1}"#, "01", "1.", ".5", "+1", "1e", "-",
        "tru", "nul", "NaN", "Infinity", #""\x""#, #""\u12""#, #""\uD83D""#, #""\uDE00x""#, "\"a\nb\"", "[1]]", "{} {}",
        "\u{0}", #"["\#u{1}"]"#,
    ]

    @Test("Valid documents: both readers give Foundation's value")
    func validDocuments() throws {
        for text in Self.valid {
            let bytes = Array(text.utf8)
            let expected = Value(foundation: try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]))
            #expect(expected != nil, "\(text)")
            #expect(scan(bytes) == expected, "scanner: \(text)")
            #expect(stream(bytes) == expected, "stream: \(text)")
        }
    }

    @Test("Invalid documents: both readers refuse, as Foundation does")
    func invalidDocuments() {
        for text in Self.invalid {
            let bytes = Array(text.utf8)
            #expect(scan(bytes) == nil, "scanner accepted \(text.debugDescription)")
            #expect(stream(bytes) == nil, "stream accepted \(text.debugDescription)")
            // Foundation on Linux takes a trailing comma in an array; RFC 8259 and both
            // readers do not.
            if text != "[1,]" {
                #expect((try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) == nil,
                        "Foundation accepts \(text.debugDescription): the case is wrong")
            }
        }
    }

    @Test("Strings and numbers across every buffer boundary: buffers of 16 bytes, reads of 1 to 17")
    func bufferBoundaries() {
        let text = #"{"a": "\u00e9\uD83D\uDE00 long enough to cross a boundary", "n": [12345.678e-3, -0, 1e22], "t": true}"#
        let expected = scan(Array(text.utf8))
        #expect(expected != nil)
        for chunk in 1...17 {
            #expect(stream(Array(text.utf8), buffer: 16, chunk: chunk) == expected, "chunk \(chunk)")
        }
    }

    @Test("The lexer counts lines, refuses NUL bytes and a string over its limit")
    func lexerLimits() {
        var lexer = JSONStreamLexer<JSONScanError>(bufferSize: 64) { message, line in JSONScanError(offset: line, message: message) }
        defer { lexer.deallocate() }
        var input = ChunkedInput(bytes: Array("[\n1,\n\n x]".utf8), chunk: 3)
        do {
            try lexer.expect(UInt8(ascii: "["), &input, "'['")
            _ = try lexer.number(&input, parse: finiteDouble)
            _ = try lexer.separator(closing: UInt8(ascii: "]"), &input)
            _ = try lexer.number(&input, parse: finiteDouble)
            Issue.record("'x' was read as a number")
        } catch {
            #expect(error.offset == 4, "line \(error.offset)")
            #expect(error.message.contains("expected a number, found 'x'"), "\(error.message)")
        }
        #expect(stream(Array("[1, \u{0}]".utf8)) == nil)
        let long = "[\"" + String(repeating: "a", count: JSONStreamLexer<JSONScanError>.maximumStringBytes + 1) + "\"]"
        #expect(stream(Array(long.utf8)) == nil)
        #expect(scan(Array(long.utf8)) != nil, "the in-memory scanner has no string limit: its input is already bounded")
    }

    @Test("Nesting is bounded at 512")
    func nesting() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(scan(Array(deep.utf8)) == nil)
        var scanner: JSONScanner?
        Array(deep.utf8).withUnsafeBytes { raw in
            var inner = JSONScanner(bytes: raw)
            #expect(throws: JSONScanError.self) { try inner.skipValue() }
            scanner = inner
        }
        #expect((scanner?.depth ?? 0) <= JSONScanner.maximumDepth)
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(scan(Array(fine.utf8)) != nil)
        #expect(stream(Array(fine.utf8)) != nil)
    }

    @Test("The lexer's skip: 512 levels by default as before; any depth when asked, in a loop (100,000 levels of objects and lists)")
    func skipDepth() {
        // 512 nested lists, the innermost empty: no value sits 512 deep, so it passes, as it
        // did when the skip was a recursion; 513, or a value inside the 512th, is refused.
        #expect(skips(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)))
        #expect(!skips(String(repeating: "[", count: 513) + String(repeating: "]", count: 513)))
        #expect(!skips(String(repeating: "[", count: 512) + "1" + String(repeating: "]", count: 512)))
        #expect(skips(String(repeating: "[", count: 511) + "1" + String(repeating: "]", count: 511)))
        #expect(skipRefusal(String(repeating: "[", count: 600) + String(repeating: "]", count: 600))?.contains("nested deeper than 512") == true)
        // A MetricKit tree's shape, 100,000 frames deep: refused by default, skipped with no limit.
        let frame = #"{"binaryUUID": "A", "offsetIntoBinaryTextSegment": 1, "subFrames": ["#
        let deep = String(repeating: frame, count: 100_000) + "{}" + String(repeating: "]}", count: 100_000)
        #expect(!skips(deep))
        #expect(skips(deep, maximumDepth: .max))
        #expect(skips(deep + " ", maximumDepth: .max, buffer: 17, chunk: 5))
        // Still strict at any depth: a missing bracket, a trailing comma, a bad key.
        #expect(!skips(String(repeating: frame, count: 1_000) + "{}" + String(repeating: "]}", count: 999), maximumDepth: .max))
        #expect(!skips(String(repeating: "[", count: 1_000) + "1," + String(repeating: "]", count: 1_000), maximumDepth: .max))
        #expect(!skips(String(repeating: "{\"a\":", count: 1_000) + "1" + String(repeating: "}", count: 999) + ",1}", maximumDepth: .max))
        #expect(!skips(String(repeating: "{\"a\":", count: 700) + "{a:1}" + String(repeating: "}", count: 700), maximumDepth: .max))
    }

    @Test("UTF-8 checked in one loop over contiguous bytes: the same answer as the standard library's parser, every 1- and 2-byte sequence and the 3- and 4-byte boundaries")
    func utf8Validation() {
        func same(_ bytes: [UInt8]) -> Bool {
            let generic = String(utf8Validating: bytes.lazy.map { $0 })   // the Collection initializer
            let contiguous = bytes.withUnsafeBytes { String(utf8Validating: $0) }
            return generic == contiguous
        }
        var mismatches: [[UInt8]] = []
        for first in 0...255 {
            if !same([UInt8(first)]) { mismatches.append([UInt8(first)]) }
            for second in 0...255 where !same([UInt8(first), UInt8(second)]) { mismatches.append([UInt8(first), UInt8(second)]) }
        }
        let edges: [UInt8] = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
        for first in 0xE0...0xF5 {
            for second in edges {
                for third in edges {
                    let three = [UInt8(first), second, third]
                    if !same(three) { mismatches.append(three) }
                    for fourth in edges where !same(three + [fourth]) { mismatches.append(three + [fourth]) }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(Array("Préférences 🚀 日本".utf8).withUnsafeBytes { String(utf8Validating: $0) } == "Préférences 🚀 日本")
    }

    @Test("Element ranges of a member's array: the bytes as sent, nil for anything else")
    func elementRanges() {
        let body = #"{"batchId": "b", "events": [ {"a": [1, "]"]} , "x\"y", 3 ], "tail": {}}"#
        let ranges = Array(body.utf8).withUnsafeBytes { raw in
            JSONScanner.elementRanges(ofMember: "events", in: raw)?.map { String(decoding: UnsafeRawBufferPointer(rebasing: raw[$0]), as: UTF8.self) }
        }
        #expect(ranges == [#"{"a": [1, "]"]}"#, #""x\"y""#, "3"])
        for bad in [#"{"events": {}}"#, #"{"other": []}"#, #"{"events": [1,]}"#, #"{"events": [1]} x"#, #"{"ev\u0065nts": [1]}"#] {
            let found = Array(bad.utf8).withUnsafeBytes { JSONScanner.elementRanges(ofMember: "events", in: $0) }
            #expect(found == nil, "\(bad)")
        }
    }
}

/// SplitMix64: seeded, so a failing input can be made again.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Seeded mutation fuzzing of both readers: they never trap, and they accept and refuse
/// exactly the same inputs with the same values (the stream read through small, odd
/// buffers). CI runs a fixed number of inputs; `FRAMESCOPE_FUZZ_SECONDS` runs longer.
@Suite("Fuzzing the JSON scanner and lexer")
struct JSONFuzzTests {
    static let seeds: [String] = JSONScannerTests.valid + [
        #"{"batchId":"b1","app":{"id":"shop","version":"1.0","build":"7"},"events":[{"screen":"Feed","duration":12.5,"hangs":[{"offset":1,"duration":0.3}],"context":{"network":"wifi","lowPowerMode":false,"tags":{"k":"v"}}}]}"#,
        #"{"refreshRate": 60, "ticks": [{"timestamp": 1.0, "targetTimestamp": 1.0167, "segment": "scroll 1"}, {"timestamp": 1.0334}]}"#,
    ]
    static let tokens: [String] = ["\"", "\\", "\\u", "\\uD800", "{", "}", "[", "]", ",", ":", "-", "0", "1e", ".", "null", "tru", " ", "\n", "é", "\u{0}", "\u{1}"]

    static func mutate(_ input: [UInt8], _ random: inout SplitMix) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1 where !bytes.isEmpty:
                let start = Int.random(in: 0..<bytes.count, using: &random)
                bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...8, using: &random)))
            case 2:
                let token = Array(tokens.randomElement(using: &random)!.utf8)
                bytes.insert(contentsOf: token, at: Int.random(in: 0...bytes.count, using: &random))
            default:
                if !bytes.isEmpty {
                    let start = Int.random(in: 0..<bytes.count, using: &random)
                    let range = start..<min(bytes.count, start + Int.random(in: 1...32, using: &random))
                    bytes.insert(contentsOf: bytes[range], at: Int.random(in: 0...bytes.count, using: &random))
                }
            }
        }
        return bytes
    }

    @Test("Mutated documents: no trap, the scanner and the lexer agree on every input, and so do the lexer's skip and its old recursion")
    func agreement() {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["FRAMESCOPE_FUZZ_SECONDS"].flatMap(Double.init)
        var random = SplitMix(state: environment["FRAMESCOPE_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_124)
        let seeds = Self.seeds.map { Array($0.utf8) }
        let deadline = Date().addingTimeInterval(seconds ?? 0)
        var inputs = 0, accepted = 0, disagreements = 0
        while seconds == nil ? inputs < 20_000 : Date() < deadline {
            let input = Self.mutate(seeds.randomElement(using: &random)!, &random)
            let chunk = Int.random(in: 1...40, using: &random)
            let scanned = scan(input)
            let streamed = stream(input, buffer: 16 + chunk, chunk: chunk)
            if scanned != streamed {
                disagreements += 1
                if disagreements <= 5 {
                    Issue.record("disagree on \(String(decoding: input, as: UTF8.self).debugDescription): scanner \(String(describing: scanned)), lexer \(String(describing: streamed))")
                }
            }
            let skipped = skipRefusal(input, maximumDepth: JSONScanner.maximumDepth, buffer: 16 + chunk, chunk: chunk) == nil
            if skipped != recursiveSkipAccepts(input, chunk: chunk) {
                disagreements += 1
                if disagreements <= 5 {
                    Issue.record("the skip's loop and its old recursion disagree on \(String(decoding: input, as: UTF8.self).debugDescription)")
                }
            }
            if scanned != nil { accepted += 1 }
            inputs += 1
        }
        #expect(disagreements == 0)
        #expect(accepted > 0 && accepted < inputs, "the mutations should make both valid and invalid documents")
        if seconds != nil { print("JSON fuzz: \(inputs) inputs, \(accepted) valid, \(disagreements) disagreements") }
    }
}
