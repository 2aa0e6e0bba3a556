#if canImport(UIKit) && canImport(QuartzCore)
import CoreFoundation
import Foundation
import QuartzCore
import UIKit

/// Reports when the main run loop enters and leaves its tracking mode
/// (`UITrackingRunLoopMode`: a finger is dragging a scroll view, a slider, a control), for
/// ``MotionSignal``'s `.trackingMode` source. It only reads the run loop; the
/// ``DisplayLinkDriver`` hands each change to ``MotionSignal``, which decides.
///
/// The observer sits in the main run loop's common modes and watches `.entry` and `.exit`.
/// Core Foundation sets the run loop's current mode before it calls the entry observers
/// and restores the previous one only after the exit observers, so at both moments
/// `RunLoop.main.currentMode` names the mode being entered or left.
@MainActor
final class RunLoopMotionObserver {
    private let observer: CFRunLoopObserver

    /// Starts observing; `onChange(true)` runs when tracking mode is entered and
    /// `onChange(false)` when it is left, on the main thread.
    init(onChange: @escaping @MainActor @Sendable (_ entered: Bool) -> Void) {
        // CFRunLoopObserverCreateWithHandler, iOS 5; CFRunLoopActivity .entry / .exit, iOS 2.
        observer = CFRunLoopObserverCreateWithHandler(
            kCFAllocatorDefault, CFRunLoopActivity([.entry, .exit]).rawValue, true, 0
        ) { @Sendable _, activity in
            let entered = activity.contains(.entry)
            // Added to the main run loop only, so the handler always runs on the main thread.
            MainActor.assumeIsolated {
                // RunLoop.currentMode, iOS 2; RunLoop.Mode.tracking (UITrackingRunLoopMode), iOS 2.
                guard RunLoop.main.currentMode == .tracking else { return }
                onChange(entered)
            }
        }
        // CFRunLoopAddObserver / CFRunLoopGetMain, iOS 2; CFRunLoopMode.commonModes (kCFRunLoopCommonModes).
        CFRunLoopAddObserver(CFRunLoopGetMain(), observer, .commonModes)
    }

    /// Stops observing for good.
    func invalidate() {
        // CFRunLoopObserverInvalidate, iOS 2: removes it from every mode.
        CFRunLoopObserverInvalidate(observer)
    }
}

extension DisplayLinkDriver {
    /// Forward from `scrollViewWillBeginDragging(_:)`: `scrollView` starts moving. Motion
    /// begins (``Framescope/beginMotion()``) unless another source is already moving.
    public func scrollBegan(_ scrollView: UIScrollView) {
        // CACurrentMediaTime, iOS 2: seconds on the display link's clock.
        carryOut(motion.began(.scrollView(ObjectIdentifier(scrollView).hashValue), at: CACurrentMediaTime()))
    }

    /// Forward from `scrollViewDidEndDragging(_:willDecelerate:)` when it will not decelerate,
    /// and from `scrollViewDidEndDecelerating(_:)`: `scrollView` came to rest. Motion ends
    /// once every source has stopped for ``MotionSignal/debounce`` seconds.
    public func scrollEnded(_ scrollView: UIScrollView) {
        carryOut(motion.ended(.scrollView(ObjectIdentifier(scrollView).hashValue), at: CACurrentMediaTime()))
    }

    /// Motion of the app's own, named `name`, begins (an animation, a transition), counted with
    /// scrolls so overlapping motion stays one stretch. Pair it with ``motionEnded(_:)``.
    public func motionBegan(_ name: String) {
        carryOut(motion.began(.custom(name), at: CACurrentMediaTime()))
    }

    /// The motion named `name` (see ``motionBegan(_:)``) ended.
    public func motionEnded(_ name: String) {
        carryOut(motion.ended(.custom(name), at: CACurrentMediaTime()))
    }

    /// The main run loop entered (`true`) or left (`false`) its tracking mode.
    func trackingMode(entered: Bool) {
        let now = CACurrentMediaTime()   // CACurrentMediaTime, iOS 2
        carryOut(entered ? motion.began(.trackingMode, at: now) : motion.ended(.trackingMode, at: now))
    }
}
#endif
