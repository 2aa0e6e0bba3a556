import FramescopeCore
import FramescopeTesting
import Testing
import XCTest

/// Two scrolls at 60 Hz; `drops` late frames (2 refreshes each) in the first.
func twoScrolls(drops: Int) -> RecordingReport {
    let r = 1.0 / 60
    var analyzer = FrameAnalyzer()
    var t = 0.0
    analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
    t += r
    analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))  // the first interval: firstFPS only
    for scroll in 1...2 {
        analyzer.beginSegment("scroll \(scroll)")
        for index in 0..<60 {
            t += (scroll == 1 && index < drops * 10 && index % 10 == 0 ? 2 : 1) * r
            analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
        }
        analyzer.endSegment()
    }
    return analyzer.report()
}

@Suite("Budget assertions")
struct AssertionTests {
    let budget = Budget(eachSegment: [.max(.dropEvents, 3)])

    @Test("expectSmooth passes within the budget")
    func passes() {
        #expect(expectSmooth(twoScrolls(drops: 3), within: budget))
    }

    @Test("expectSmooth records one issue listing each broken limit")
    func fails() {
        withKnownIssue {
            expectSmooth(twoScrolls(drops: 4), within: budget)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("scroll 1: 4 drop events, budget allows 3") }
        }
    }

    @Test("The failure message has a heading and one line per violation")
    func message() {
        let message = smoothnessFailureMessage(twoScrolls(drops: 5), within: Budget(recording: [.max(.droppedFrames, 1)], eachSegment: [.max(.dropEvents, 3)]))
        #expect(message == """
            not smooth enough: 2 limits broken
              recording: 5 dropped frames, budget allows 1
              scroll 1: 5 drop events, budget allows 3
            """)
        #expect(smoothnessFailureMessage(twoScrolls(drops: 0), within: budget) == nil)
    }
}

final class XCTestAssertionTests: XCTestCase {
    func testSmoothReportPasses() {
        XCTAssertSmooth(twoScrolls(drops: 2), within: Budget(eachSegment: [.max(.dropEvents, 3)]))
        XCTAssertSmooth(twoScrolls(drops: 0).whole, within: Budget(recording: [.max(.hitchRatio, 0)]))
    }
}
