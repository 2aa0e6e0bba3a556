import FramescopeCore
import Foundation

/// What the SDK reads about the app and the device by itself, so that an app passes only
/// its collector and key: the app's version and build, the device's model, OS and highest
/// refresh rate. ``FramescopeCore/AppInfo/current(id:version:build:facts:)`` and
/// ``FramescopeCore/DeviceInfo/current(model:osName:osVersion:maxRefreshRate:installationId:facts:)`` turn it into
/// what a batch carries; a value the app passes explicitly wins.
///
/// Where each fact comes from (``current()``):
///
/// | fact | Apple platforms | Linux |
/// | --- | --- | --- |
/// | app version, build | `CFBundleShortVersionString`, `CFBundleVersion` of the main bundle | the same, when the executable has a bundle |
/// | model | `sysctlbyname("hw.machine")` (`iPhone16,1`); in the simulator `SIMULATOR_MODEL_IDENTIFIER` | `uname -m` (`x86_64`) |
/// | OS name, version | `iOS` (the platform), `ProcessInfo.operatingSystemVersion` (`17.4`, `17.4.1`) | `NAME` and `VERSION_ID` of `/etc/os-release`, else `Linux` and `uname -r` |
/// | highest refresh rate | `UIScreen.main.maximumFramesPerSecond` (60, 120) | none (60 is sent) |
/// | processors | `ProcessInfo.activeProcessorCount` | the same (the CPUs this process may use) |
///
/// Nothing here identifies a person or a device: no hardware serial, vendor or advertising
/// identifier (docs/sdk.md, "Privacy").
public struct SystemFacts: Sendable, Hashable {
    /// The app's marketing version (`3.2.0`), if the main bundle has one.
    public var appVersion: String?
    /// The app's build number (`320`), if the main bundle has one.
    public var appBuild: String?
    /// The hardware model (`iPhone16,1`, `x86_64`).
    public var model: String
    /// The operating system's name (`iOS`, `Debian GNU/Linux`).
    public var osName: String
    /// The operating system's version (`17.4`, `12`).
    public var osVersion: String
    /// The display's highest refresh rate, in Hz, where the platform says (nil on Linux).
    public var maxRefreshRate: Int?
    /// Processors this process may use.
    public var processorCount: Int

    /// Sent when the bundle has no version or build (a command-line tool on Linux).
    public static let unknownVersion = "unknown"
    /// Sent when the platform has no display to ask, in Hz.
    public static let defaultRefreshRate = 60

    /// Creates facts from values already read.
    public init(appVersion: String?, appBuild: String?, model: String, osName: String, osVersion: String,
                maxRefreshRate: Int?, processorCount: Int) {
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.model = model
        self.osName = osName
        self.osVersion = osVersion
        self.maxRefreshRate = maxRefreshRate
        self.processorCount = processorCount
    }

    /// The Linux facts from what the system files and calls said; pure, so tests give it
    /// the machine's own and made-up inputs.
    /// - Parameters:
    ///   - osRelease: The text of `/etc/os-release` (or `/usr/lib/os-release`), if readable.
    ///   - machine: `uname`'s machine (`x86_64`).
    ///   - release: `uname`'s release (`6.1.0-18-amd64`), the version when os-release has none.
    ///   - bundleVersion: The main bundle's version, if any.
    ///   - bundleBuild: The main bundle's build, if any.
    ///   - processorCount: Processors this process may use.
    public static func linux(osRelease: String?, machine: String, release: String, bundleVersion: String?,
                             bundleBuild: String?, processorCount: Int) -> SystemFacts {
        let fields = osRelease.map(OSRelease.fields(in:)) ?? [:]
        return SystemFacts(appVersion: nonEmpty(bundleVersion), appBuild: nonEmpty(bundleBuild),
                           model: nonEmpty(machine) ?? "unknown",
                           osName: nonEmpty(fields["NAME"]) ?? nonEmpty(fields["ID"]) ?? "Linux",
                           osVersion: nonEmpty(fields["VERSION_ID"]) ?? nonEmpty(release) ?? SystemFacts.unknownVersion,
                           maxRefreshRate: nil, processorCount: max(1, processorCount))
    }

