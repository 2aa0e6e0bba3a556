import FramescopeCore
import FramescopeJSON

/// Reads the body of `POST /v1/apps/{app}/symbols` in place with ``JSONScanner``.
///
/// `JSONDecoder` first builds a map of every value in the body: beside a 60 MiB upload of
/// 900,000 symbols it held about 100 MiB more than the decoded symbols themselves
/// (docs/benchmarks.md, "Symbol uploads"). This reader walks the bytes once and keeps only
/// the symbols. The field at fault is named as `JSONDecoder`'s errors named it
/// (`images[0].symbols[7]`): a value of the wrong type is 400 `invalid_field`, text that is
/// not JSON 400 `invalid_json`. Members the upload does not know are skipped, as
/// `JSONDecoder` skipped them; a member given twice is refused, as in a batch of events.
extension SymbolUpload {
    /// The upload in `bytes` (JSON), not yet normalised or checked (``problem()``).
    static func scan(_ bytes: UnsafeRawBufferPointer) throws -> SymbolUpload {
        var reader = SymbolUploadReader(scanner: JSONScanner(bytes: bytes))
        do {
            return try reader.upload()
        } catch let error as CollectorError {
            throw error
        } catch let error as JSONScanError {
            throw CollectorError(.badRequest, .invalidJSON, field: reader.path,
                                 message: "the body is not valid JSON at byte \(error.offset): \(error.message)")
        }
    }
}

/// The scanner and where it is in the upload, kept as positions so that no path is built
/// for each of a million symbols, only for an error.
private struct SymbolUploadReader {
    var scanner: JSONScanner
    /// The image being read, by position.
    var image: Int?
    /// The member of the image being read.
    var member: String?
    /// The symbol being read, by position.
    var symbol: Int?

    /// The field being read, as a JSON path (`images[0].symbols[7]`), or nil at the top.
    var path: String? {
        guard let image else { return member }
        var path = "images[\(image)]"
        if let member { path += ".\(member)" }
        if let symbol { path += "[\(symbol)]" }
        return path
    }

    /// A refusal of the field being read: its value is not what it must be.
    func invalid(_ message: String) -> CollectorError {
        CollectorError(.badRequest, .invalidField, field: path, message: message)
    }

    /// Refuses the coming value unless its first byte is `opening` (`{`, `[` or `"`); `what`
    /// is only written out for the refusal, not for each of a million symbols read.
    mutating func expectValue(_ opening: UInt8, _ what: @autoclosure () -> String) throws {
        scanner.skipWhitespace()
        guard scanner.index < scanner.bytes.count else { throw scanner.error("the input ends where a value was expected") }
        guard scanner.peek() == opening else { throw invalid("\(path ?? "the body") must be \(what())") }
    }

    mutating func upload() throws -> SymbolUpload {
        scanner.skipWhitespace()
        guard scanner.index < scanner.bytes.count else {
            throw CollectorError(.badRequest, .invalidJSON, message: "the body is empty; send {\"images\": [{\"id\", \"name\", \"arch\", \"symbols\"}]}")
        }
        guard scanner.peek() == UInt8(ascii: "{") else {
            throw CollectorError(.badRequest, .invalidJSON, message: "the body must be a JSON object {\"images\": […]}")
        }
        var images: [SymbolUpload.Image]?
        try members { reader, key in
            guard key == "images" else { return false }
            images = try reader.images()
            return true
        }
        try scanner.end()
        guard let images else { throw CollectorError(.badRequest, .invalidField, field: "images", message: "images is required") }
        return SymbolUpload(images: images)
    }

    /// Reads an object member by member: `read` reads a known member's value and returns
    /// true, or returns false for a member to skip; a key twice is refused.
    mutating func members(_ read: (inout SymbolUploadReader, String) throws -> Bool) throws {
        let parent = member
        try scanner.beginObject()
        guard !scanner.isEmptyObject() else { return }
        var seen: Set<String> = []
        repeat {
            member = parent
            let range = try scanner.key()
            let key = String(decoding: UnsafeRawBufferPointer(rebasing: scanner.bytes[range]), as: UTF8.self)
            member = key
            guard seen.insert(key).inserted else { throw invalid("'\(key.prefix(64))' appears twice") }
            if try !read(&self, key) { try scanner.skipValue() }
        } while try scanner.nextMember()
        member = parent
    }

