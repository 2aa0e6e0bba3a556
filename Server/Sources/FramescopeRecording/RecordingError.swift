/// Why a recording failed.
public enum RecordingError: Error, Sendable, CustomStringConvertible {
    /// The browser could not be started or stopped answering.
    case browser(String)
    /// The DevTools protocol answered with an error, or not as expected.
    case `protocol`(String)
    /// The page could not be loaded, or has no element to scroll.
    case page(String)
    /// The recording took longer than its limit.
    case timedOut(seconds: Int)

    /// What failed, for a person: "browser: …", "DevTools: …", or the page's problem.
    public var description: String {
        switch self {
        case let .browser(message): "browser: \(message)"
        case let .protocol(message): "DevTools: \(message)"
        case let .page(message): message
        case let .timedOut(seconds): "the recording did not finish within \(seconds) s"
        }
    }
}
