import FramescopeCore
import Foundation

extension Framescope {
    /// What ``start(collector:ingestKey:configure:)`` sets up besides the SDK itself; the
    /// UIKit parts apply where UIKit is.
    public struct Setup: Sendable {
        /// The SDK's configuration: the collector and key given, everything else defaulted
        /// (facts read, every installation measured, MetricKit forwarded; where UIKit is,
        /// each visit's network from a `NWPathMonitor` the call starts, and low power and
        /// thermal state from `ProcessInfo`; a `deviceState` set here replaces that).
        public var configuration: Configuration
        /// Name screens from UIKit by themselves (`trackScreensAutomatically(naming:)`, where UIKit is;
        /// default true). Off, the app calls ``screen(_:)``.
        public var tracksScreens = true
        /// How view controllers' type names become screen names.
        public var screenNaming = ScreenNaming()
        /// Show the live overlay (default false; for debug builds: `#if DEBUG`).
        public var showsOverlay = false
        /// Measure in app extensions and widgets too (default false).
        public var measuresExtensions = false

        /// A setup for `collector` and `ingestKey` with every default.
        public init(collector: URL, ingestKey: String) {
            configuration = Configuration(collector: collector, ingestKey: ingestKey)
        }
    }

    /// The SDK that ``start(collector:ingestKey:configure:)`` started, until it stops.
    public private(set) static var shared: Framescope?

    /// Adds Framescope to an app with one call, from `application(_:didFinishLaunchingWithOptions:)`
    /// or the `App`'s initializer: reads the app's and the device's facts (``SystemFacts``),
    /// makes or reads the installation id, starts the SDK, and where UIKit is, the display
    /// link (`DisplayLinkDriver`: ticks, the app's lifecycle, motion), automatic screen
    /// tracking, the network monitor and MetricKit's forwarding; it keeps them all alive
    /// (``shared``). The collector files the visits under the ingest key's app.
    ///
    /// ```swift
    /// import FramescopeSDK
    ///
    /// @MainActor func launch() throws {
    ///     try Framescope.start(collector: URL(string: "https://framescope.example.com")!, ingestKey: "fsi_…")
    /// }
    /// ```
    ///
    /// A second call returns the SDK already running and changes nothing.
    /// - Parameters:
    ///   - collector: The collector's base URL.
    ///   - ingestKey: The app's ingest key (`fsi_…`).
    ///   - configure: Changes the defaults (``Setup``): sampling, thresholds, the overlay…
    /// - Returns: The running SDK (also ``shared``).
    /// - Throws: ``SetupError`` naming a wrong configuration value or a folder that cannot be used.
    @discardableResult
    public static func start(collector: URL, ingestKey: String,
                             configure: (inout Setup) -> Void = { _ in }) throws(SetupError) -> Framescope {
        if let shared { return shared }
        var setup = Setup(collector: collector, ingestKey: ingestKey)
        var prepared: [any SDKPart] = []
        // The platform's defaults first, so that what `configure` sets wins.
        prepare(&setup, keeping: &prepared)
        configure(&setup)
        let framescope = try Framescope(configuration: setup.configuration)
        framescope.start()
        for part in prepared { framescope.add(part) }
        framescope.attach(setup)
        shared = framescope
        return framescope
    }

    /// Lets go of ``shared`` once this SDK has stopped (at the end of ``stop()``), so a new
    /// ``start(collector:ingestKey:configure:)`` cannot open the same folder beside it.
    func release() {
        if Self.shared === self { Self.shared = nil }
    }

    #if !(canImport(UIKit) && canImport(QuartzCore))
    /// Nothing to prepare without UIKit: the facts are read by the SDK itself.
    static func prepare(_ setup: inout Setup, keeping parts: inout [any SDKPart]) {}

    /// Nothing to attach without UIKit: the app or a test ticks and names screens.
    func attach(_ setup: Setup) {}
    #endif
}
