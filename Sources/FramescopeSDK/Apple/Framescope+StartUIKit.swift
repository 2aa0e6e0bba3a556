#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import Foundation
import UIKit

extension Framescope {
    /// Before the app's `configure`: a network monitor whose state each visit reads, with
    /// low power and thermal state (the app may set a `deviceState` of its own after). The
    /// monitor is a part of the SDK (``SDKPart``), started once the SDK has started.
    static func prepare(_ setup: inout Setup, keeping parts: inout [any SDKPart]) {
        #if canImport(Network)
        let network = NetworkMonitor()
        setup.configuration.deviceState = { [state = network.state] in DeviceState.current(network: state) }
        parts.append(network)
        #else
        setup.configuration.deviceState = { DeviceState.current() }
        #endif
    }

    /// After it started: the display link (a part of the SDK, stopped first), screen
    /// tracking and the overlay.
    func attach(_ setup: Setup) {
        let driver = DisplayLinkDriver(framescope: self, measuresExtensions: setup.measuresExtensions)
        add(driver)
        if setup.tracksScreens { trackScreensAutomatically(naming: setup.screenNaming) }
        if setup.showsOverlay { driver.showOverlay() }
    }
}

extension Framescope {
    /// The display-link driver ``start(collector:ingestKey:configure:)`` started (for the
    /// overlay, `showOverlay()`, and scroll callbacks, `scrollBegan(_:)`), or nil (also once
    /// the SDK has stopped).
    public var displayLinkDriver: DisplayLinkDriver? {
        isStopped ? nil : parts.lazy.compactMap { $0 as? DisplayLinkDriver }.first
    }
}

/// The display link ticks the SDK, so it starts last and stops first.
extension DisplayLinkDriver: SDKPart {}

#if canImport(Network)
/// The network monitor: started with the SDK, stopped for good with it.
extension NetworkMonitor: SDKPart {}
#endif
#endif
