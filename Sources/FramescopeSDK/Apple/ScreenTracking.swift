#if canImport(UIKit) && canImport(ObjectiveC)
import FramescopeCore
import ObjectiveC
import UIKit

extension Framescope {
    /// Names screens from UIKit by itself: from now on, each view controller that appears
    /// (`viewDidAppear(_:)`) and ``ScreenNaming`` names becomes the current screen
    /// (``screen(_:)``). Containers (navigation, tab, split controllers) and the system's own
    /// controllers name nothing, so the visible child names the screen.
    ///
    /// ```swift
    /// framescope.trackScreensAutomatically()
    /// feedController.framescopeScreenName = "Feed"   // a name of your own choosing
    /// ```
    ///
    /// The name is, in order: the controller's ``UIKit/UIViewController/framescopeScreenName``,
    /// its view's accessibility identifier, its type name cleaned by `naming`
    /// (`MyApp.FeedViewController` → `Feed`). Swaps `UIViewController.viewDidAppear(_:)` for
    /// one that calls the original first, once per process however often this is called;
    /// the last call's SDK and naming are used (the SDK is held weakly). A controller that
    /// overrides `viewDidAppear(_:)` without calling `super` is not seen.
    ///
    /// - Parameter naming: How type names become screen names, and which are containers.
    public func trackScreensAutomatically(naming: ScreenNaming = ScreenNaming()) {
        ScreenTracking.framescope = self
        ScreenTracking.naming = naming
        ScreenTracking.swizzleOnce()
    }
}

extension UIViewController {
    /// The screen name this controller reports when it appears, overriding its accessibility
    /// identifier and type name (see ``Framescope/trackScreensAutomatically(naming:)``);
    /// `nil` (the default) to leave the name to them.
    public var framescopeScreenName: String? {
        // objc_getAssociatedObject / objc_setAssociatedObject, iOS 3.1.
        get { objc_getAssociatedObject(self, &ScreenTracking.screenNameKey) as? String }
        set { objc_setAssociatedObject(self, &ScreenTracking.screenNameKey, newValue, .OBJC_ASSOCIATION_COPY_NONATOMIC) }
    }

    /// Takes `viewDidAppear(_:)`'s place once swapped: calls UIKit's implementation (which
    /// now answers to this selector), then reports the appearance.
    @objc dynamic func framescope_viewDidAppear(_ animated: Bool) {
        framescope_viewDidAppear(animated)
        ScreenTracking.didAppear(self)
    }
}

/// The state of automatic screen tracking, on the main actor: the SDK that screens go to
/// (weak: tracking never keeps an SDK alive), the naming, and whether the swap happened.
/// `View.framescopeScreen(_:)` reports to the same SDK when the environment has none.
@MainActor
enum ScreenTracking {
    /// The SDK named screens go to: the last one that called `trackScreensAutomatically`.
    static weak var framescope: Framescope?
    /// How type names become screen names.
    static var naming = ScreenNaming()
    /// The associated-object key of ``UIKit/UIViewController/framescopeScreenName`` (its address is the key).
    static var screenNameKey: UInt8 = 0
    private static var isSwizzled = false

    /// Exchanges `viewDidAppear(_:)` (UIViewController, iOS 2) with `framescope_viewDidAppear(_:)`, once.
    static func swizzleOnce() {
        guard !isSwizzled else { return }
        // class_getInstanceMethod and method_exchangeImplementations, Objective-C runtime (iOS 2).
        guard let original = class_getInstanceMethod(UIViewController.self, #selector(UIViewController.viewDidAppear(_:))),
              let replacement = class_getInstanceMethod(UIViewController.self,
                                                        #selector(UIViewController.framescope_viewDidAppear(_:)))
        else { return }
        method_exchangeImplementations(original, replacement)
        isSwizzled = true
    }

    /// `controller` appeared: ``ScreenNaming`` names it (or not), and a name becomes the screen.
    static func didAppear(_ controller: UIViewController) {
        guard let framescope else { return }
        // UIViewController.viewIfLoaded, iOS 9 (never loads a view); UIAccessibilityIdentification, iOS 5.
        let name = naming.screenName(typeName: String(reflecting: type(of: controller)),
                                     accessibilityIdentifier: controller.viewIfLoaded?.accessibilityIdentifier,
                                     override: controller.framescopeScreenName,
                                     // UIViewController.parent, iOS 5: an embedded child is part of its parent's screen.
                                     parentTypeName: controller.parent.map { String(reflecting: type(of: $0)) })
        if let name { framescope.screen(name) }
    }
}
#endif
