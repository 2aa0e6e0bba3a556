import Dispatch

/// A dispatch source (timer, user data) held where a `Sendable` value is needed.
/// libdispatch objects may be used from any thread; the Linux `Dispatch` overlay just
/// does not mark the source types `Sendable`.
struct SendableDispatchSource<Source>: @unchecked Sendable {
    let source: Source

    init(_ source: Source) {
        self.source = source
    }
}
