#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import Foundation
import UIKit

extension Framescope {
    /// Before the app's `configure`: a network monitor whose state each visit reads, with
    /// low power and thermal state (the app may set a `deviceState` of its own after).
    static func prepare(_ setup: inout Setup, keeping attachments: inout [AnyObject]) {
        #if canImport(Network)
        let network = NetworkMonitor()
        network.start()
        setup.configuration.deviceState = { [state = network.state] in DeviceState.current(network: state) }
        attachments.append(network)
        #else
        setup.configuration.deviceState = { DeviceState.current() }
        #endif
    }

    /// After it started: the display link, screen tracking and the overlay.
    func attach(_ setup: Setup) -> [AnyObject] {
        let driver = DisplayLinkDriver(framescope: self, measuresExtensions: setup.measuresExtensions)
        driver.start()
        if setup.tracksScreens { trackScreensAutomatically(naming: setup.screenNaming) }
        if setup.showsOverlay { driver.showOverlay() }
        return [driver]
    }
}

extension Framescope {
    /// The display-link driver ``start(collector:ingestKey:configure:)`` started (for the
    /// overlay, `showOverlay()`, and scroll callbacks, `scrollBegan(_:)`), or nil.
    public var displayLinkDriver: DisplayLinkDriver? {
        attachments.lazy.compactMap { $0 as? DisplayLinkDriver }.first
    }
}

extension DisplayLinkDriver: PlatformAttachment {
    func detach() { stop() }
}

#if canImport(Network)
extension NetworkMonitor: PlatformAttachment {
    func detach() { stop() }
}
#endif
#endif
