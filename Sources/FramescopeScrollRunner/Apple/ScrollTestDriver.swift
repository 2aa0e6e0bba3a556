#if canImport(UIKit) && canImport(QuartzCore)
import FramescopeCore
import FramescopeScroll
import Foundation
import QuartzCore
import UIKit

/// Runs a ``ScrollTestRun`` on a `UIScrollView` from a `CADisplayLink`: each display frame
/// hands the link's times to the run and sets the offset it answers. The run decides every
/// offset and segment; this only reads the clock and the scroll view's size.
///
/// ```swift
/// let driver = ScrollTestDriver(scrollView: tableView, script: .accelerating(.thesis))
/// let report = await driver.run()       // 18 s at the thesis' pace
/// XCTAssertSmooth(report, within: Budget(eachSegment: [.max(.dropEvents, 3)]))
/// ```
@MainActor
public final class ScrollTestDriver: NSObject {
    /// Why a scroll test could not run.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// No scroll view in the app's windows has this accessibility identifier.
        case scrollViewNotFound(String)
        /// The run took longer than this many seconds.
        case timedOut(Double)

        /// What went wrong, for a test's log.
        public var description: String {
            switch self {
            case let .scrollViewNotFound(identifier): "no UIScrollView with accessibility identifier \"\(identifier)\" in the app's windows"
            case let .timedOut(seconds): "the scroll test did not finish within \(seconds) s"
            }
        }
    }

    private let scrollView: UIScrollView
    private let script: ScrollScript
    private let analyzer: AnalyzerConfiguration
    private var testRun: ScrollTestRun?
    private var link: CADisplayLink?
    private var continuation: CheckedContinuation<RecordingReport, Never>?

    /// A driver that scrolls `scrollView` by `script`, measured with `analyzer`'s definitions.
    public init(scrollView: UIScrollView, script: ScrollScript, analyzer: AnalyzerConfiguration = AnalyzerConfiguration()) {
        self.scrollView = scrollView
        self.script = script
        self.analyzer = analyzer
    }

    /// Scrolls from the top (the scroll view's size read now) until the script finishes, at
    /// the display's highest rate, and answers the report: one segment per pass or fling.
    /// Call it once at a time.
    public func run() async -> RecordingReport {
        precondition(continuation == nil, "ScrollTestDriver.run() is already running")
        // UIScrollView.adjustedContentInset, iOS 11; contentSize, iOS 2 (points).
        let inset = scrollView.adjustedContentInset
        let geometry = ScrollGeometry(contentHeight: Double(scrollView.contentSize.height + inset.top + inset.bottom),
                                      viewportHeight: Double(scrollView.bounds.height))
        testRun = ScrollTestRun(script: script, geometry: geometry, analyzer: analyzer)
        return await withCheckedContinuation { continuation in
            self.continuation = continuation
            // CADisplayLink(target:selector:), iOS 3.1.
            let link = CADisplayLink(target: self, selector: #selector(step(_:)))
            // UIView.window, UIWindow.windowScene (iOS 13), UIScreen.maximumFramesPerSecond (iOS 10.3).
            if let rate = scrollView.window?.windowScene?.screen.maximumFramesPerSecond, rate > 0 {
                // CADisplayLink.preferredFrameRateRange, CAFrameRateRange, iOS 15.
                link.preferredFrameRateRange = CAFrameRateRange(minimum: Float(rate), maximum: Float(rate), preferred: Float(rate))
            }
            link.add(to: .main, forMode: .common)   // CADisplayLink.add(to:forMode:), iOS 3.1
            self.link = link
        }
    }

    /// Ends a run now (a timeout): ``run()`` answers the report of the frames so far.
    public func cancel() {
        finish()
    }

    @objc private func step(_ link: CADisplayLink) {
        // CADisplayLink.timestamp, .duration (iOS 3.1) and .targetTimestamp (iOS 10), in seconds.
        guard let offset = testRun?.step(timestamp: link.timestamp, targetTimestamp: link.targetTimestamp,
                                         refreshInterval: link.duration) else { return finish() }
        // UIScrollView.setContentOffset(_:animated:) and contentOffset, iOS 2: content coordinates less the top inset.
        scrollView.setContentOffset(CGPoint(x: scrollView.contentOffset.x, y: CGFloat(offset) - scrollView.adjustedContentInset.top),
                                    animated: false)
    }

    private func finish() {
        link?.invalidate()   // CADisplayLink.invalidate(), iOS 3.1
        link = nil
        guard let continuation, let testRun else { return }
        self.continuation = nil
        continuation.resume(returning: testRun.report())
    }

    /// Finds the scroll view with accessibility identifier `identifier`, runs `script` on it
    /// and answers the report.
    /// - Parameter timeout: Seconds the run may take before it is cut short and this throws.
    /// - Throws: ``Failure`` when no such scroll view exists or the run times out.
    public static func run(identifier: String, script: ScrollScript, timeout: Double = 300) async throws -> RecordingReport {
        guard let scrollView = findScrollView(identifier: identifier) else { throw Failure.scrollViewNotFound(identifier) }
        let driver = ScrollTestDriver(scrollView: scrollView, script: script)
        let seconds = timeout.isFinite ? min(max(timeout, 0), 86_400) : 86_400
        let watchdog = Task { @MainActor in
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))   // Task.sleep(nanoseconds:), iOS 13
            guard !Task.isCancelled else { return false }
            driver.cancel()
            return true
        }
        let report = await driver.run()
        watchdog.cancel()
        if await watchdog.value { throw Failure.timedOut(seconds) }
        return report
    }

    /// The first scroll view with accessibility identifier `identifier` in the app's windows:
    /// each connected window scene's key window first, then their other windows, depth first.
    public static func findScrollView(identifier: String) -> UIScrollView? {
        // UIApplication.connectedScenes and UIWindowScene.windows (iOS 13), UIWindowScene.keyWindow (iOS 15).
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        let windows = scenes.compactMap { $0.keyWindow } + scenes.flatMap { scene in scene.windows.filter { !$0.isKeyWindow } }
        for window in windows {
            if let found = findScrollView(identifier: identifier, in: window) { return found }
        }
        return nil
    }

    /// The first scroll view with accessibility identifier `identifier` in `view` and its
    /// subviews, depth first.
    public static func findScrollView(identifier: String, in view: UIView) -> UIScrollView? {
        // UIAccessibilityIdentification.accessibilityIdentifier, iOS 5.
        if let scrollView = view as? UIScrollView, scrollView.accessibilityIdentifier == identifier { return scrollView }
        for subview in view.subviews {   // UIView.subviews, iOS 2
            if let found = findScrollView(identifier: identifier, in: subview) { return found }
        }
        return nil
    }
}
#endif
