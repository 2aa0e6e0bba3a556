/// When the SDK measures, decided from the app's lifecycle: a state machine fed with the
/// platform's events (application and scene notifications, a debugger, the launch) that
/// answers what to pause, resume or flush.
///
/// Frames are measured only while the app is in the foreground and active: never in the
/// background, behind a system alert or before a pre-warmed launch is opened, so none of
/// that time counts as a drop or a hang. Hang reports are also off while a debugger is
/// attached (a breakpoint stops the main thread), and app extensions and widgets are off
/// unless ``Launch/measuresExtensions`` says otherwise.
///
/// ```swift
/// var lifecycle = AppLifecycle(launch: AppLifecycle.Launch(environment: ["ActivePrewarm": "1"],
///                                                           bundlePath: "/…/My.app", isDebuggerAttached: false))
/// framescope.apply(lifecycle.start())            // [.pauseFrames, .pauseHangReports]
/// framescope.apply(lifecycle.handle(.didBecomeActive))   // [.resumeFrames, .resumeHangReports]
/// ```
///
/// The Apple glue forwards each notification (`DisplayLinkDriver`); every decision is here.
public struct AppLifecycle: Sendable, Hashable {
    /// What the process knew when it launched.
    public struct Launch: Sendable, Hashable {
        /// The system launched the process ahead of the user (iOS 15's pre-warming sets
        /// `ActivePrewarm=1` in the environment).
        public var isPrewarmed: Bool
        /// The process is an app extension or a widget (its bundle ends in `.appex`).
        public var isAppExtension: Bool
        /// A debugger is attached.
        public var isDebuggerAttached: Bool
        /// Measure in app extensions and widgets too (off by default: they live briefly,
        /// inside another app's frames).
        public var measuresExtensions: Bool

        /// A launch from its facts.
        public init(isPrewarmed: Bool = false, isAppExtension: Bool = false, isDebuggerAttached: Bool = false,
                    measuresExtensions: Bool = false) {
            self.isPrewarmed = isPrewarmed
            self.isAppExtension = isAppExtension
            self.isDebuggerAttached = isDebuggerAttached
            self.measuresExtensions = measuresExtensions
        }

        /// A launch read from the process's environment and its main bundle's path.
        ///
        /// - Parameters:
        ///   - environment: The process's environment (`ProcessInfo.processInfo.environment`).
        ///   - bundlePath: The main bundle's path (`Bundle.main.bundlePath`).
        ///   - isDebuggerAttached: Whether a debugger is attached (`P_TRACED` on Apple platforms).
        ///   - measuresExtensions: Measure in extensions and widgets too.
        public init(environment: [String: String], bundlePath: String, isDebuggerAttached: Bool, measuresExtensions: Bool = false) {
            self.init(isPrewarmed: environment["ActivePrewarm"] == "1",
                      isAppExtension: bundlePath.hasSuffix(".appex") || bundlePath.hasSuffix(".appex/"),
                      isDebuggerAttached: isDebuggerAttached, measuresExtensions: measuresExtensions)
        }
    }

    /// An event of the platform's lifecycle.
    public enum Event: Sendable, Hashable {
        /// `UIApplication.didBecomeActiveNotification`: in front, taking touches.
        case didBecomeActive
        /// `UIApplication.willResignActiveNotification`: a system alert, a call, Control
        /// Center or the app switcher covers the app, or it is on its way to the background.
        case willResignActive
        /// `UIApplication.didEnterBackgroundNotification`.
        case didEnterBackground
        /// `UIApplication.willEnterForegroundNotification` (still inactive until it becomes active).
        case willEnterForeground
        /// `UIScene.didActivateNotification` for the scene with this identifier (`session.persistentIdentifier`).
        case sceneDidActivate(String)
        /// `UIScene.willDeactivateNotification` for the scene with this identifier.
        case sceneWillDeactivate(String)
        /// `UIScene.didDisconnectNotification` for the scene with this identifier.
        case sceneDidDisconnect(String)
        /// A debugger was found attached (true) or gone (false).
        case debugger(attached: Bool)
    }

    /// What the SDK must do after an event.
    public enum Action: Sendable, Hashable {
        /// Stop measuring frames; the time until ``resumeFrames`` is not counted.
        case pauseFrames
        /// Measure frames again, from a fresh first frame.
        case resumeFrames
        /// Stop reporting hangs; a hang under way is not reported.
        case pauseHangReports
        /// Report hangs again, measuring afresh from now.
        case resumeHangReports
        /// Deliver what is queued now (the app is going to the background).
        case flush
    }

    /// The launch this lifecycle began with.
    public let launch: Launch
    /// Whether the app is active by the application's notifications.
    public private(set) var isApplicationActive = false
    /// Whether the app is in the background.
    public private(set) var isInBackground = false
    /// The scenes in the foreground and active, by identifier (an app with scenes is active
    /// while any is).
    public private(set) var activeScenes: Set<String> = []
    /// Whether any scene event has been seen (then scenes decide, not the application's notifications).
    public private(set) var usesScenes = false
    /// Whether a debugger is attached.
    public private(set) var isDebuggerAttached: Bool
    private var started = false
    private var framesOn = true
    private var hangsOn = true

    /// A lifecycle for `launch`, not yet active: a pre-warmed launch waits for its first
    /// activation like any other.
    public init(launch: Launch) {
        self.launch = launch
        isDebuggerAttached = launch.isDebuggerAttached
    }

    /// Whether the SDK stays off for this whole process (an app extension or widget, unless allowed).
    public var isOff: Bool { launch.isAppExtension && !launch.measuresExtensions }

    /// Whether frames should be measured now.
    public var measuresFrames: Bool {
        guard !isOff, !isInBackground else { return false }
        return usesScenes ? !activeScenes.isEmpty : isApplicationActive
    }

    /// Whether hangs should be reported now.
    public var reportsHangs: Bool { measuresFrames && !isDebuggerAttached }

    /// The actions that bring a freshly started SDK (measuring, reporting hangs) to this
    /// state: call once, when the SDK starts.
    public mutating func start() -> [Action] {
        started = true
        return settle()
    }

    /// Takes in `event` and answers the actions it calls for, in order (none when nothing changes).
    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .didBecomeActive:
            isApplicationActive = true
            isInBackground = false
        case .willResignActive:
            isApplicationActive = false
        case .didEnterBackground:
            isApplicationActive = false
            isInBackground = true
            activeScenes = []
        case .willEnterForeground:
            isInBackground = false
        case let .sceneDidActivate(scene):
            usesScenes = true
            isInBackground = false
            activeScenes.insert(scene)
        case let .sceneWillDeactivate(scene), let .sceneDidDisconnect(scene):
            usesScenes = true
            activeScenes.remove(scene)
        case let .debugger(attached):
            isDebuggerAttached = attached
        }
        guard started else { return [] }
        actions = settle()
        if event == .didEnterBackground, !isOff { actions.append(.flush) }
        return actions
    }

    /// The actions that move the SDK from what it does to what it should do.
    private mutating func settle() -> [Action] {
        var actions: [Action] = []
        let frames = measuresFrames
        let hangs = reportsHangs
        // Hang reports stop before frames do and start after them, so a hang is never
        // reported over a span whose frames are not measured.
        if hangsOn, !hangs { actions.append(.pauseHangReports) }
        if framesOn != frames { actions.append(frames ? .resumeFrames : .pauseFrames) }
        if !hangsOn, hangs { actions.append(.resumeHangReports) }
        framesOn = frames
        hangsOn = hangs
        return actions
    }
}
