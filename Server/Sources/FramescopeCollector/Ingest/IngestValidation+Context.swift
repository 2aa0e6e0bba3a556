import FramescopeCore
import FramescopeStore

/// The rules a visit and a fatal hang share (issue 44, item 5): written once, called by both
/// validators in their own order, so each keeps its first problem and every message.
extension IngestValidator {
    /// Whether `text` is 1–64 ASCII letters, digits, '-' or '_': a batch's id, an
    /// installation's, a fatal hang's.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// `tags` with keys and values in NFC (``CanonicalText``), and the first key that two
    /// spellings became (one of their values kept), if any.
    static func normalizedTags(_ tags: [String: String]) -> (tags: [String: String], repeatedKey: String?) {
        var normal: [String: String] = [:]
        var repeated: String?
        for (key, value) in tags {
            let canonical = CanonicalText.nfc(key)
            if normal.updateValue(CanonicalText.nfc(value), forKey: canonical) != nil, repeated == nil { repeated = canonical }
        }
        return (normal, repeated)
    }

    /// The first problem with a visit's or a fatal hang's tags, as (field, message), or
    /// `nil`: at most ``VisitContext/maximumTags``, each key and value wire text of at most
    /// ``VisitContext/maximumTagLength`` bytes (a value may be empty), no value reserved for
    /// folded values (`(other)`) or visits without the tag (``DeclaredTags/none``). Keys in
    /// byte order, so the problem named is the same on every read.
    static func tagProblem(_ tags: [String: String]) -> (String, String)? {
        if tags.count > VisitContext.maximumTags { return ("context.tags", "at most \(VisitContext.maximumTags) tags") }
        for (key, value) in tags.sorted(by: { $0.key < $1.key }) {
            if let problem = WireText.problem(in: key, maximumBytes: VisitContext.maximumTagLength) {
                return ("context.tags", "tag key \(problem)")
            }
            if let problem = WireText.problem(in: value, maximumBytes: VisitContext.maximumTagLength, allowEmpty: true) {
                return ("context.tags.\(key)", "tag value \(problem)")
            }
            if value == CardinalityLimits.other || value == DeclaredTags.none {
                return ("context.tags.\(key)", "tag value '\(value)' is reserved (folded values and visits without the tag)")
            }
        }
        return nil
    }
}
