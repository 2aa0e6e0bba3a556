#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import UIKit

extension DisplayLinkDriver {
    /// Shows the live overlay over the active scene: FPS over the last second beside the
    /// display's refresh rate, frames dropped in the last second, the visit's hitch ratio
    /// (ms/s) in Apple's band colour, a hang under way (s) and the screen. Tap it for one
    /// fact per line; drag it anywhere. Touches elsewhere reach the app. Debug builds only:
    ///
    /// ```swift
    /// #if DEBUG
    /// driver.showOverlay()
    /// #endif
    /// ```
    ///
    /// The overlay appears at its first update (a quarter of a second after the next frame,
    /// once a scene is in the foreground).
    public func showOverlay() {
        guard !wantsOverlay else { return }
        wantsOverlay = true
        overlayModel.reset()
    }

    /// Removes the live overlay.
    public func hideOverlay() {
        wantsOverlay = false
        overlayWindow?.isHidden = true   // UIView.isHidden, iOS 2
        overlayWindow = nil
    }

    /// One frame for the overlay: ``OverlayModel`` takes every tick and decides when to
    /// update (four times a second); only then is the visit's report read.
    func stepOverlay(timestamp: Double, targetTimestamp: Double, refreshInterval: Double) {
        overlayModel.tick(timestamp: timestamp, targetTimestamp: targetTimestamp, refreshInterval: refreshInterval)
        guard overlayModel.takeUpdate(at: timestamp) else { return }
        if overlayWindow?.windowScene == nil {   // none yet, or its scene disconnected (UIWindow.windowScene, iOS 13, is weak)
            // UIApplication.connectedScenes and UIScene.activationState, iOS 13.
            let scenes = UIApplication.framescopeShared?.connectedScenes ?? []
            guard let scene = scenes.compactMap({ $0 as? UIWindowScene }).first(where: { $0.activationState == .foregroundActive })
            else { return }
            overlayWindow = OverlayWindow(scene: scene)
        }
        overlayWindow?.show(overlayModel.state(hitchRatio: framescope.currentReport()?.whole.hitchRatio,
                                               hangUnderWay: framescope.recentHang(), screen: framescope.currentScreen))
    }
}

/// The live overlay's window: above the scene's alerts, showing one rounded pill with one
/// label. Only the pill takes touches (``hitTest(_:with:)`` answers `nil` elsewhere), so
/// the app below works as usual. It shows what ``OverlayModel`` worked out and decides nothing.
final class OverlayWindow: UIWindow {
    private let pill = UIView()
    private let label = UILabel()
    private var isExpanded = false
    private var state: OverlayModel.State?

    /// A visible, non-key window over `scene` (the app keeps its key window and keyboard).
    init(scene: UIWindowScene) {
        super.init(windowScene: scene)   // UIWindow(windowScene:), iOS 13
        windowLevel = UIWindow.Level(rawValue: UIWindow.Level.alert.rawValue + 1)   // UIWindow.windowLevel, iOS 2
        // UIViewController.view, UIView.backgroundColor / addSubview(_:) / addGestureRecognizer(_:), UILabel.font / textColor: iOS 2–3.2.
        let root = UIViewController()
        root.view.backgroundColor = .clear
        rootViewController = root   // UIWindow.rootViewController, iOS 4
        label.font = UIFont.monospacedDigitSystemFont(ofSize: 12, weight: .semibold)   // iOS 9
        label.textColor = .black
        pill.layer.cornerRadius = 10   // CALayer.cornerRadius, iOS 2
        pill.frame = CGRect(x: 12, y: 60, width: 120, height: 26)
        pill.addSubview(label)
        root.view.addSubview(pill)
        // UIPanGestureRecognizer and UITapGestureRecognizer (init(target:action:)), iOS 3.2.
        pill.addGestureRecognizer(UIPanGestureRecognizer(target: self, action: #selector(drag(_:))))
        pill.addGestureRecognizer(UITapGestureRecognizer(target: self, action: #selector(toggle)))
        isHidden = false   // shown without makeKeyAndVisible(): it never becomes the key window
    }

    /// Not made from a storyboard or archive.
    required init?(coder: NSCoder) {
        return nil
    }

    /// Shows `state`: one line, or one fact per line once tapped.
    func show(_ state: OverlayModel.State) {
        self.state = state
        render()
    }

    /// Touches inside the pill go to it; all others pass through to the app's windows.
    override func hitTest(_ point: CGPoint, with event: UIEvent?) -> UIView? {
        // UIView.convert(_:to:) and point(inside:with:), iOS 2.
        guard pill.point(inside: convert(point, to: pill), with: event) else { return nil }
        return super.hitTest(point, with: event)
    }

    private func render() {
        guard let state else { return }
        label.numberOfLines = isExpanded ? 0 : 1   // UILabel.numberOfLines, iOS 2
        label.text = isExpanded ? state.expanded : state.line
        pill.backgroundColor = (state.band.flatMap { Self.color(hex: $0.overlayColourHex) } ?? UIColor(white: 0.85, alpha: 1))
            .withAlphaComponent(0.9)   // UIColor.withAlphaComponent(_:), iOS 2
        let widest = max(bounds.width - 24, 80) - 16
        let size = label.sizeThatFits(CGSize(width: widest, height: .greatestFiniteMagnitude))   // UIView.sizeThatFits(_:), iOS 2
        label.frame = CGRect(x: 8, y: 5, width: min(size.width.rounded(.up), widest), height: size.height.rounded(.up))
        pill.frame.size = CGSize(width: label.frame.width + 16, height: label.frame.height + 10)
        keepInside()
    }

    /// Moves the pill back inside the safe area.
    private func keepInside() {
        let area = bounds.inset(by: safeAreaInsets)   // UIView.safeAreaInsets, iOS 11
        pill.frame.origin.x = min(max(pill.frame.minX, area.minX), max(area.minX, area.maxX - pill.frame.width))
        pill.frame.origin.y = min(max(pill.frame.minY, area.minY), max(area.minY, area.maxY - pill.frame.height))
    }

    @objc private func drag(_ pan: UIPanGestureRecognizer) {
        let moved = pan.translation(in: self)   // UIPanGestureRecognizer.translation(in:), iOS 3.2
        pill.center = CGPoint(x: pill.center.x + moved.x, y: pill.center.y + moved.y)
        pan.setTranslation(.zero, in: self)   // UIPanGestureRecognizer.setTranslation(_:in:), iOS 3.2
        keepInside()
    }

    @objc private func toggle() {
        isExpanded.toggle()
        render()
    }

    /// The colour of sRGB hex `#RRGGBB` (``Band/overlayColourHex``), or `nil` for other text.
    private static func color(hex: String) -> UIColor? {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
        // UIColor(red:green:blue:alpha:), iOS 2: components 0–1.
        return UIColor(red: CGFloat((value >> 16) & 0xFF) / 255, green: CGFloat((value >> 8) & 0xFF) / 255,
                       blue: CGFloat(value & 0xFF) / 255, alpha: 1)
    }
}

extension UIApplication {
    /// `UIApplication.shared` (iOS 2) read through key-value coding, so the SDK also compiles
    /// for app extensions, where `shared` is unavailable at compile time (there it may be `nil`).
    static var framescopeShared: UIApplication? {
        // NSObject.value(forKey:) (key-value coding), iOS 2, on the class object: +[UIApplication sharedApplication].
        UIApplication.value(forKey: "sharedApplication") as? UIApplication
    }
}
#endif
