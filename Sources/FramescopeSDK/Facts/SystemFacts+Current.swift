import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(UIKit)
import UIKit
#endif

extension SystemFacts {
    /// The facts of this process's app and device, read now (see the table on ``SystemFacts``).
    /// On the main actor because a screen's refresh rate is UIKit's; the rest is read from
    /// the bundle, `sysctl`, `uname` and `/etc/os-release`, which are quick.
    @MainActor
    public static func current() -> SystemFacts {
        let bundle = Bundle.main.infoDictionary
        let bundleVersion = bundle?["CFBundleShortVersionString"] as? String
        let bundleBuild = bundle?["CFBundleVersion"] as? String
        let processors = ProcessInfo.processInfo.activeProcessorCount
        #if canImport(Darwin)
        let info = ProcessInfo.processInfo
        let version = info.operatingSystemVersion
        // An iPhone or iPad app on a Mac (Catalyst, or "Designed for iPad") runs on macOS:
        // its visits are the Mac's (`hw.model`, `Mac14,2`), not an iOS version's.
        let onMac = info.isMacCatalystApp || info.isiOSAppOnMac   // iOS 13, iOS 14
        return SystemFacts(appVersion: nonEmpty(bundleVersion), appBuild: nonEmpty(bundleBuild),
                           model: onMac ? sysctlText("hw.model") ?? "Mac" : darwinModel(environment: info.environment),
                           osName: onMac ? "macOS" : darwinOSName,
                           osVersion: versionText(major: version.majorVersion, minor: version.minorVersion,
                                                  patch: version.patchVersion),
                           maxRefreshRate: screenRefreshRate(), processorCount: processors)
        #else
        let names = unameFields()
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))
            ?? (try? String(contentsOfFile: "/usr/lib/os-release", encoding: .utf8))
        return linux(osRelease: osRelease, machine: names.machine, release: names.release, bundleVersion: bundleVersion,
                     bundleBuild: bundleBuild, processorCount: processors)
        #endif
    }

    #if canImport(Darwin)
    /// `hw.machine` (`iPhone16,1`); in the simulator, the simulated device's
    /// (`SIMULATOR_MODEL_IDENTIFIER`), since `hw.machine` is then the Mac's.
    static func darwinModel(environment: [String: String]) -> String {
        if let simulated = nonEmpty(environment["SIMULATOR_MODEL_IDENTIFIER"]) { return simulated }
        return sysctlText("hw.machine") ?? "unknown"
    }

    /// A text value of `sysctlbyname` (`hw.machine`, `hw.model`), or nil.
    static func sysctlText(_ name: String) -> String? {
        var size = 0
        guard sysctlbyname(name, nil, &size, nil, 0) == 0, size > 0, size < 4096 else { return nil }
        var bytes = [CChar](repeating: 0, count: size)
        guard sysctlbyname(name, &bytes, &size, nil, 0) == 0 else { return nil }
        return nonEmpty(String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The platform's name as the collector's OS filter shows it (iPadOS counts as iOS).
    static var darwinOSName: String {
        #if os(iOS)
        "iOS"
        #elseif os(tvOS)
        "tvOS"
        #elseif os(watchOS)
        "watchOS"
        #elseif os(visionOS)
        "visionOS"
        #else
        "macOS"
        #endif
    }
    #else
    /// `uname`'s machine and release.
    static func unameFields() -> (machine: String, release: String) {
        var names = utsname()
        guard uname(&names) == 0 else { return ("unknown", "") }
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return (text(names.machine), text(names.release))
    }
    #endif

    /// The highest refresh rate of the screens the app's scenes show on, in Hz, or nil
    /// before any scene is connected (early in launch) and where there is no UIKit. The
    /// display-link driver tells the SDK later (``Framescope/displayRefreshRate(_:)``).
    @MainActor
    static func screenRefreshRate() -> Int? {
        #if canImport(UIKit) && canImport(QuartzCore)
        // UIWindowScene.screen, iOS 13; UIScreen.maximumFramesPerSecond, iOS 10.3.
        let scenes = UIApplication.framescopeShared?.connectedScenes ?? []
        return scenes.compactMap { ($0 as? UIWindowScene)?.screen.maximumFramesPerSecond }.filter { $0 > 0 }.max()
        #else
        nil
        #endif
    }
}
