import Foundation
import FramescopeCore
import FramescopeScroll

/// A scroll test an XCUITest asks the app under test to run, passed as launch arguments
/// (XCUITest cannot set a scroll view's offset frame by frame, so the app runs the script
/// in its own process and writes the report where the test reads it):
///
/// ```swift
/// // In the UI test:
/// app.launchArguments += ScrollTestLaunch(target: "feed-table", script: .accelerating(.thesis),
///                                         reportPath: "/tmp/feed-report.json").arguments
/// // In the app, at launch (debug builds):
/// if let request = ScrollTestLaunch(arguments: ProcessInfo.processInfo.arguments) { … }
/// ```
public struct ScrollTestLaunch: Sendable, Hashable {
    /// The accessibility identifier of the table, collection or scroll view to scroll.
    public var target: String
    /// The script to run.
    public var script: ScrollScript
    /// Where the app writes the report (JSON, `framescope check` reads it).
    public var reportPath: String
    /// Seconds the app waits after launch before it starts (so the first screen settles).
    public var delay: Double

    /// The flag before the target's identifier.
    public static let targetFlag = "-FramescopeScrollTarget"
    /// The flag before the script, as JSON (``ScrollScript``'s form).
    public static let scriptFlag = "-FramescopeScrollScript"
    /// The flag before the report's path.
    public static let reportFlag = "-FramescopeScrollReport"
    /// The flag before the delay, in seconds.
    public static let delayFlag = "-FramescopeScrollDelay"

    /// A request to scroll `target` by `script` and write the report to `reportPath`.
    public init(target: String, script: ScrollScript, reportPath: String, delay: Double = 1) {
        self.target = target
        self.script = script
        self.reportPath = reportPath
        self.delay = delay
    }

    /// The launch arguments that carry this request.
    public var arguments: [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = (try? encoder.encode(script)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return [Self.targetFlag, target, Self.scriptFlag, json, Self.reportFlag, reportPath, Self.delayFlag, String(delay)]
    }

    /// The request in a process's arguments, or `nil` when there is none.
    ///
    /// - Throws: ``ScrollTestLaunchError`` when the flags are there but a value is missing
    ///   or wrong (the app should then fail loudly: the UI test is waiting for a report).
    public init?(arguments: [String]) throws(ScrollTestLaunchError) {
        func value(after flag: String) throws(ScrollTestLaunchError) -> String? {
            guard let index = arguments.firstIndex(of: flag) else { return nil }
            guard index + 1 < arguments.count else { throw .missingValue(flag) }
            return arguments[index + 1]
        }
        guard let target = try value(after: Self.targetFlag) else { return nil }
        guard let scriptText = try value(after: Self.scriptFlag) else { throw .missingValue(Self.scriptFlag) }
        guard let reportPath = try value(after: Self.reportFlag), !reportPath.isEmpty else { throw .missingValue(Self.reportFlag) }
        guard Self.resolvedReportPath(reportPath, temporaryDirectory: "/") != nil else { throw .invalidReportPath(reportPath) }
        let script: ScrollScript
        do {
            script = try JSONDecoder().decode(ScrollScript.self, from: Data(scriptText.utf8))
        } catch let error as DecodingError {
            let path = error.fieldPath
            if path.isEmpty, case .dataCorrupted = error { throw .invalidScript("not JSON") }
            throw .invalidScript(error.reason.hasPrefix(path) ? error.reason : "\(path) \(error.reason)")
        } catch {
            throw .invalidScript("not JSON")
        }
        var delay = 1.0
        if let text = try value(after: Self.delayFlag) {
            guard let parsed = Double(text), parsed.isFinite, parsed >= 0, parsed <= 600 else { throw .invalidDelay(text) }
            delay = parsed
        }
        guard !target.isEmpty else { throw .missingValue(Self.targetFlag) }
        self.init(target: target, script: script, reportPath: reportPath, delay: delay)
    }
}

extension ScrollTestLaunch {
    /// The report path in `arguments`, even when the rest of the request does not parse, so
    /// the app can write its error where the UI test waits for the report; `nil` without one.
    public static func reportPath(in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: reportFlag), index + 1 < arguments.count, !arguments[index + 1].isEmpty else { return nil }
        return arguments[index + 1]
    }

    /// Where the app writes a report asked for at `path`: an absolute path as it is (the
    /// Simulator shares the Mac's file system), a relative one inside `temporaryDirectory`
    /// (on a device the app may write only inside its container, from which the report is
    /// then copied). `..` components are refused, so a relative path cannot leave the folder.
    ///
    /// - Returns: The absolute path, or `nil` for a relative path that climbs out.
    public static func resolvedReportPath(_ path: String, temporaryDirectory: String) -> String? {
        if path.hasPrefix("/") { return path }
        let components = path.split(separator: "/")
        guard !components.isEmpty, !components.contains("..") else { return nil }
        let folder = temporaryDirectory.hasSuffix("/") ? String(temporaryDirectory.dropLast()) : temporaryDirectory
        return folder + "/" + components.joined(separator: "/")
    }
}

/// Why a process's scroll-test arguments cannot be used.
public enum ScrollTestLaunchError: Error, Hashable, CustomStringConvertible {
    /// A flag has no value after it.
    case missingValue(String)
    /// The script is not a ``ScrollScript`` in JSON; the text says why.
    case invalidScript(String)
    /// The delay is not 0 to 600 seconds.
    case invalidDelay(String)
    /// A relative report path climbs out of the app's temporary folder (`..`).
    case invalidReportPath(String)

    /// What is wrong, for the test's log.
    public var description: String {
        switch self {
        case let .missingValue(flag): "\(flag) needs a value"
        case let .invalidScript(reason): "\(ScrollTestLaunch.scriptFlag): \(reason)"
        case let .invalidDelay(text): "\(ScrollTestLaunch.delayFlag) must be 0 to 600 seconds, not \(text)"
        case let .invalidReportPath(path): "\(ScrollTestLaunch.reportFlag): a relative path may not leave the app's temporary folder: \(path)"
        }
    }
}
