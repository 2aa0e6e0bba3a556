#if canImport(SwiftUI) && canImport(UIKit)
import SwiftUI

extension View {
    /// Makes `name` the current screen each time this view appears (`onAppear`), for
    /// SwiftUI screens that no view controller names.
    ///
    /// The SDK is the environment's `EnvironmentValues.framescope` when set, else the one
    /// that called ``Framescope/trackScreensAutomatically(naming:)``, else
    /// ``Framescope/shared`` (``Framescope/start(collector:ingestKey:configure:)``); with
    /// none, nothing is reported.
    ///
    /// ```swift
    /// WindowGroup {
    ///     FeedView().framescopeScreen("Feed")
    /// }
    /// .environment(\.framescope, framescope)
    /// ```
    ///
    /// - Parameter name: The screen's name as the collector shows it (cut to 128 bytes).
    public func framescopeScreen(_ name: String) -> some View {
        modifier(FramescopeScreenModifier(name: name))
    }
}

extension EnvironmentValues {
    /// The SDK that `.framescopeScreen(_:)` reports to; `nil` (the default) falls back to
    /// the one that called ``Framescope/trackScreensAutomatically(naming:)``, then to
    /// ``Framescope/shared``.
    public var framescope: Framescope? {
        // EnvironmentValues subscript with an EnvironmentKey, iOS 13.
        get { self[FramescopeEnvironmentKey.self] }
        set { self[FramescopeEnvironmentKey.self] = newValue }
    }
}

/// The environment key behind `EnvironmentValues.framescope`.
private struct FramescopeEnvironmentKey: EnvironmentKey {
    static let defaultValue: Framescope? = nil
}

/// Reports its screen name when its content appears.
private struct FramescopeScreenModifier: ViewModifier {
    let name: String
    // Environment, iOS 13.
    @Environment(\.framescope) private var framescope

    func body(content: Content) -> some View {
        // View.onAppear(perform:), iOS 13.
        content.onAppear {
            (framescope ?? ScreenTracking.framescope ?? Framescope.shared)?.screen(name)
        }
    }
}
#endif
