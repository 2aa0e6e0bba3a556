#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import Foundation
import QuartzCore
import UIKit

/// Drives a ``Framescope`` from a `CADisplayLink` on the main run loop: one tick per display
/// refresh, the app's lifecycle, motion and the live overlay. It only forwards; every
/// decision is made by ``AppLifecycle``, ``MotionSignal`` and ``OverlayModel``.
///
/// ```swift
/// framescope.start()                                  // first: lifecycle actions need a started SDK
/// let driver = DisplayLinkDriver(framescope: framescope)
/// driver.start()
/// ```
///
/// Keep the driver: the display link holds it until ``stop()``. In an app extension or a
/// widget (unless `measuresExtensions`) ``start()`` pauses the SDK and adds no display link.
@MainActor
public final class DisplayLinkDriver: NSObject {
    let framescope: Framescope
    private var lifecycle: AppLifecycle
    private var link: CADisplayLink?
    private var observers: [any NSObjectProtocol] = []
    /// Turns scroll and tracking-mode callbacks into motion (see `RunLoopMotionObserver.swift`).
    var motion = MotionSignal()
    private var tracking: RunLoopMotionObserver?
    /// The overlay's figures: ticked every frame while the overlay is wanted.
    var overlayModel = OverlayModel()
    /// Whether ``showOverlay()`` asked for the overlay.
    var wantsOverlay = false
    /// The overlay's window, once attached to a scene.
    var overlayWindow: OverlayWindow?

    /// A driver for `framescope`, with the launch read from the process: its environment
    /// (a pre-warmed launch), its main bundle (an extension) and a debugger.
    /// - Parameter measuresExtensions: Measure in app extensions and widgets too.
    public init(framescope: Framescope, measuresExtensions: Bool = false) {
        self.framescope = framescope
        // ProcessInfo.environment, iOS 2; Bundle.bundlePath, iOS 2.
        lifecycle = AppLifecycle(launch: AppLifecycle.Launch(
            environment: ProcessInfo.processInfo.environment, bundlePath: Bundle.main.bundlePath,
            isDebuggerAttached: DebuggerCheck.isAttached(), measuresExtensions: measuresExtensions))
    }

