extension String {
    /// The text of `bytes` when they are valid UTF-8, else `nil`: what the standard
    /// library's `String(validating:as:)` does, which needs iOS 18 and macOS 15 while the
    /// package supports iOS 17 and macOS 14.
    /// - Complexity: O(n), two passes (validate, then decode).
    public init?<Bytes: Collection>(utf8Validating bytes: Bytes) where Bytes.Element == UInt8 {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: self.init(decoding: bytes, as: UTF8.self); return
            case .error: return nil
            }
        }
    }
}

extension String {
    /// The text of `bytes` when they are valid UTF-8 (Unicode's table of well-formed byte
    /// sequences: no overlong forms, surrogates or scalars past U+10FFFF), else `nil`.
    ///
    /// The same answer as the generic initializer, in one plain loop over the bytes: the
    /// generic one parses scalar by scalar through an iterator, which a debug build runs
    /// unspecialised at about a microsecond a byte (3.7 s for the 5.3 MB of escaped base64
    /// of issue 43, item 8).
    /// - Complexity: O(n).
    public init?(utf8Validating bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        var index = 0
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return nil
            }
            guard count - index >= length, bytes[index + 1] >= low, bytes[index + 1] <= high else { return nil }
            var next = index + 2
            while next < index + length {
                guard bytes[next] & 0xC0 == 0x80 else { return nil }
                next += 1
            }
            index += length
        }
        self.init(decoding: bytes, as: UTF8.self)
    }
}
