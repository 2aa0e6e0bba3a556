import FramescopeCore
@testable import FramescopeSDK
import Testing

@Suite("Device models: lifecycle, screen names, motion, overlay, network")
struct DeviceModelTests {
    // MARK: Lifecycle

    @Test("A plain launch measures nothing until the app is active, then frames before hangs resume")
    func launchThenActive() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch(environment: [:], bundlePath: "/var/containers/Bundle/Application/X/Shop.app",
                                                                 isDebuggerAttached: false))
        #expect(!lifecycle.launch.isPrewarmed && !lifecycle.isOff)
        #expect(lifecycle.start() == [.pauseHangReports, .pauseFrames])
        #expect(lifecycle.handle(.didBecomeActive) == [.resumeFrames, .resumeHangReports])
        #expect(lifecycle.measuresFrames && lifecycle.reportsHangs)
        #expect(lifecycle.handle(.didBecomeActive) == [])
    }

    @Test("A system alert over the app pauses hangs, then frames, and both come back after it")
    func systemAlert() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch())
        _ = lifecycle.start()
        _ = lifecycle.handle(.didBecomeActive)
        #expect(lifecycle.handle(.willResignActive) == [.pauseHangReports, .pauseFrames])
        #expect(!lifecycle.measuresFrames && !lifecycle.isInBackground)
        #expect(lifecycle.handle(.didBecomeActive) == [.resumeFrames, .resumeHangReports])
    }

    @Test("Background: resign, enter background (flush), enter foreground (still off), become active")
    func background() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch())
        _ = lifecycle.start()
        _ = lifecycle.handle(.didBecomeActive)
        #expect(lifecycle.handle(.willResignActive) == [.pauseHangReports, .pauseFrames])
        #expect(lifecycle.handle(.didEnterBackground) == [.flush])
        #expect(lifecycle.isInBackground)
        #expect(lifecycle.handle(.willEnterForeground) == [])
        #expect(!lifecycle.measuresFrames)
        #expect(lifecycle.handle(.didBecomeActive) == [.resumeFrames, .resumeHangReports])
        // Straight to the background with no resign first (a crash of the notification order) still pauses.
        #expect(lifecycle.handle(.didEnterBackground) == [.pauseHangReports, .pauseFrames, .flush])
    }

    @Test("A pre-warmed launch waits in the background until the user opens the app")
    func prewarm() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch(environment: ["ActivePrewarm": "1"], bundlePath: "/x/Shop.app",
                                                                 isDebuggerAttached: false))
        #expect(lifecycle.launch.isPrewarmed)
        #expect(lifecycle.start() == [.pauseHangReports, .pauseFrames])
        // The system pre-warms, suspends; the process sees background notifications only.
        #expect(lifecycle.handle(.didEnterBackground) == [.flush])
        #expect(lifecycle.handle(.willEnterForeground) == [])
        #expect(!lifecycle.measuresFrames)
        #expect(lifecycle.handle(.didBecomeActive) == [.resumeFrames, .resumeHangReports])
        #expect(AppLifecycle.Launch(environment: ["ActivePrewarm": "0"], bundlePath: "/x", isDebuggerAttached: false).isPrewarmed == false)
    }

    @Test("Scenes: active while any scene is; a disconnected scene stops counting")
    func scenes() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch())
        _ = lifecycle.start()
        #expect(lifecycle.handle(.sceneDidActivate("A")) == [.resumeFrames, .resumeHangReports])
        #expect(lifecycle.handle(.sceneDidActivate("B")) == [])
        #expect(lifecycle.handle(.sceneWillDeactivate("A")) == [])
        // With scenes, the application's own notification does not decide.
        #expect(lifecycle.handle(.willResignActive) == [])
        #expect(lifecycle.handle(.sceneDidDisconnect("B")) == [.pauseHangReports, .pauseFrames])
        #expect(lifecycle.activeScenes.isEmpty && lifecycle.usesScenes)
        #expect(lifecycle.handle(.sceneDidActivate("A")) == [.resumeFrames, .resumeHangReports])
        #expect(lifecycle.handle(.didEnterBackground) == [.pauseHangReports, .pauseFrames, .flush])
        #expect(lifecycle.activeScenes.isEmpty)
    }

    @Test("A debugger turns hang reports off and frames stay measured")
    func debugger() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch(isDebuggerAttached: true))
        #expect(lifecycle.start() == [.pauseHangReports, .pauseFrames])
        #expect(lifecycle.handle(.didBecomeActive) == [.resumeFrames])
        #expect(lifecycle.measuresFrames && !lifecycle.reportsHangs)
        #expect(lifecycle.handle(.debugger(attached: false)) == [.resumeHangReports])
        #expect(lifecycle.handle(.debugger(attached: true)) == [.pauseHangReports])
        #expect(lifecycle.handle(.willResignActive) == [.pauseFrames])
        #expect(lifecycle.handle(.debugger(attached: false)) == [])
        #expect(lifecycle.handle(.didBecomeActive) == [.resumeFrames, .resumeHangReports])
    }

    @Test("App extensions and widgets stay off unless allowed")
    func extensions() {
        let launch = AppLifecycle.Launch(environment: [:], bundlePath: "/x/Shop.app/PlugIns/Widget.appex", isDebuggerAttached: false)
        #expect(launch.isAppExtension)
        var off = AppLifecycle(launch: launch)
        #expect(off.isOff)
        #expect(off.start() == [.pauseHangReports, .pauseFrames])
        for event: AppLifecycle.Event in [.didBecomeActive, .sceneDidActivate("A"), .didEnterBackground, .willEnterForeground, .debugger(attached: false)] {
            #expect(off.handle(event) == [], "\(event)")
        }
        var allowed = launch
        allowed.measuresExtensions = true
        var on = AppLifecycle(launch: allowed)
        _ = on.start()
        #expect(on.handle(.didBecomeActive) == [.resumeFrames, .resumeHangReports])
    }

    @Test("Events before start only record state; start then settles on it")
    func beforeStart() {
        var lifecycle = AppLifecycle(launch: AppLifecycle.Launch())
        #expect(lifecycle.handle(.didBecomeActive) == [])
        #expect(lifecycle.start() == [])
        #expect(lifecycle.measuresFrames)
    }

    // MARK: Screen names

    @Test("Screen names from type names, identifiers and overrides", arguments: [
        ("MyApp.FeedViewController", nil, nil, "Feed"),
        ("MyApp.ListViewController<MyApp.Item>", nil, nil, "List"),
        ("SwiftUI.UIHostingController<SwiftUI.ModifiedContent<MyApp.SettingsView, SwiftUI._PaddingLayout>>", nil, nil, "Settings"),
        ("MyApp.(unknown context at $1004c8f20).ProfileScreen", nil, nil, "Profile"),
        ("MyApp.Checkout.PaymentController", nil, nil, "Payment"),
        ("MyApp.ViewController", nil, nil, "ViewController"),
        ("MyApp.FeedViewController", "feed-screen", nil, "feed-screen"),
        ("MyApp.FeedViewController", "  ", nil, "Feed"),
        ("MyApp.FeedViewController", "feed-screen", "Home feed", "Home feed"),
        ("SearchView", nil, nil, "Search"),
        ("UINavigationController", nil, nil, nil),
        ("UITabBarController", "tabs", nil, nil),
        ("UIInputWindowController", nil, nil, nil),
        ("UIAlertController", nil, nil, nil),
        ("_UIPrivateThing", nil, nil, nil),
        ("SwiftUI.UIHostingController<SwiftUI.AnyView>", nil, nil, nil),
        ("UINavigationController", nil, "Checkout", "Checkout"),
    ] as [(String, String?, String?, String?)])
    func screenNames(typeName: String, identifier: String?, override: String?, expected: String?) {
        #expect(ScreenNaming().screenName(typeName: typeName, accessibilityIdentifier: identifier, override: override) == expected)
    }

    @Test("Containers are skipped for their visible child; an app's own containers too")
    func containers() {
        let naming = ScreenNaming(containers: ["DrawerController"])
        let chain: [(typeName: String, accessibilityIdentifier: String?, override: String?)] = [
            ("MyApp.DrawerController", nil, nil), ("UITabBarController", nil, nil), ("UINavigationController", nil, nil),
            ("MyApp.OrderDetailViewController", nil, nil),
        ]
        #expect(naming.visibleScreen(chain) == "OrderDetail")
        #expect(naming.visibleScreen(Array(chain.prefix(3))) == nil)
        #expect(ScreenNaming().visibleScreen(Array(chain.prefix(1))) == "Drawer")
        #expect(naming.screenName(typeName: "MyApp.DrawerController<MyApp.Menu>") == nil)
    }

    @Test("A child embedded in another controller is part of its parent's screen; a container's child is a screen")
    func embeddedChildren() {
        let naming = ScreenNaming()
        #expect(naming.screenName(typeName: "MyApp.BannerViewController", parentTypeName: "MyApp.FeedViewController") == nil)
        #expect(naming.screenName(typeName: "MyApp.BannerViewController", override: "Banner", parentTypeName: "MyApp.FeedViewController") == "Banner")
        #expect(naming.screenName(typeName: "MyApp.FeedViewController", parentTypeName: "UINavigationController") == "Feed")
        #expect(naming.screenName(typeName: "MyApp.FeedViewController", parentTypeName: "MyApp.Tabs") == nil)
        #expect(ScreenNaming(containers: ["Tabs"]).screenName(typeName: "MyApp.FeedViewController", parentTypeName: "MyApp.Tabs") == "Feed")
        #expect(naming.screenName(typeName: "SwiftUI.UIHostingController<MyApp.CardView>", parentTypeName: "MyApp.FeedViewController") == nil)
    }

    @Test("takeUpdate: the cheap check a driver makes every frame before reading the visit's report")
    func overlayTakeUpdate() {
        var overlay = OverlayModel(updateInterval: 0.25)
        let answers = [overlay.takeUpdate(at: 10), overlay.takeUpdate(at: 10.2),
                       overlay.update(at: 10.24, hitchRatio: nil, hangUnderWay: nil, screen: nil) != nil, overlay.takeUpdate(at: 10.25)]
        #expect(answers == [true, false, false, true])
        let state = overlay.update(at: 10.5, hitchRatio: 1, hangUnderWay: nil, screen: "Feed")
        #expect(state?.screen == "Feed")
    }

    // MARK: Motion

    @Test("Motion: nested sources give one stretch; the end waits out the debounce")
    func motionNesting() {
        var motion = MotionSignal(debounce: 0.1)
        #expect(motion.began(.scrollView(1), at: 0) == .begin)
        #expect(motion.began(.trackingMode, at: 0.01) == nil)
        #expect(motion.began(.scrollView(2), at: 0.2) == nil)
        #expect(motion.ended(.trackingMode, at: 0.5) == nil)
        #expect(motion.ended(.scrollView(1), at: 0.6) == nil)
        #expect(motion.tick(at: 0.9) == nil, "scroll view 2 still moves")
        #expect(motion.ended(.scrollView(2), at: 1.0) == nil)
        #expect(motion.tick(at: 1.05) == nil)
        #expect(motion.isInMotion)
        #expect(motion.tick(at: 1.1) == .end)
        #expect(motion.tick(at: 2) == nil)
    }

    @Test("Motion: a fling that ends in a bounce stays one stretch; a stray end is ignored")
    func motionBounce() {
        var motion = MotionSignal(debounce: 0.1)
        #expect(motion.ended(.scrollView(7), at: 0) == nil, "didEndDecelerating after a programmatic scroll")
        #expect(motion.began(.scrollView(7), at: 1) == .begin)          // willBeginDragging
        #expect(motion.ended(.scrollView(7), at: 1.5) == nil)           // didEndDecelerating as it hits the edge
        #expect(motion.began(.scrollView(7), at: 1.55) == nil)          // the bounce back
        #expect(motion.ended(.scrollView(7), at: 1.9) == nil)
        #expect(motion.tick(at: 1.99) == nil)
        #expect(motion.tick(at: 2.0) == .end)
        #expect(motion.began(.custom("carousel"), at: 3) == .begin)
        #expect(motion.reset() == .end)
        #expect(motion.ended(.custom("carousel"), at: 3.1) == nil)
        var immediate = MotionSignal(debounce: 0)
        _ = immediate.began(.trackingMode, at: 0)
        #expect(immediate.ended(.trackingMode, at: 1) == .end)
    }

    // MARK: Overlay

    /// Feeds `count` ticks `interval` apart from `start`, each declaring a `refresh` interval.
    func feed(_ overlay: inout OverlayModel, from start: Double, count: Int, interval: Double, refresh: Double) -> Double {
        var time = start
        for _ in 0..<count {
            overlay.tick(timestamp: time, targetTimestamp: time + refresh, refreshInterval: refresh)
            time += interval
        }
        return time - interval
    }

    @Test("Overlay: FPS of the last second beside the refresh rate; ProMotion idling is not a drop")
    func overlayProMotion() {
        var overlay = OverlayModel()
        var last = feed(&overlay, from: 10, count: 240, interval: 1.0 / 120, refresh: 1.0 / 120)
        var state = overlay.state(hitchRatio: 0, hangUnderWay: nil, screen: "Feed")
        #expect(abs((state.fps ?? 0) - 120) < 0.01)
        #expect(abs((state.refreshRate ?? 0) - 120) < 0.01)
        #expect(state.droppedFrames == 0 && state.band == .good)
        // The screen goes still and ProMotion drops to 10 Hz: 10 FPS of 10 Hz, nothing dropped.
        last = feed(&overlay, from: last + 0.1, count: 20, interval: 0.1, refresh: 0.1)
        state = overlay.state(hitchRatio: 0, hangUnderWay: nil, screen: "Feed")
        #expect(abs((state.fps ?? 0) - 10) < 0.01)
        #expect(abs((state.refreshRate ?? 0) - 10) < 0.01)
        #expect(state.droppedFrames == 0 && state.dropEvents == 0)
        #expect(state.line == "10 FPS / 10 Hz · 0 dropped in 0 · 0.0 ms/s good · Feed")
    }

    @Test("Overlay: drops and drop events of the last second only, with Low Power Mode's 60 Hz cap shown")
    func overlayDrops() {
        var overlay = OverlayModel()
        var time = feed(&overlay, from: 0, count: 60, interval: 1.0 / 60, refresh: 1.0 / 60)
        // One interval three refreshes long (2 dropped), one two long (1 dropped).
        time += 3.0 / 60
        overlay.tick(timestamp: time, targetTimestamp: time + 1.0 / 60, refreshInterval: nil)
        time += 2.0 / 60
        overlay.tick(timestamp: time, targetTimestamp: time + 1.0 / 60, refreshInterval: nil)
        var state = overlay.state(hitchRatio: 7.5, hangUnderWay: nil, screen: nil)
        #expect(state.droppedFrames == 3 && state.dropEvents == 2)
        #expect(state.band == .warning)
        #expect(abs((state.refreshRate ?? 0) - 60) < 0.01)
        #expect(state.line == "\(OverlayModel.State.whole(state.fps)) FPS / 60 Hz · 3 dropped in 2 · 7.5 ms/s warning")
        // A second later the drops have left the window.
        _ = feed(&overlay, from: time + 1.0 / 60, count: 61, interval: 1.0 / 60, refresh: 1.0 / 60)
        state = overlay.state(hitchRatio: 12, hangUnderWay: 0.84, screen: "Feed")
        #expect(state.droppedFrames == 0 && state.dropEvents == 0)
        #expect(state.band == .critical)
        #expect(state.expanded == """
            Feed
            FPS 60 of 60 Hz, last second
            Dropped 0 frames in 0 events, last second
            Hitch ratio 12.0 ms/s, critical (visit)
            Hang under way: 0.8 s
            """)
        #expect(state.line.hasSuffix("HANG 0.8 s · Feed"))
    }

    @Test("Overlay: at most four updates a second; bad ticks are ignored; reset forgets")
    func overlayUpdatesAndBadTicks() {
        var overlay = OverlayModel()
        var updates = 0
        var time = 0.0
        for _ in 0..<120 {
            overlay.tick(timestamp: time, targetTimestamp: time + 1.0 / 60, refreshInterval: 1.0 / 60)
            if overlay.update(at: time, hitchRatio: nil, hangUnderWay: nil, screen: nil) != nil { updates += 1 }
            time += 1.0 / 60
        }
        #expect(updates == 8)
        let before = overlay.state(hitchRatio: nil, hangUnderWay: nil, screen: nil)
        overlay.tick(timestamp: .nan, targetTimestamp: 1, refreshInterval: nil)
        overlay.tick(timestamp: time - 1, targetTimestamp: time, refreshInterval: nil)       // backwards
        overlay.tick(timestamp: time, targetTimestamp: time + 5, refreshInterval: nil)       // 0.2 Hz target
        overlay.tick(timestamp: time, targetTimestamp: nil, refreshInterval: nil)
        #expect(overlay.state(hitchRatio: nil, hangUnderWay: nil, screen: nil) == before)
        #expect(before.band == nil && before.line.contains("– ms/s –"))
        overlay.reset()
        let empty = overlay.state(hitchRatio: nil, hangUnderWay: nil, screen: nil)
        #expect(empty.fps == nil && empty.droppedFrames == 0)
    }

    @Test("Overlay: a 1,000 Hz stream fills the ring without losing the window's count")
    func overlayRing() {
        var overlay = OverlayModel()
        _ = feed(&overlay, from: 0, count: 5_000, interval: 0.001, refresh: 0.001)
        let state = overlay.state(hitchRatio: nil, hangUnderWay: nil, screen: nil)
        #expect(abs((state.fps ?? 0) - 1_000) < 1)
    }

    @Test("Hitch bands: Apple's edges at 5 and 10 ms/s")
    func bands() {
        #expect(Band.hitchRatio(4.99) == .good)
        #expect(Band.hitchRatio(5) == .warning)
        #expect(Band.hitchRatio(10) == .warning)
        #expect(Band.hitchRatio(10.01) == .critical)
        #expect(Band.hitchRatio(.nan) == nil && Band.hitchRatio(nil) == nil && Band.hitchRatio(-1) == nil)
    }

    // MARK: Network

    @Test("Network state from a path monitor's answers")
    func network() {
        #expect(VisitContext.Network(isSatisfied: false, usesWiFi: true, usesCellular: false, usesWired: false) == .offline)
        #expect(VisitContext.Network(isSatisfied: true, usesWiFi: true, usesCellular: true, usesWired: false) == .wifi)
        #expect(VisitContext.Network(isSatisfied: true, usesWiFi: false, usesCellular: true, usesWired: false) == .cellular)
        #expect(VisitContext.Network(isSatisfied: true, usesWiFi: false, usesCellular: false, usesWired: true) == .ethernet)
        #expect(VisitContext.Network(isSatisfied: true, usesWiFi: false, usesCellular: false, usesWired: false) == .unknown)
        let box = NetworkStateBox()
        #expect(box.current == .unknown)
        box.update(.cellular)
        #expect(box.current == .cellular)
    }
}
