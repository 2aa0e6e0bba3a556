/// The scroll view a script runs on: how tall its content and its visible part are, and
/// where the script starts, all in points.
///
/// Offsets are in content coordinates: 0 shows the top of the content and
/// ``maximumOffset`` (the content's height less the viewport's) shows its bottom. A UIKit
/// driver adds its adjusted content inset when it sets `contentOffset`.
///
/// ```swift
/// let geometry = ScrollGeometry(contentHeight: 2_000, viewportHeight: 504)
/// geometry.maximumOffset   // 1496
/// ```
public struct ScrollGeometry: Sendable, Hashable, Codable {
    /// The content's height, in points.
    public var contentHeight: Double
    /// The visible part's height, in points.
    public var viewportHeight: Double
    /// Where the script starts, and where each new pass starts again, in points from the
    /// top (clamped into `0...maximumOffset`).
    public var startOffset: Double

    /// A geometry; a height that is negative, infinite or NaN counts as 0.
    ///
    /// - Parameters:
    ///   - contentHeight: The content's height, in points.
    ///   - viewportHeight: The visible part's height, in points.
    ///   - startOffset: Where the script starts, in points from the top.
    public init(contentHeight: Double, viewportHeight: Double, startOffset: Double = 0) {
        self.contentHeight = contentHeight
        self.viewportHeight = viewportHeight
        self.startOffset = startOffset
    }

    /// The largest offset, in points: the content's height less the viewport's, never below 0.
    public var maximumOffset: Double {
        let content = contentHeight.isFinite ? contentHeight : 0
        let viewport = viewportHeight.isFinite ? viewportHeight : 0
        return max(0, content - max(0, viewport))
    }

    /// ``startOffset`` clamped into `0...maximumOffset` (0 when it is not a number), in points.
    public var start: Double {
        guard startOffset.isFinite else { return 0 }
        return min(max(startOffset, 0), maximumOffset)
    }
}
