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
