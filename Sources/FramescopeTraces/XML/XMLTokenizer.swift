/// A streaming tokenizer for the XML that `xctrace export` writes: start tags with their
/// attributes, end tags and text, in bounded memory, from any ``ByteSource``.
///
/// It reads well-formed XML 1.0 as a sequence of tokens and skips what carries no data
/// for a reader of tables: the XML declaration, processing instructions, comments and a
/// document type declaration. Character data of CDATA sections is text. It does not check
/// that end tags match their start tags (the caller tracks depth), and it expands only the
/// five predefined entities and character references (``XMLTokenizer/decode(_:)``); a
/// document that declares its own entities is read with them left as written.
///
/// Why not Foundation's `XMLParser`: see `docs/decisions.md` ("An XML tokenizer of our own").
/// Bytes of a token: a view into the tokenizer's buffer, valid only during the callback
/// (views, not array slices, so that handing out a tag's name and attributes costs no
/// reference counting).
typealias XMLBytes = Slice<UnsafeRawBufferPointer>

struct XMLTokenizer {
    /// A token. Its byte arrays are valid only during the callback.
    enum Token {
        /// `<name a="1">` or `<name a="1"/>` (then `selfClosing`).
        case start(name: XMLBytes, attributes: [(name: XMLBytes, value: XMLBytes)], selfClosing: Bool)
        /// `</name>`.
        case end(name: XMLBytes)
        /// Character data between tags, entities not yet expanded (raw), or a CDATA section's content.
        case text(XMLBytes, raw: Bool)
    }

    let file: String
    /// The longest tag or run of text accepted, in bytes.
    static let maximumTokenBytes = 1 << 20

