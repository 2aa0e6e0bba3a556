import Foundation
import FramescopeCore

/// Where the runs of a scroll test go for `framescope compare`: one report a run,
/// `<folder>/<build>-<n>.json`, as `framescope analyze --format json` writes reports, so
/// that a CI job can compare two builds' runs:
///
/// ```
/// framescope compare --baseline runs/base-*.json --candidate runs/cand-*.json --format junit
/// ```
///
/// The folder and the build's name come from the test's environment
/// (``fromEnvironment(_:)``): `FRAMESCOPE_RUNS_DIR` and `FRAMESCOPE_BUILD` (with
/// `xcodebuild test`, set them as `TEST_RUNNER_FRAMESCOPE_RUNS_DIR` and
/// `TEST_RUNNER_FRAMESCOPE_BUILD`: the runner passes them on without the prefix).
public struct ScrollRunSeries: Sendable, Hashable {
    /// The folder the reports are written to (created when missing).
    public var folder: URL
    /// The build's name in the files' names (letters, digits, `-`, `_`, `.`; others become `_`).
    public var build: String

    /// A series for `build` in `folder`.
    public init(folder: URL, build: String) {
        self.folder = folder
        let cleaned = String(build.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_" })
        self.build = cleaned.isEmpty ? "build" : cleaned
    }

    /// The series `FRAMESCOPE_RUNS_DIR` and `FRAMESCOPE_BUILD` name (the build `build` when
    /// only the folder is set), or nil when `FRAMESCOPE_RUNS_DIR` is not set.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ScrollRunSeries? {
        guard let folder = environment["FRAMESCOPE_RUNS_DIR"], !folder.isEmpty else { return nil }
        return ScrollRunSeries(folder: URL(fileURLWithPath: folder), build: environment["FRAMESCOPE_BUILD"] ?? "build")
    }

    /// The file of run `run` (from 1): `<folder>/<build>-<run>.json`.
    public func url(run: Int) -> URL {
        folder.appendingPathComponent("\(build)-\(run).json")
    }

    /// The first run number not yet written in the folder: runs of one build recorded by
    /// several test invocations (interleaved with another build's) number on.
    public func nextRun() -> Int {
        var run = 1
        while FileManager.default.fileExists(atPath: url(run: run).path) { run += 1 }
        return run
    }

    /// Writes `report` as the next run's file and returns its URL.
    /// - Throws: the file system's error when the folder or file cannot be written.
    @discardableResult
    public func write(_ report: RecordingReport) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let file = url(run: nextRun())
        try encoder.encode(report).write(to: file, options: .withoutOverwriting)
        return file
    }
}
