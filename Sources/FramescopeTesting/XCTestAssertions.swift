#if canImport(XCTest)
import FramescopeCore
import XCTest

/// Fails the current XCTest test with every limit `report` breaks, one per line.
///
/// ```swift
/// func testFeedScrollsSmoothly() throws {
///     XCTAssertSmooth(try recordScroll(), within: Budget(eachSegment: [.max(.dropEvents, 3)]))
/// }
/// ```
public func XCTAssertSmooth(
    _ report: RecordingReport,
    within budget: Budget,
    file: StaticString = #filePath,
    line: UInt = #line
) {
    if let message = smoothnessFailureMessage(report, within: budget) {
        XCTFail(message, file: file, line: line)
    }
}

/// ``XCTAssertSmooth(_:within:file:line:)`` for a single span (no segments).
public func XCTAssertSmooth(
    _ report: FrameReport,
    within budget: Budget,
    file: StaticString = #filePath,
    line: UInt = #line
) {
    XCTAssertSmooth(RecordingReport(whole: report), within: budget, file: file, line: line)
}
#endif
