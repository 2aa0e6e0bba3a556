/// What a JSON scanner refused, and where.
///
/// The scanners stop at the first thing they do not accept. A caller with a better way to
/// say what went wrong (the collector falls back to `JSONDecoder`, whose messages name the
/// field) may drop the message; one without (a trace file) shows it with the line.
public struct JSONScanError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset where the scanner stopped, from the start of the input; -1 when the
    /// refusal is not about a place (a caller's own "not accepted here").
    public var offset: Int
    /// What was expected or found, for a person.
    public var message: String

    /// A refusal at `offset` (bytes from the start); without arguments, a refusal with no
    /// place or detail, for a caller that only needs to say "not this way".
    public init(offset: Int = -1, message: String = "not accepted here") {
        self.offset = offset
        self.message = message
    }

    /// `message (at byte N)`.
    public var description: String {
        offset >= 0 ? "\(message) (at byte \(offset))" : message
    }
}
