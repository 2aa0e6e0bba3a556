/// Where the events that follow come from, in a recording that holds several: one
/// application's swap chain in a PresentMon capture, one renderer in a Chrome trace.
///
/// ``TraceReader/analyze(from:format:configuration:refreshRateOverride:process:progress:note:)``
/// analyzes each source apart and reports one: the one `--process` names, else an
/// application before any system process (``Role``), then the one that wanted the most
/// frames (shown and missed), then the one that showed the most.
public struct TraceSource: Sendable, Hashable, CustomStringConvertible {
    /// The application's name as the recording gives it (`Presenter.exe`, `Renderer`).
    public var application: String
    /// The process ID, when the recording gives one.
    public var processID: Int?
    /// What tells this source apart from others of the same process (`swap chain 0x1A2B`),
    /// or `nil`.
    public var detail: String?
    /// Whether the display this source drew on may not refresh at a fixed rate (a PC game
    /// with tearing or variable refresh), or the source draws in bursts too short to show
    /// one (a web page without `BeginFrame` events): without a declared rate, the median interval
    /// between its first 1,000 ticks stands for one, rather than the first twenty steady
    /// intervals (which such a display can show by chance at any rate).
    public var variableCadence: Bool
    /// Whether this source is what a user measures or part of the system around it.
    public var role: Role

    /// What a source is to the person who recorded it.
    public enum Role: Sendable, Hashable {
        /// A game, an app, a web page's renderer: what a recording is usually made of.
        case application
        /// Part of the system that draws beside the application (the compositor, an
        /// overlay, a browser's own UI), with why in a few words (`the compositor`): read
        /// by default only when no application showed a frame.
        case system(String)
    }

    /// Creates a source.
    public init(application: String, processID: Int? = nil, detail: String? = nil, variableCadence: Bool = false, role: Role = .application) {
        self.application = application
        self.processID = processID
        self.detail = detail
        self.variableCadence = variableCadence
        self.role = role
    }

    /// `Presenter.exe (pid 5124, swap chain 0x1A2B)`.
    public var description: String { described(reason: nil) }

    /// The ``description`` with a system source's reason: `dwm.exe (pid 1520; the compositor)`.
    public var describedWithRole: String {
        guard case let .system(reason) = role else { return description }
        return described(reason: reason)
    }

    /// The name, then the process ID and detail, then `reason` after a semicolon.
    private func described(reason: String?) -> String {
        let ids = [processID.map { "pid \($0)" }, detail].compactMap { $0 }.joined(separator: ", ")
        let parts = [ids.isEmpty ? nil : ids, reason].compactMap { $0 }.joined(separator: "; ")
        return parts.isEmpty ? application : "\(application) (\(parts))"
    }

    /// Whether `selector` (the value of `--process`) names this source: its application's
    /// name, compared without regard to case and with or without `.exe`, or its process ID.
    public func matches(_ selector: String) -> Bool {
        if let processID, String(processID) == selector { return true }
        let name = application.lowercased()
        return name == selector.lowercased() || name == selector.lowercased() + ".exe"
    }
}
