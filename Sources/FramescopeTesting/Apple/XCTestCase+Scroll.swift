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
}
#endif