    /// Calls `handle` with each token of `source`, and the 1-based line it starts on.
    func tokens<Source: ByteSource>(
        of source: inout Source,
        progress: (Int) -> Void,
        _ handle: (Token, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { buffer.deallocate() }
        var token: [UInt8] = []
        token.reserveCapacity(4096)
        var inTag = false
        var quote: UInt8 = 0
        var line = 1
        var tokenLine = 1
        var total = 0
        var attributes: [(name: XMLBytes, value: XMLBytes)] = []
        func refuse(_ message: String) -> TraceError {
            TraceError(kind: .data, file: file, line: tokenLine, message: message)
        }
        // The buffer is scanned in runs: up to the next '<' outside a tag, up to the next
        // '>' (outside quotes) inside one, each run appended to the token at once.
        var tagFirst: UInt8 = 0
        while true {
            let count = try source.read(into: buffer)
            if count == 0 { break }
            total += count
            let bytes = UnsafeRawBufferPointer(buffer)
            var index = 0
            while index < count {
                let runStart = index
                if !inTag {
                    var firstLine = 0
                    while index < count {
                        let byte = bytes[index]
                        if byte == UInt8(ascii: "<") { break }
                        if byte == UInt8(ascii: "\n") { line += 1 }
                        if firstLine == 0 { firstLine = line }
                        index += 1
                    }
                    if index > runStart {
                        if token.isEmpty { tokenLine = firstLine }
                        guard token.count + (index - runStart) <= Self.maximumTokenBytes else { throw refuse("text longer than \(Self.maximumTokenBytes) bytes without a tag") }
                        token.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
                    }
                    guard index < count else { break }
                    // At '<'.
                    if !token.isEmpty {
                        try Self.withView(token) { (raw) throws(TraceError) in try handle(.text(raw[...], raw: true), tokenLine) }
                        token.removeAll(keepingCapacity: true)
                    }
                    inTag = true
                    quote = 0
                    tagFirst = 0
                    tokenLine = line
                    index += 1
                    continue
                }
                var closed = false
                if tagFirst == 0, index < count { tagFirst = token.first ?? bytes[index] }
                let quotesAttributes = Self.isNameStart(tagFirst)
                while index < count {
                    let byte = bytes[index]
                    if quote != 0 {
                        // Inside an attribute value: straight to its closing quote.
                        while index < count, bytes[index] != quote {
                            if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                            index += 1
                        }
                        if index < count { quote = 0; index += 1 }
                        continue
                    }
                    if byte == UInt8(ascii: ">") {
                        closed = true
                        break
                    }
                    if byte == UInt8(ascii: "\n") {
                        line += 1
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'"), quotesAttributes {
                        // Quotes delimit attribute values only inside a start tag.
                        quote = byte
                    }
                    index += 1
                }
                guard token.count + (index - runStart) <= Self.maximumTokenBytes else { throw refuse("a tag longer than \(Self.maximumTokenBytes) bytes") }
                token.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
                guard closed else { break }
                index += 1  // past '>'
                // A '>' ends the tag unless it lies inside a comment or a CDATA section.
                if token.starts(with: Self.commentOpen) {
                    guard token.count >= 5, token.suffix(2).elementsEqual([UInt8(ascii: "-"), UInt8(ascii: "-")]) else {
                        guard token.count < Self.maximumTokenBytes else { throw refuse("a tag longer than \(Self.maximumTokenBytes) bytes") }
                        token.append(UInt8(ascii: ">"))
                        continue
                    }
                } else if token.starts(with: Self.cdataOpen) {
                    guard token.suffix(2).elementsEqual([UInt8(ascii: "]"), UInt8(ascii: "]")]), token.count >= Self.cdataOpen.count + 2 else {
                        guard token.count < Self.maximumTokenBytes else { throw refuse("a tag longer than \(Self.maximumTokenBytes) bytes") }
                        token.append(UInt8(ascii: ">"))
                        continue
                    }
                    try Self.withView(token) { (raw) throws(TraceError) in
                        try handle(.text(raw[Self.cdataOpen.count..<(raw.count - 2)], raw: false), tokenLine)
                    }
                    token.removeAll(keepingCapacity: true)
                    inTag = false
                    continue
                }
                try Self.withView(token) { (raw) throws(TraceError) in try emitTag(raw[...], &attributes, refuse, handle, tokenLine) }
                token.removeAll(keepingCapacity: true)
                inTag = false
            }
            progress(total)
        }
        if inTag { throw refuse("the document ends inside a tag") }
        if token.contains(where: { !Self.isSpace($0) }) {
            try Self.withView(token) { (raw) throws(TraceError) in try handle(.text(raw[...], raw: true), tokenLine) }
        }
    }

    /// One tag's bytes between `<` and `>`, as a token (declarations and comments: none).
    private func emitTag(
        _ tag: XMLBytes,
        _ attributes: inout [(name: XMLBytes, value: XMLBytes)],
        _ refuse: (String) -> TraceError,
        _ handle: (Token, _ line: Int) throws(TraceError) -> Void,
        _ line: Int
    ) throws(TraceError) {
        guard let first = tag.first else { throw refuse("an empty tag '<>'") }
        if first == UInt8(ascii: "?") || first == UInt8(ascii: "!") { return }
        if first == UInt8(ascii: "/") {
            var end = tag.startIndex + 1
            while end < tag.endIndex, !Self.isSpace(tag[end]) { end += 1 }
            guard end > tag.startIndex + 1 else { throw refuse("an end tag without a name") }
            try handle(.end(name: tag[(tag.startIndex + 1)..<end]), line)
            return
        }
        guard Self.isNameStart(first) else { throw refuse("'<' is not followed by a tag name") }
        // Positions, not slices of slices: each slice made costs a retain and a release,
        // and a table row has a dozen tags.
        var limit = tag.endIndex
        let selfClosing = tag[limit - 1] == UInt8(ascii: "/")
        if selfClosing { limit -= 1 }
        var index = tag.startIndex
        while index < limit, !Self.isSpace(tag[index]) { index += 1 }
        let name = tag[tag.startIndex..<index]
        attributes.removeAll(keepingCapacity: true)
        while true {
            while index < limit, Self.isSpace(tag[index]) { index += 1 }
            if index >= limit { break }
            let nameStart = index
            while index < limit, tag[index] != UInt8(ascii: "="), !Self.isSpace(tag[index]) { index += 1 }
            let nameEnd = index
            while index < limit, Self.isSpace(tag[index]) { index += 1 }
            guard nameEnd > nameStart, index < limit, tag[index] == UInt8(ascii: "=") else {
                throw refuse("attribute '\(String(decoding: tag[nameStart..<nameEnd], as: UTF8.self).printable())' has no '=\"value\"'")
            }
            index += 1
            while index < limit, Self.isSpace(tag[index]) { index += 1 }
            guard index < limit, tag[index] == UInt8(ascii: "\"") || tag[index] == UInt8(ascii: "'") else {
                throw refuse("attribute '\(String(decoding: tag[nameStart..<nameEnd], as: UTF8.self).printable())' has an unquoted value")
            }
            let open = tag[index]
            index += 1
            let valueStart = index
            while index < limit, tag[index] != open { index += 1 }
            guard index < limit else { throw refuse("an attribute value is not closed") }
            attributes.append((tag[nameStart..<nameEnd], tag[valueStart..<index]))
            index += 1
        }
        try handle(.start(name: name, attributes: attributes, selfClosing: selfClosing), line)
    }

    /// Calls `body` with a view of `bytes`, passing on the error it throws.
    static func withView(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(TraceError) -> Void) throws(TraceError) {
        var failure: TraceError?
        bytes.withUnsafeBytes { raw in
            do throws(TraceError) { try body(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    static let commentOpen: [UInt8] = Array("!--".utf8)
    static let cdataOpen: [UInt8] = Array("![CDATA[".utf8)

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    /// `bytes` with the predefined entities (`&lt;` `&gt;` `&amp;` `&quot;` `&apos;`) and
    /// character references (`&#65;`, `&#x41;`) expanded; anything else after `&` stays as
    /// written. A reference to a scalar that is not one (a surrogate, past U+10FFFF, 0)
    /// becomes U+FFFD.
    static func decode(_ bytes: some Collection<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.first {
            scalars = scalars.dropFirst()
            guard scalar == "&", let semicolon = scalars.prefix(12).firstIndex(of: ";") else {
                result.append(scalar)
                continue
            }
            let entity = String(String.UnicodeScalarView(scalars[..<semicolon]))
            var expanded: Unicode.Scalar?
            switch entity {
            case "lt": expanded = "<"
            case "gt": expanded = ">"
            case "amp": expanded = "&"
            case "quot": expanded = "\""
            case "apos": expanded = "'"
            default:
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    expanded = UInt32(entity.dropFirst(2), radix: 16).map { Unicode.Scalar($0) ?? "\u{FFFD}" }
                } else if entity.hasPrefix("#") {
                    expanded = UInt32(entity.dropFirst()).map { Unicode.Scalar($0) ?? "\u{FFFD}" }
                }
                if expanded == "\u{0}" { expanded = "\u{FFFD}" }
            }
            if let expanded {
                result.append(expanded)
                scalars = scalars[scalars.index(after: semicolon)...]
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
