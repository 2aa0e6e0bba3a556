/// Text for ClickHouse SQL. ClickHouse 18.16 has no bound query parameters over HTTP, so
/// a value from outside becomes a string literal with ``quote(_:)``, and names (database,
/// table, cluster) come from configuration and must pass ``isIdentifier(_:)``.
public enum ClickHouseSQL {
    /// `text` as a single-quoted string literal: `\` and `'` escaped with a backslash, every
    /// other Unicode scalar as it is (ClickHouse reads string literals as bytes, so a NUL,
    /// a line feed or a right-to-left override stay data).
    public static func quote(_ text: String) -> String {
        var quoted = "'"
        quoted.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 2)
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "'" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(scalar)
        }
        quoted.unicodeScalars.append("'")
        return quoted
    }

    /// Whether `name` is a plain identifier: ASCII letters, digits and `_`, not starting with
    /// a digit, 1 to 64 characters.
    public static func isIdentifier(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), let first = bytes.first, !(0x30...0x39).contains(first) else { return false }
        return bytes.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F }
    }
}
