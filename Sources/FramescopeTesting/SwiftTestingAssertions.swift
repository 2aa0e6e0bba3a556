#if canImport(Testing)
import FramescopeCore
import Testing

/// Records one Swift Testing issue listing every limit `report` breaks; returns
/// whether the budget was met.
///
/// ```swift
/// @Test func feedScrollsSmoothly() async throws {
///     let report = try await recordScroll()
///     expectSmooth(report, within: Budget(eachSegment: [.max(.dropEvents, 3)]))
/// }
/// ```
@discardableResult
public func expectSmooth(
    _ report: RecordingReport,
    within budget: Budget,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    guard let message = smoothnessFailureMessage(report, within: budget) else { return true }
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    return false
}

/// ``expectSmooth(_:within:sourceLocation:)`` for a single span (no segments): the
/// report is taken as the whole recording.
@discardableResult
public func expectSmooth(
    _ report: FrameReport,
    within budget: Budget,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    expectSmooth(RecordingReport(whole: report), within: budget, sourceLocation: sourceLocation)
}
#endif
