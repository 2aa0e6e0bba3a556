import FramescopeCore

/// The body of `POST /v1/apps/{app}/symbols`: the function symbols of one or more images
/// (a build's executable, its frameworks), read from their object files by
/// `framescope symbols upload`, which also demangles the names.
///
/// ```json
/// {"images": [{"id": "73d406b3246a378bbefc16429a4d8133", "name": "Shop", "arch": "arm64",
///              "symbols": [[6852, 1700, "specialized trash(paths:)"], [9656, 92, "NSFileHandle.write(_:)"]]}]}
/// ```
///
/// A symbol is `[offset, size, name]`: bytes from the image's base (as a hang's frames
/// count them), its length in bytes, and the name to show. Symbols are sorted by offset and
/// do not overlap.
public struct SymbolUpload: Codable, Sendable, Hashable {
    /// One image's symbols.
    public struct Image: Codable, Sendable, Hashable {
        /// The image's build identity: lowercase hex without separators, a Mach-O `LC_UUID`
        /// (32 digits) or an ELF GNU build id (16 to 64 digits, even).
        public var id: String
        /// The image's file name without its folder.
        public var name: String
        /// Its architecture (`arm64`, `x86_64`, `aarch64`).
        public var arch: String
        /// Its function symbols, by offset.
        public var symbols: [Symbol]

        /// Creates an image.
        public init(id: String, name: String, arch: String, symbols: [Symbol]) {
            self.id = id
            self.name = name
            self.arch = arch
            self.symbols = symbols
        }
    }

    /// A function: where it starts and how long it is, in bytes, and its name. On the
    /// wire, `[offset, size, name]`.
    public struct Symbol: Codable, Sendable, Hashable {
        /// Bytes from the image's base to the function's first instruction.
        public var offset: UInt64
        /// The function's length, in bytes (at least 1).
        public var size: UInt64
        /// The name to show (demangled where the uploader could).
        public var name: String

        /// Creates a symbol.
        public init(offset: UInt64, size: UInt64, name: String) {
            self.offset = offset
            self.size = size
            self.name = name
        }

        /// Decodes `[offset, size, name]`.
        public init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            offset = try container.decode(UInt64.self)
            size = try container.decode(UInt64.self)
            name = try container.decode(String.self)
            guard container.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a symbol is [offset, size, name]")
            }
        }

        /// Encodes `[offset, size, name]`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(offset)
            try container.encode(size)
            try container.encode(name)
        }
    }

    /// The images.
    public var images: [Image]

    /// Creates an upload.
    public init(images: [Image]) {
        self.images = images
    }

    /// Most images in one upload.
    public static let maximumImages = 256
    /// Most symbols of one image.
    public static let maximumSymbols = 1_000_000
    /// Longest symbol name, in bytes of UTF-8.
    public static let maximumNameLength = 4096
    /// Largest upload body as sent (gzip), in bytes.
    public static let maximumBodyBytes = 16 << 20
    /// Largest upload body after decompression, in bytes.
    public static let maximumDecompressedBytes = 64 << 20

    /// Why `id` cannot name an uploaded image, or `nil`: an id is 16 to 64 lowercase hex
    /// digits (even), and not all zeros. An all-zero id (the `LC_UUID` a linker leaves empty)
    /// names no build: images of every build that has one would share one table. The one
    /// rule for the upload route (``problem()``) and `framescope symbols upload`, which skips
    /// such an image with this message.
    public static func idProblem(_ id: String) -> String? {
        guard HangStack.isImageID(id) else { return "an image id is a UUID or build id: 16–64 lowercase hex digits without dashes" }
        if id.utf8.allSatisfy({ $0 == UInt8(ascii: "0") }) {
            return "image id \(id) is all zeros, which names no build (an empty LC_UUID); upload the symbols of a binary linked with a UUID"
        }
        return nil
    }

    /// The first problem, as (field, message), or `nil`: at most ``maximumImages`` images,
    /// each with an id of 16 to 64 lowercase hex digits (even) and not all zeros (``idProblem(_:)``), a file name (``WireText``,
    /// no `/`), an architecture of 1 to 16 letters, digits or `_`, and at most
    /// ``maximumSymbols`` symbols sorted by offset, not overlapping, each at least 1 byte
    /// long, ending below 2⁶⁴, named by 1 to ``maximumNameLength`` bytes (``WireText``: no
    /// control, format or separator characters); no image id twice.
    public func problem() -> (String, String)? {
        if images.count > Self.maximumImages { return ("images", "an upload holds at most \(Self.maximumImages) images") }
        var ids: Set<String> = []
        for (position, image) in images.enumerated() {
            let field = "images[\(position)]"
            guard ids.insert(image.id).inserted else { return ("\(field).id", "image \(image.id) is given twice") }
            if let problem = Self.idProblem(image.id) { return ("\(field).id", problem) }
            if let problem = WireText.problem(in: image.name, maximumBytes: HangStack.maximumImageNameLength) {
                return ("\(field).name", "an image name \(problem)")
            }
            if image.name.utf8.contains(UInt8(ascii: "/")) { return ("\(field).name", "an image name is a file name without its folder") }
            guard (1...16).contains(image.arch.utf8.count),
                  image.arch.utf8.allSatisfy({ $0 < 0x80 && (($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_")) }) else {
                return ("\(field).arch", "arch is 1–16 letters, digits or '_' (arm64, x86_64)")
            }
            if image.symbols.count > Self.maximumSymbols { return ("\(field).symbols", "an image holds at most \(Self.maximumSymbols) symbols") }
            var previousEnd: UInt64 = 0
            for (index, symbol) in image.symbols.enumerated() {
                let (end, overflow) = symbol.offset.addingReportingOverflow(symbol.size)
                guard symbol.size >= 1, !overflow else {
                    return ("\(field).symbols[\(index)]", "a symbol is at least 1 byte long and ends below 2^64")
                }
                guard symbol.offset >= previousEnd else {
                    return ("\(field).symbols[\(index)]", "symbols must be sorted by offset and may not overlap")
                }
                previousEnd = end
                if let problem = WireText.problem(in: symbol.name, maximumBytes: Self.maximumNameLength) {
                    return ("\(field).symbols[\(index)]", "a symbol's name \(problem)")
                }
            }
        }
        return nil
    }
}
