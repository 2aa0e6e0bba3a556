/// A hang the process died in: the system's watchdog killed it, the user force-quit the
/// frozen app, or it was killed (`kill -9`) while the main thread hung. The SDK writes the
/// hang's record to its folder when the hang begins, updates it at each sample, deletes it
/// when the hang ends, and sends a record it finds at the next launch as this event, in the
/// `events` of a batch beside visits (`"kind": "fatalHang"`).
///
/// It names its own app version, build and OS version: the launch that sends it may run
/// after an update. The collector keeps one per ``id``, so a record sent twice (a kill
/// between its delivery and its deletion) counts once.
public struct FatalHangEvent: Sendable, Hashable, Codable {
    /// The kind of event: `fatalHang`.
    public var kind: String = "fatalHang"
    /// Random, made when the hang began (1–64 letters, digits, `-`, `_`).
    public var id: String
    /// The screen the hang happened on.
    public var screen: String
    /// When the hang began, ISO 8601 in UTC.
    public var startedAt: String
    /// How long the hang had lasted when its record was last written (its last sample), in
    /// seconds: a lower bound of its length.
    public var duration: Double
    /// The app version of the launch that hung.
    public var appVersion: String
    /// The build of the launch that hung.
    public var build: String
    /// The OS version of the launch that hung.
    public var osVersion: String
    /// Network, power and thermal state, plus custom tags, when the hang began.
    public var context: VisitContext
    /// The main thread's stack sampled until the record was last written, or `nil` when
    /// none was taken.
    public var stack: HangStack?

    /// Creates a fatal hang.
    public init(id: String, screen: String, startedAt: String, duration: Double, appVersion: String, build: String,
                osVersion: String, context: VisitContext, stack: HangStack?) {
        self.id = id
        self.screen = screen
        self.startedAt = startedAt
        self.duration = duration
        self.appVersion = appVersion
        self.build = build
        self.osVersion = osVersion
        self.context = context
        self.stack = stack
    }
}
