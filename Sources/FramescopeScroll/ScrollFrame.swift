/// What a scroll script asks for at one display frame: the offset to set, whether the
/// content moves, and where a measured segment ends or begins.
///
/// A driver handles a frame in this order: it records the frame's tick (the interval that
/// just ended belongs to the segment that was open), ends ``segmentEnds`` if set, begins
/// ``segmentBegins`` if set, then sets ``offset`` without animation.
public struct ScrollFrame: Sendable, Hashable, Codable {
    /// Seconds since the script's first frame.
    public var time: Double
    /// The content offset to set, in points from the top of the content.
    public var offset: Double
    /// Whether the script moves the content at this frame (a jump back to the start does not count).
    public var isMoving: Bool
    /// The label of the segment that ends at this frame, if one does.
    public var segmentEnds: String?
    /// The label of the segment that begins at this frame, if one does.
    public var segmentBegins: String?
    /// The pass under way, from 1.
    public var pass: Int
    /// Moves started so far over the whole script: timer steps for ``AcceleratingScroll``,
    /// frames that moved for ``SteadyScroll``, 1 for ``FlingScroll``.
    public var moves: Int
    /// Whether the script has finished; every later frame repeats the last offset.
    public var isFinished: Bool

    /// A frame; see each property for units.
    public init(time: Double, offset: Double, isMoving: Bool, segmentEnds: String? = nil, segmentBegins: String? = nil,
                pass: Int, moves: Int, isFinished: Bool) {
        self.time = time
        self.offset = offset
        self.isMoving = isMoving
        self.segmentEnds = segmentEnds
        self.segmentBegins = segmentBegins
        self.pass = pass
        self.moves = moves
        self.isFinished = isFinished
    }
}
