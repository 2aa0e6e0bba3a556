/// The rule every name and tag a device sends must follow before the collector stores
/// it: 1 to `maximumBytes` bytes of UTF-8, and no control, format, separator,
/// private-use or surrogate scalars (unassigned code points pass: a newer OS may know them).
///
/// The limit is in UTF-8 bytes, never in `Character`s: one `Character` can hold any
/// number of combining scalars, so a "128-character" name could otherwise be megabytes.
/// Format scalars (bidirectional overrides, zero-width joiners, U+0600-style prepend
/// marks) are refused because they change how neighbouring text reads or renders.
///
/// ```swift
/// WireText.problem(in: "Feed", maximumBytes: 128)         // nil
/// WireText.problem(in: "Feed\u{202E}", maximumBytes: 128)  // "contains U+202E, a format character"
/// ```
public enum WireText {
    /// What is wrong with `text`, or `nil` when it may be stored.
    /// - Parameters:
    ///   - allowEmpty: whether the empty string is acceptable (a tag's value).
    /// - Complexity: O(*n*) in the bytes of `text`, stopping at the first fault.
    public static func problem(in text: String, maximumBytes: Int, allowEmpty: Bool = false) -> String? {
        if text.utf8.isEmpty { return allowEmpty ? nil : "must not be empty" }
        if text.utf8.count > maximumBytes { return "must be at most \(maximumBytes) bytes of UTF-8, got \(text.utf8.count)" }
        for scalar in text.unicodeScalars {
            if let kind = refusedKind(of: scalar) {
                return "contains \(codePoint(scalar)), \(kind)"
            }
        }
        return nil
    }

    /// Whether `text` follows the rule.
    public static func isValid(_ text: String, maximumBytes: Int, allowEmpty: Bool = false) -> Bool {
        problem(in: text, maximumBytes: maximumBytes, allowEmpty: allowEmpty) == nil
    }

    /// `text` made to follow the rule: refused scalars removed, and cut to at most
    /// `maximumBytes` of UTF-8 at a scalar boundary; `fallback` when nothing is left. The
    /// SDK passes screen names through it, so a visit is never refused for its name.
    public static func sanitized(_ text: String, maximumBytes: Int, fallback: String) -> String {
        var scalars = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars where refusedKind(of: scalar) == nil {
            let width = UTF8.width(scalar)
            guard bytes + width <= maximumBytes else { break }
            scalars.append(scalar)
            bytes += width
        }
        return scalars.isEmpty ? fallback : String(scalars)
    }

    /// The kind of scalar that is refused, or `nil` for one that is allowed.
    package static func refusedKind(of scalar: Unicode.Scalar) -> String? {
        switch scalar.properties.generalCategory {
        case .control: "a control character"
        case .format: "a format character"
        case .lineSeparator, .paragraphSeparator: "a line or paragraph separator"
        case .privateUse: "a private-use character"
        case .surrogate: "a surrogate"
        default: nil
        }
    }

    /// `U+XXXX` for a scalar.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
