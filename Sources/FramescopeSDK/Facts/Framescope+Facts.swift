import FramescopeCore
import Foundation

extension Framescope {
    /// The SDK's folder when the configuration names none:
    /// `Application Support/Framescope/<name>`, which the system does not purge as it may
    /// purge caches, and which goes with the app when it is deleted. The name is the app id
    /// when one is given, else the bundle identifier, else the executable's name, so that
    /// two programs of one user (on macOS or Linux, where Application Support is shared)
    /// never share a queue or an installation id.
    /// - Parameter appID: The configuration's app id, if any.
    public static func defaultDirectory(appID: String?) -> URL {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let name = appID ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
        return base.appendingPathComponent("Framescope").appendingPathComponent(safe.isEmpty || safe.allSatisfy { $0 == "." } ? "app" : safe)
    }

    /// Creates `directory` and, on Apple platforms, excludes it from backups, so that a
    /// restored or migrated device makes an installation id of its own. Failing to exclude it
    /// is not an error.
    static func excludeFromBackup(_ directory: URL) {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #if canImport(Darwin)
        var folder = directory
        var values = URLResourceValues()
        values.isExcludedFromBackup = true   // URLResourceValues.isExcludedFromBackup, iOS 5.1
        try? folder.setResourceValues(values)
        #endif
    }

    /// The display's highest refresh rate, in Hz, as the display link learns it once a scene
    /// is connected (`DisplayLinkDriver`): sent in later batches, unless the configuration
    /// gave the device. Rates outside 1–1000 Hz are ignored.
    public func displayRefreshRate(_ hertz: Int) {
        guard !refreshRateGiven, (1...1000).contains(hertz), hertz != device.maxRefreshRate else { return }
        device.maxRefreshRate = hertz
        let device = device
        let delivery = visits.queue
        Task { await delivery.update(device: device) }
    }
}