    /// `major.minor`, with `.patch` when it is not 0 (`17.4`, `17.4.1`): how iOS names its versions.
    public static func versionText(major: Int, minor: Int, patch: Int) -> String {
        patch == 0 ? "\(major).\(minor)" : "\(major).\(minor).\(patch)"
    }

    /// A read value as the collector accepts it (``WireText``: no control or format
    /// characters, at most 64 bytes of UTF-8), ``unknownVersion`` when nothing is left: a
    /// long bundle version or os-release name must not get every batch refused.
    static func wire(_ text: String?) -> String {
        WireText.sanitized(text ?? "", maximumBytes: 64, fallback: unknownVersion)
    }

    /// The text without surrounding white space, or nil when nothing is left.
    static func nonEmpty(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}

/// Reads `/etc/os-release` (freedesktop.org's format): `KEY=value` lines, values optionally
/// in double or single quotes with backslash escapes, `#` comments.
public enum OSRelease {
    /// The file's fields by key; lines that are not `KEY=value` are skipped.
    public static func fields(in text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = String(trimmed[..<equals])
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { continue }
            fields[key] = unquoted(String(trimmed[trimmed.index(after: equals)...]))
        }
        return fields
    }

    /// A value without its quotes, with `\"`, `\\`, `` \` ``, `\$` unescaped.
    private static func unquoted(_ value: String) -> String {
        guard let first = value.first, first == "\"" || first == "'", value.count >= 2, value.last == first else { return value }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped || first == "'" || character != "\\" {
                result.append(character)
                escaped = false
            } else {
                escaped = true
            }
        }
        return result
    }
}

extension AppInfo {
    /// The app as the SDK sends it: each value given here, else read (``SystemFacts``).
    /// - Parameters:
    ///   - id: The collector's app id, or nil to let the collector take the ingest key's app.
    ///   - version: The marketing version; default the bundle's (``SystemFacts/unknownVersion`` without one).
    ///   - build: The build number; default the bundle's.
    ///   - facts: What was read (default: ``SystemFacts/current()``).
    @MainActor
    public static func current(id: String? = nil, version: String? = nil, build: String? = nil,
                               facts: SystemFacts? = nil) -> AppInfo {
        let facts = facts ?? SystemFacts.current()
        return AppInfo(id: id, version: version ?? SystemFacts.wire(facts.appVersion),
                       build: build ?? SystemFacts.wire(facts.appBuild ?? facts.appVersion))
    }
}

extension DeviceInfo {
    /// The device as the SDK sends it: each value given here, else read (``SystemFacts``).
    /// The installation id, when nil, is the SDK's own (``InstallationID``), filled in when the
    /// SDK starts.
    /// - Parameters:
    ///   - model: The hardware model (`iPhone16,1`).
    ///   - osName: The OS's name (`iOS`).
    ///   - osVersion: The OS's version (`17.4`).
    ///   - maxRefreshRate: The display's highest refresh rate, in Hz.
    ///   - installationId: An installation id of the app's own (default: the SDK's).
    ///   - facts: What was read (default: ``SystemFacts/current()``).
    @MainActor
    public static func current(model: String? = nil, osName: String? = nil, osVersion: String? = nil,
                               maxRefreshRate: Int? = nil, installationId: String? = nil,
                               facts: SystemFacts? = nil) -> DeviceInfo {
        let facts = facts ?? SystemFacts.current()
        return DeviceInfo(model: model ?? SystemFacts.wire(facts.model), osName: osName ?? SystemFacts.wire(facts.osName),
                          osVersion: osVersion ?? SystemFacts.wire(facts.osVersion),
                          maxRefreshRate: maxRefreshRate ?? facts.maxRefreshRate ?? SystemFacts.defaultRefreshRate,
                          installationId: installationId)
    }
}
