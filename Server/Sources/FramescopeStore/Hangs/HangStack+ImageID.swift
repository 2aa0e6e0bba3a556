import FramescopeCore

extension HangStack {
    /// An image id as the collector keys it: dashes removed, lowercase (hangs and symbol uploads alike).
    package static func normalizedImageID(_ id: String) -> String {
        String(id.unicodeScalars.filter { $0 != "-" }).lowercased()
    }

    /// Whether `id` is an image id as stored: 16 to 64 lowercase hex digits, an even count
    /// (a Mach-O UUID has 32, a GNU build id usually 40).
    package static func isImageID(_ id: String) -> Bool {
        let digits = id.utf8
        return (16...64).contains(digits.count) && digits.count % 2 == 0
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
