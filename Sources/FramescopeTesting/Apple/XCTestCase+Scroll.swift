#if canImport(XCTest) && canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import FramescopeScroll
import FramescopeScrollRunner
import XCTest

extension XCTestCase {
    /// Scrolls the scroll view whose accessibility identifier is `identifier` by `script`,
    /// in this process (a unit test hosted by the app, as the detector article's KIF test),
    /// and fails the test with every limit of `budget` the report breaks
    /// (``XCTAssertSmooth(_:within:file:line:)``), or when no such scroll view is in the
    /// app's windows or the scroll takes longer than `timeout` seconds.
    ///
    /// ```swift
    /// func testFeedScrollsSmoothly() async {
    ///     await assertSmoothScroll(identifier: "feed-table", script: .accelerating(.thesis),
    ///                              budget: Budget(motion: [.max(.hitchRatio, 5)],
    ///                                             eachSegment: [.max(.dropEvents, 3), .max(.maxDroppedFrames, 3)]))
    /// }
    /// ```
    ///
    /// It runs on the caller's actor and hops to the main actor only for the scroll, so it
    /// can be called from a `@MainActor` test or a nonisolated one.
    ///
    /// - Parameters:
    ///   - identifier: The `UITableView`, `UICollectionView` or `UIScrollView`'s `accessibilityIdentifier`.
    ///   - script: The scroll (``ScrollScript``): steady, accelerating or a fling.
    ///   - budget: The limits the report must meet.
    ///   - timeout: Seconds the scroll may take.
    /// - Returns: The report (seconds, ms/s and FPS as `docs/metrics.md` defines them), or
    ///   `nil` when the scroll could not run.
    @discardableResult
    public func assertSmoothScroll(
        identifier: String,
        script: ScrollScript,
        budget: Budget,
        timeout: Double = 300,
        isolation: isolated (any Actor)? = #isolation,
        file: StaticString = #filePath,
        line: UInt = #line
    ) async -> RecordingReport? {
        do {
            let report = try await ScrollTestDriver.run(identifier: identifier, script: script, timeout: timeout)
            XCTAssertSmooth(report, within: budget, file: file, line: line)
            return report
        } catch {
            XCTFail("scroll test \"\(identifier)\": \(error)", file: file, line: line)
            return nil
        }
    }

    /// Scrolls the scroll view `identifier` by `script` `runs` times and writes each run's
    /// report to `series` (``ScrollRunSeries``, by default the one the environment names:
    /// `FRAMESCOPE_RUNS_DIR`, `FRAMESCOPE_BUILD`) for `framescope compare --baseline …
    /// --candidate …`; fails the test when a scroll cannot run or a report cannot be written.
    /// No budget is checked: the comparison of two builds' runs is the gate.
    ///
    /// ```swift
    /// func testFeedScrollRuns() async {
    ///     await recordScrollRuns(identifier: "feed-table", script: .accelerating(.thesis), runs: 5)
    /// }
    /// ```
    ///
    /// - Returns: The reports, in order (fewer when one failed).
    @discardableResult
    public func recordScrollRuns(
        identifier: String,
        script: ScrollScript,
        runs: Int,
        series: ScrollRunSeries? = .fromEnvironment(),
        timeout: Double = 300,
        isolation: isolated (any Actor)? = #isolation,
        file: StaticString = #filePath,
        line: UInt = #line
    ) async -> [RecordingReport] {
        guard let series else {
            XCTFail("recordScrollRuns: set FRAMESCOPE_RUNS_DIR (TEST_RUNNER_FRAMESCOPE_RUNS_DIR with xcodebuild) or pass a series",
                    file: file, line: line)
            return []
        }
        var reports: [RecordingReport] = []
        for run in 1...max(1, runs) {
            do {
                let report = try await ScrollTestDriver.run(identifier: identifier, script: script, timeout: timeout)
                try series.write(report)
                reports.append(report)
            } catch {
                XCTFail("scroll run \(run) of \"\(identifier)\": \(error)", file: file, line: line)
                break
            }
        }
        return reports
    }
}
#endif
