#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import FramescopeScroll
import Foundation
import UIKit

extension ScrollTestLaunch {
    /// The app's side of an XCUITest scroll test: when the process was launched with
    /// ``ScrollTestLaunch`` arguments, waits ``delay`` seconds, scrolls the scroll view named
    /// ``target`` by ``script`` (``ScrollTestDriver``) and writes the report's JSON (the form
    /// `framescope analyze --format json` prints, which `framescope check` reads) atomically
    /// to ``reportPath`` (a relative path is taken inside the app's temporary folder, for a
    /// device). Without the arguments it does nothing and answers `nil`.
    ///
    /// Whatever goes wrong (arguments that do not parse, no such scroll view, a timeout, a
    /// write that fails) is written to the same path as `{"error": "…"}`, so the UI test
    /// fails with the reason instead of waiting out its timeout.
    ///
    /// ```swift
    /// // application(_:didFinishLaunchingWithOptions:)
    /// #if DEBUG
    /// Task { await ScrollTestLaunch.runIfRequested() }
    /// #endif
    /// ```
    ///
    /// - Parameters:
    ///   - arguments: The process's arguments (`ProcessInfo.arguments`, iOS 2).
    ///   - timeout: Seconds the scroll may take before the run is cut short.
    /// - Returns: The report written, or `nil` when nothing was asked or it failed.
    @MainActor
    @discardableResult
    public static func runIfRequested(arguments: [String] = ProcessInfo.processInfo.arguments,
                                      timeout: Double = 300) async -> RecordingReport? {
        let request: ScrollTestLaunch
        do {
            guard let parsed = try ScrollTestLaunch(arguments: arguments) else { return nil }
            request = parsed
        } catch {
            writeError("\(error)", arguments: arguments)
            return nil
        }
        do {
            // Task.sleep(nanoseconds:), iOS 13.
            try await Task.sleep(nanoseconds: UInt64(request.delay * 1e9))
            let report = try await ScrollTestDriver.run(identifier: request.target, script: request.script, timeout: timeout)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            // Data.write(to:options:) with .atomic, iOS 8: written to a temporary file, then renamed.
            guard let url = reportURL(request.reportPath) else { throw ScrollTestLaunchError.invalidReportPath(request.reportPath) }
            try encoder.encode(report).write(to: url, options: .atomic)
            return report
        } catch {
            writeError("\(error)", arguments: arguments)
            return nil
        }
    }

    /// Writes `{"error": message}` to the report path in `arguments`, when there is one.
    private static func writeError(_ message: String, arguments: [String]) {
        guard let path = reportPath(in: arguments), let url = reportURL(path),
              let data = try? JSONEncoder().encode(["error": message]) else { return }
        try? data.write(to: url, options: .atomic)
    }

    /// The file for a report path (``resolvedReportPath(_:temporaryDirectory:)``), or `nil`
    /// for a relative path that climbs out of the temporary folder.
    private static func reportURL(_ path: String) -> URL? {
        // FileManager.temporaryDirectory, iOS 10.
        guard let resolved = resolvedReportPath(path, temporaryDirectory: FileManager.default.temporaryDirectory.path) else { return nil }
        let url = URL(fileURLWithPath: resolved)
        // FileManager.createDirectory(at:withIntermediateDirectories:attributes:), iOS 5: a
        // relative path may name a subfolder (`runs/feed.json`).
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return url
    }
}
#endif
