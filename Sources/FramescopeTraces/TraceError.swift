import FramescopeCore

/// A trace that cannot be read: where (file and line) and what is wrong.
///
/// ``Kind/data`` means the bytes are not a usable trace (the CLI exits 65);
/// ``Kind/io`` means they could not be read at all (exit 74).
public struct TraceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Kind: Sendable, Hashable {
        /// The content is not a usable trace.
        case data
        /// The file could not be opened or read.
        case io
    }

    /// Data or I/O.
    public var kind: Kind
    /// The file's path as the user gave it.
    public var file: String
    /// The 1-based line the problem is on, when it is on one.
    public var line: Int?
    /// What is wrong and, where it helps, what to do.
    public var message: String
    /// Whether the input was cut short (a gzip stream without its end): what was read
    /// before the error was good, and a reader that can says what it made of it.
    public var truncated = false
    /// What the ticks read before a cut-short input give (``TraceReader/analyze(from:configuration:refreshRateOverride:progress:)``
    /// fills it in when ``truncated``).
    public var partialReport: RecordingReport?

    /// Creates an error.
    public init(kind: Kind, file: String, line: Int? = nil, message: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`.
    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
