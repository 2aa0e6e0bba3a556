/// The thesis' repeatable scroll test: a timer every ``interval`` seconds animates the
/// content down by ``firstStep`` points, then ``stepGrowth`` points more on each fire; a fire
/// that finds the content at the bottom jumps back to the start and begins the next pass at
/// ``firstStep`` again; the fire that finds the bottom in the last pass ends the test.
///
/// The timer fires at the first display frame once it is due (a busy main thread delays
/// it, as a `Timer` on the main run loop is), and the next fire falls due ``interval``
/// seconds after that frame (so at 60 Hz a fire comes every 24 or 25 frames). Each step is an ease-in-out animation of
/// ``animationDuration`` seconds whose offset the driver sets frame by frame. Each pass is
/// one segment, `"pass N"`: it begins at the pass's first step and ends at the fire that
/// finds the bottom.
///
/// Worked example, 2,000 points of content in a 504-point viewport (bottom at 1,496): the
/// steps go to 100, 230, 390, 580, 800, 1,050, 1,330 and 1,496 (the last one cut short by
/// the bottom), fired at 0.4, 0.8, … 3.2 s; the fire at 3.6 s ends `"pass 1"` and jumps to
/// 0; pass 2 starts at 4.0 s with 100 points again; the 45th fire, at 18.0 s, ends
/// `"pass 5"` and the test (times for fires exactly on time; each late frame delays the
/// rest).
public struct AcceleratingScroll: Sendable, Hashable, Codable {
    /// Seconds between timer fires.
    public var interval: Double
    /// The first step of each pass, in points.
    public var firstStep: Double
    /// How much longer each step is than the one before, in points.
    public var stepGrowth: Double
    /// Passes from the start to the bottom.
    public var passes: Int
    /// Seconds each step's animation takes.
    public var animationDuration: Double

    /// A timer-driven accelerating scroll; the defaults are the thesis' test.
    ///
    /// - Parameters:
    ///   - interval: Seconds between timer fires (0.4).
    ///   - firstStep: The first step of each pass, in points (100).
    ///   - stepGrowth: Points added to each following step (30).
    ///   - passes: Passes to the bottom (5).
    ///   - animationDuration: Seconds per step's ease-in-out animation (0.3).
    public init(interval: Double = 0.4, firstStep: Double = 100, stepGrowth: Double = 30, passes: Int = 5,
                animationDuration: Double = 0.3) {
        self.interval = interval
        self.firstStep = firstStep
        self.stepGrowth = stepGrowth
        self.passes = passes
        self.animationDuration = animationDuration
    }

    /// The thesis' test: 0.4 s, 100 points, +30 points, five passes, 0.3 s animations.
    public static let thesis = AcceleratingScroll()

    /// What is wrong with these values, naming the field; `nil` when they are usable.
    public var problem: String? {
        if !(interval >= 0.001 && interval <= 60) { return "interval must be 0.001 to 60 seconds" }
        if !(firstStep > 0 && firstStep <= 100_000) { return "firstStep must be above 0 and at most 100000 points" }
        if !(stepGrowth >= 0 && stepGrowth <= 100_000) { return "stepGrowth must be 0 to 100000 points" }
        if !(1...SteadyScroll.maximumPasses).contains(passes) { return "passes must be 1 to \(SteadyScroll.maximumPasses)" }
        if !(animationDuration >= 0 && animationDuration <= 60) { return "animationDuration must be 0 to 60 seconds" }
        return nil
    }

    /// The targets of the timer's steps, pass by pass, in points from the top: where each
    /// step's animation ends, whatever the frame timing (the times of the fires depend on
    /// the frames; the targets do not).
    ///
    /// - Parameter geometry: The scroll view.
    /// - Returns: One array per pass.
    public func targets(in geometry: ScrollGeometry) -> [[Double]] {
        guard problem == nil else { return [] }
        var passes: [[Double]] = []
        let bottom = geometry.maximumOffset
        for _ in 0..<self.passes {
            var offset = geometry.start
            var step = firstStep
            var targets: [Double] = []
            while offset < bottom - 0.5 {
                offset = min(offset + step, bottom)
                step += stepGrowth
                targets.append(offset)
            }
            passes.append(targets)
        }
        return passes
    }
}
