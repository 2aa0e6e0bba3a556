import FramescopeJSON

/// The values of an event's fields, read without judging them: a value of another type than
/// expected is described (``ChromeEvent/Field/unreadable(_:)``) and skipped, so that an event
/// about something else, which may hold anything, never stops the read. The JSON itself is
/// still checked: a trace that is not JSON is refused wherever it breaks.
extension ChromeTraceReader {
    /// `name`: one of ``eventNames``, else ``ChromeEvent/Name/other`` (a value that is not
    /// a string included).
    func name<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source) throws(TraceError) -> ChromeEvent.Name {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "\"") else {
            try lexer.skipValue(&source)
            return .other
        }
        return try lexer.matchString(&source, among: Self.eventNames).flatMap(ChromeEvent.Name.init(rawValue:)) ?? .other
    }

    /// `ph`: one of ``phases``, "" for another string.
    func phase<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source) throws(TraceError) -> ChromeEvent.Field<String> {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "\"") else { return .unreadable(try describeValue(&lexer, &source)) }
        return .value(try lexer.matchString(&source, among: Self.phases).map { Self.phases[$0].description } ?? "")
    }

    /// A number; when `quoted`, a string holding one too (`"12"`).
    func number<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, quoted: Bool) throws(TraceError) -> ChromeEvent.Field<Double> {
        try lexer.skipWhitespace(&source)
        let next = try lexer.peekByte(&source)
        if let next, next &- 0x30 < 10 || next == UInt8(ascii: "-") {
            return .value(try lexer.number(&source, parse: parseDouble))
        }
        guard quoted, next == UInt8(ascii: "\"") else { return .unreadable(try describeValue(&lexer, &source)) }
        guard let text = try text(&lexer, &source, keeping: 64) else { return .unreadable("a long string") }
        if let value = Double(text) { return .value(value) }
        return .unreadable("'\(text.printable())'")
    }

    /// A flag as text: a string's content; "0" for `false` or a zero, "1" for `true` or
    /// any other number; nil for anything else.
    func flag<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source) throws(TraceError) -> String? {
        try lexer.skipWhitespace(&source)
        switch try lexer.peekByte(&source) {
        case UInt8(ascii: "\""):
            return try text(&lexer, &source, keeping: 64)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            let value = try lexer.peekByte(&source) == UInt8(ascii: "t") ? "1" : "0"
            try lexer.skipValue(&source)
            return value
        case let next? where next &- 0x30 < 10 || next == UInt8(ascii: "-"):
            return try lexer.number(&source, parse: parseDouble) == 0 ? "0" : "1"
        default:
            try lexer.skipValue(&source)
            return nil
        }
    }

    /// A string's content when it is at most `limit` bytes as written; nil, skipped, for a
    /// longer string or a value that is not a string. Escapes and control characters are
    /// checked as ``JSONStreamLexer/skipString(_:)`` checks them, and a kept string is
    /// decoded as ``JSONStreamLexer/string(_:)`` decodes it; a long one is never an error for
    /// its length (an event's `args.name` may be a URL of any size).
    func text<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, keeping limit: Int) throws(TraceError) -> String? {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "\"") else {
            try lexer.skipValue(&source)
            return nil
        }
        _ = try lexer.nextByte(&source)
        var content: [UInt8] = []
        var long = false
        func keep(_ byte: UInt8) {
            guard !long else { return }
            content.append(byte)
            if content.count > limit { long = true; content = [] }
        }
        while true {
            guard let byte = try lexer.nextByte(&source) else { throw lexer.error("file ends inside a string") }
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw lexer.error("control character inside a string") }
            keep(byte)
            guard byte == UInt8(ascii: "\\") else { continue }
            guard let escape = try lexer.nextByte(&source) else { throw lexer.error("file ends inside a string") }
            keep(escape)
            if escape == UInt8(ascii: "u") {
                for _ in 0..<4 {
                    guard let digit = try lexer.nextByte(&source), JSONText.hexValue(digit) != nil else {
                        throw lexer.error("\\u must be followed by four hexadecimal digits")
                    }
                    keep(digit)
                }
            } else if !"\"\\/bfnrt".utf8.contains(escape) {
                throw lexer.error("'\\\(JSONText.describe(escape))' is not a JSON escape")
            }
        }
        guard !long else { return nil }
        switch content.withUnsafeBytes({ JSONText.unescape($0) }) {
        case let .success(text): return text
        case let .failure(problem): throw lexer.error(problem.message)
        }
    }

    /// Enters the object that comes next: true when it has members to read (its `{` read),
    /// false when it is empty or not an object (then skipped whole).
    func enterObject<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source) throws(TraceError) -> Bool {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "{") else {
            try lexer.skipValue(&source)
            return false
        }
        try lexer.expect(UInt8(ascii: "{"), &source, "'{'")
        return try !lexer.consumeIf(UInt8(ascii: "}"), &source)
    }

    /// Skips the value that comes next and says what it was, for a message: `null`, `true`,
    /// `false`, a number, `'text'`, `a long string`, `an object` or `a list`.
    func describeValue<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source) throws(TraceError) -> String {
        try lexer.skipWhitespace(&source)
        let described: String
        switch try lexer.peekByte(&source) {
        case UInt8(ascii: "\""):
            return try text(&lexer, &source, keeping: 40).map { "'\($0.printable())'" } ?? "a long string"
        case let next? where next &- 0x30 < 10 || next == UInt8(ascii: "-"):
            return Self.describe(try lexer.number(&source, parse: parseDouble))
        case UInt8(ascii: "{"): described = "an object"
        case UInt8(ascii: "["): described = "a list"
        case UInt8(ascii: "n"): described = "null"
        case UInt8(ascii: "t"): described = "true"
        case UInt8(ascii: "f"): described = "false"
        default: described = "a value"
        }
        try lexer.skipValue(&source)
        return described
    }

    /// A number as a message writes it: a whole one without a fraction (`5`, not `5.0`).
    static func describe(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
}
