#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import Foundation
import QuartzCore
import UIKit

/// Drives a ``Framescope`` from a `CADisplayLink` on the main run loop, and pauses and
/// resumes it with the app's background and foreground notifications. All measuring logic
/// is in the platform-neutral ``ScreenTracker``; this only forwards.
///
/// ```swift
/// let driver = DisplayLinkDriver(framescope: framescope)
/// driver.start()
/// ```
@MainActor
public final class DisplayLinkDriver: NSObject {
    private let framescope: Framescope
    private var link: CADisplayLink?
    private var observers: [NSObjectProtocol] = []

    /// Creates a driver for `framescope`.
    public init(framescope: Framescope) {
        self.framescope = framescope
    }

    /// Adds the display link (asking for the display's highest rate, so ProMotion is
    /// measured at 120 Hz) and the lifecycle observers.
    public func start() {
        guard link == nil else { return }
        let link = CADisplayLink(target: self, selector: #selector(step(_:)))
        let maximum = Float(UIScreen.main.maximumFramesPerSecond)
        link.preferredFrameRateRange = CAFrameRateRange(minimum: 1, maximum: maximum, preferred: maximum)
        link.add(to: .main, forMode: .common)
        self.link = link
        let center = NotificationCenter.default
        observers.append(center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.framescope.pause()
                Task { await self.framescope.flush(timeout: 5) }
            }
        })
        observers.append(center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: .main) { [weak self] _ in
            MainActor.assumeIsolated { self?.framescope.resume() }
        })
    }

    /// Removes the display link and the observers.
    public func stop() {
        link?.invalidate()
        link = nil
        observers.forEach(NotificationCenter.default.removeObserver)
        observers = []
    }

    @objc private func step(_ link: CADisplayLink) {
        framescope.tick(timestamp: link.timestamp, targetTimestamp: link.targetTimestamp, refreshInterval: link.duration)
    }
}

extension DeviceState {
    /// The device's state now: low-power mode and thermal state from `ProcessInfo`; the
    /// network is left unknown (pass a provider built on `NWPathMonitor` for it).
    public static func current() -> DeviceState {
        let info = ProcessInfo.processInfo
        let thermal: VisitContext.ThermalState = switch info.thermalState {
        case .nominal: .nominal
        case .fair: .fair
        case .serious: .serious
        case .critical: .critical
        @unknown default: .nominal
        }
        return DeviceState(network: .unknown, lowPowerMode: info.isLowPowerModeEnabled, thermalState: thermal)
    }
}
#endif