    mutating func images() throws -> [SymbolUpload.Image] {
        try expectValue(UInt8(ascii: "["), "an array of images")
        try scanner.beginArray()
        member = nil
        var images: [SymbolUpload.Image] = []
        // Where it was stays set when an error leaves, so that the error names it.
        guard !scanner.isEmptyArray() else {
            member = "images"
            return images
        }
        repeat {
            image = images.count
            member = nil
            // More than the limit is refused by count before a million symbols more are read.
            guard images.count < SymbolUpload.maximumImages else {
                image = nil
                member = "images"
                throw invalid("an upload holds at most \(SymbolUpload.maximumImages) images")
            }
            images.append(try imageValue())
        } while try scanner.nextElement()
        image = nil
        member = "images"
        return images
    }

    mutating func imageValue() throws -> SymbolUpload.Image {
        try expectValue(UInt8(ascii: "{"), "an object {\"id\", \"name\", \"arch\", \"symbols\"}")
        var id: String?, name: String?, arch: String?, symbols: [SymbolUpload.Symbol]?
        try members { reader, key in
            switch key {
            case "id": id = try reader.string()
            case "name": name = try reader.string()
            case "arch": arch = try reader.string()
            case "symbols": symbols = try reader.symbols()
            default: return false
            }
            return true
        }
        guard let id, let name, let arch, let symbols else {
            member = id == nil ? "id" : name == nil ? "name" : arch == nil ? "arch" : "symbols"
            throw invalid("\(member ?? "") is required")
        }
        member = nil
        return SymbolUpload.Image(id: id, name: name, arch: arch, symbols: symbols)
    }

    mutating func string() throws -> String {
        try expectValue(UInt8(ascii: "\""), "a string")
        return try scanner.string()
    }

    mutating func symbols() throws -> [SymbolUpload.Symbol] {
        try expectValue(UInt8(ascii: "["), "an array of symbols [offset, size, name]")
        try scanner.beginArray()
        var symbols: [SymbolUpload.Symbol] = []
        guard !scanner.isEmptyArray() else { return symbols }
        repeat {
            symbol = symbols.count
            guard symbols.count < SymbolUpload.maximumSymbols else {
                symbol = nil
                throw invalid("an image holds at most \(SymbolUpload.maximumSymbols) symbols")
            }
            let shape = "[offset, size, name]: two whole numbers of bytes and a string"
            try expectValue(UInt8(ascii: "["), "a symbol \(shape)")
            try scanner.beginArray()
            guard !scanner.isEmptyArray() else { throw invalid("a symbol is \(shape)") }
            let offset = try unsigned(shape)
            guard try scanner.nextElement() else { throw invalid("a symbol is \(shape)") }
            let size = try unsigned(shape)
            guard try scanner.nextElement() else { throw invalid("a symbol is \(shape)") }
            let name = try string()
            guard try !scanner.nextElement() else { throw invalid("a symbol is \(shape)") }
            symbols.append(SymbolUpload.Symbol(offset: offset, size: size, name: name))
        } while try scanner.nextElement()
        symbol = nil
        return symbols
    }

    /// A whole number from 0 to 2⁶⁴ − 1 written without a fraction or an exponent.
    mutating func unsigned(_ shape: String) throws -> UInt64 {
        scanner.skipWhitespace()
        guard scanner.index < scanner.bytes.count else { throw scanner.error("the input ends where a value was expected") }
        let first = scanner.peek()
        guard first == UInt8(ascii: "-") || first &- 0x30 < 10 else { throw invalid("a symbol is \(shape)") }
        let range = try scanner.number()
        var value: UInt64 = 0
        for position in range {
            let digit = scanner.bytes[position] &- 0x30
            guard digit < 10 else { throw invalid("a symbol is \(shape)") }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(digit))
            guard !overflowTimes, !overflowSum else { throw invalid("a symbol's offset and size are below 2^64") }
            value = sum
        }
        return value
    }
}
