/// A scroll at a fixed number of points per display frame, from the start to the bottom,
/// once per pass: the detector article's slow, steady scroll, slow enough that a table or
/// collection view never takes its fast-scroll shortcuts.
///
/// Each pass is one segment, `"pass N"`. Its first frame sets the start offset; every later
/// frame moves ``pointsPerFrame`` further until the bottom; the frame after the bottom ends
/// the segment and, when a pass is left, jumps back to the start outside any segment.
///
/// ```swift
/// // 1,496 points of travel at 4 points per frame: frames 0…374 move, frame 375 ends
/// // "pass 1" (6.25 s at 60 Hz).
/// var player = ScrollPlayer(script: .steady(SteadyScroll(pointsPerFrame: 4)),
///                           geometry: ScrollGeometry(contentHeight: 2_000, viewportHeight: 504))
/// ```
public struct SteadyScroll: Sendable, Hashable, Codable {
    /// Points the content moves per display frame (so twice as many per second at 120 Hz
    /// as at 60 Hz, as a test that scrolls frame by frame does).
    public var pointsPerFrame: Double
    /// Passes from the start to the bottom.
    public var passes: Int

    /// A steady scroll of `pointsPerFrame` points per frame, `passes` times.
    public init(pointsPerFrame: Double = 4, passes: Int = 1) {
        self.pointsPerFrame = pointsPerFrame
        self.passes = passes
    }

    /// The largest speed a script may ask for, in points per frame (a screen height per frame).
    public static let maximumPointsPerFrame = 1_000.0
    /// The most passes a script may ask for.
    public static let maximumPasses = 1_000

    /// What is wrong with these values, naming the field; `nil` when they are usable.
    public var problem: String? {
        if !(pointsPerFrame > 0 && pointsPerFrame <= Self.maximumPointsPerFrame) {
            return "pointsPerFrame must be above 0 and at most \(Int(Self.maximumPointsPerFrame)) points"
        }
        if !(1...Self.maximumPasses).contains(passes) { return "passes must be 1 to \(Self.maximumPasses)" }
        return nil
    }
}