    /// Applies the lifecycle's starting state and, unless the SDK is off for this process,
    /// adds the display link (at the display's highest rate), the lifecycle observers and
    /// the run loop's tracking-mode observer. Later calls do nothing until ``stop()``.
    public func start() {
        guard link == nil else { return }
        carryOut(lifecycle.start())
        guard !lifecycle.isOff else { return }
        // CADisplayLink(target:selector:), iOS 3.1.
        let link = CADisplayLink(target: self, selector: #selector(step(_:)))
        self.link = link
        updateFrameRateRange()
        // CADisplayLink.add(to:forMode:), iOS 3.1; RunLoop.Mode.common keeps ticking while scrolling.
        link.add(to: .main, forMode: .common)
        observeApplication()
        tracking = RunLoopMotionObserver { [weak self] entered in self?.trackingMode(entered: entered) }
        // Started after launch: replay the state. UIApplication.applicationState, iOS 4; UIScene.activationState, iOS 13.
        if UIApplication.framescopeShared?.applicationState == .active { send(.didBecomeActive) }
        for scene in UIApplication.framescopeShared?.connectedScenes ?? [] where scene.activationState == .foregroundActive {
            send(.sceneDidActivate(scene.session.persistentIdentifier))   // UISceneSession.persistentIdentifier, iOS 13
        }
    }

    /// Removes the display link, the observers and the overlay; motion under way ends.
    public func stop() {
        link?.invalidate()   // CADisplayLink.invalidate(), iOS 3.1
        link = nil
        observers.forEach { NotificationCenter.default.removeObserver($0) }   // NotificationCenter.removeObserver(_:), iOS 2
        observers = []
        tracking?.invalidate()
        tracking = nil
        carryOut(motion.reset())
        hideOverlay()
    }

    @objc private func step(_ link: CADisplayLink) {
        // CADisplayLink.timestamp and .duration, iOS 3.1; .targetTimestamp, iOS 10 (seconds, CACurrentMediaTime's clock).
        let (timestamp, target, duration) = (link.timestamp, link.targetTimestamp, link.duration)
        framescope.tick(timestamp: timestamp, targetTimestamp: target, refreshInterval: duration)
        carryOut(motion.tick(at: timestamp))
        if wantsOverlay { stepOverlay(timestamp: timestamp, targetTimestamp: target, refreshInterval: duration) }
    }

    private func send(_ event: AppLifecycle.Event) {
        carryOut(lifecycle.handle(event))
    }

    /// Carries out what ``AppLifecycle`` decided; a pause also ends motion, a resume restarts the overlay's second.
    func carryOut(_ actions: [AppLifecycle.Action]) {
        framescope.apply(actions)
        if actions.contains(.resumeFrames) { overlayModel.reset() }
        if actions.contains(.pauseFrames) { carryOut(motion.reset()) }
    }

    /// Calls `beginMotion()` or `endMotion()` for a change ``MotionSignal`` answered.
    func carryOut(_ change: MotionSignal.Change?) {
        switch change {
        case .begin?: framescope.beginMotion()
        case .end?: framescope.endMotion()
        case nil: break
        }
    }

    /// Asks for the highest rate of the screens the app's scenes show on (ProMotion: 120 Hz).
    private func updateFrameRateRange() {
        guard let highest = SystemFacts.screenRefreshRate() else { return }
        framescope.displayRefreshRate(highest)
        guard let link else { return }
        // CADisplayLink.preferredFrameRateRange and CAFrameRateRange(minimum:maximum:preferred:), iOS 15.
        link.preferredFrameRateRange = CAFrameRateRange(minimum: 1, maximum: Float(highest), preferred: Float(highest))
    }

    private func observeApplication() {
        // UIApplication's notifications, iOS 2 (active) and iOS 4 (background, foreground).
        observe(UIApplication.didBecomeActiveNotification, foreground: true) { _ in .didBecomeActive }
        observe(UIApplication.willResignActiveNotification, foreground: false) { _ in .willResignActive }
        observe(UIApplication.didEnterBackgroundNotification, foreground: false) { _ in .didEnterBackground }
        observe(UIApplication.willEnterForegroundNotification, foreground: true) { _ in .willEnterForeground }
        // UIScene's notifications, iOS 13; the scene is the notification's object.
        observe(UIScene.didActivateNotification, foreground: true) { .sceneDidActivate($0) }
        observe(UIScene.willDeactivateNotification, foreground: false) { .sceneWillDeactivate($0) }
        observe(UIScene.didDisconnectNotification, foreground: false) { .sceneDidDisconnect($0) }
    }

    /// Forwards `name` as the event `event` makes of the scene's identifier (`""` for an
    /// application notification); a foreground event first re-checks the debugger.
    private func observe(_ name: Notification.Name, foreground: Bool, _ event: @escaping @Sendable (String) -> AppLifecycle.Event) {
        let isSceneEvent = [UIScene.didActivateNotification, UIScene.willDeactivateNotification,
                            UIScene.didDisconnectNotification].contains(name)
        let sceneActivates = name == UIScene.didActivateNotification
        // NotificationCenter.addObserver(forName:object:queue:using:), iOS 4: delivered on the main queue.
        observers.append(NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { [weak self] note in
            let scene = note.object as? UIScene   // Notification.object; the Notification is not Sendable, the scene is
            if isSceneEvent, scene == nil { return }
            MainActor.assumeIsolated {
                guard let self else { return }
                if foreground { self.send(.debugger(attached: DebuggerCheck.isAttached())) }
                self.send(event(scene?.session.persistentIdentifier ?? ""))
                if sceneActivates { self.updateFrameRateRange() }   // the scene's screen may be a new one
            }
        })
    }
}
#endif
