/// Runs a ``ScrollScript`` over a ``ScrollGeometry`` frame by frame: give it each display
/// frame's time and it answers the offset to set and the segment boundaries (a
/// ``ScrollFrame``). The same script and the same frame times give the same answers on every
/// run and platform.
///
/// ```swift
/// var player = ScrollPlayer(script: .accelerating(.thesis),
///                           geometry: ScrollGeometry(contentHeight: 2_000, viewportHeight: 504))
/// var time = 0.0
/// while !player.isFinished {
///     let frame = player.frame(at: time)   // set frame.offset, end/begin its segments
///     time += 1.0 / 60
/// }
/// ```
///
/// Values out of range (see ``ScrollScript/problem``) are clamped into range here; refuse
/// them earlier if they come from outside.
public struct ScrollPlayer: Sendable {
    /// The script being run.
    public let script: ScrollScript
    /// The scroll view it runs on.
    public let geometry: ScrollGeometry

    private var state: State
    private var firstTime: Double?
    /// Seconds from the first frame to the frame that finished the script; `nil` before.
    public private(set) var finishedAfter: Double?

    private enum State: Sendable {
        case steady(SteadyState)
        case accelerating(AcceleratingState)
        case fling(FlingState)
    }

    /// A player at the start of `script` on `geometry`.
    public init(script: ScrollScript, geometry: ScrollGeometry) {
        self.script = script
        self.geometry = geometry
        switch script {
        case let .steady(steady): state = .steady(SteadyState(script: steady, geometry: geometry))
        case let .accelerating(accelerating): state = .accelerating(AcceleratingState(script: accelerating, geometry: geometry))
        case let .fling(fling): state = .fling(FlingState(script: fling, geometry: geometry))
        }
    }

    /// Whether the script has finished.
    public var isFinished: Bool { finishedAfter != nil }

    /// The frame at `time` (seconds on any monotonic clock, such as a display link's
    /// `timestamp`; the first call is the script's start). Call it once per display frame,
    /// with times that do not go backwards.
    public mutating func frame(at time: Double) -> ScrollFrame {
        let start = firstTime ?? time
        firstTime = start
        let elapsed = time - start
        var frame: ScrollFrame
        switch state {
        case var .steady(steady):
            frame = steady.advance()
            state = .steady(steady)
        case var .accelerating(accelerating):
            frame = accelerating.advance(elapsed: elapsed)
            state = .accelerating(accelerating)
        case var .fling(fling):
            frame = fling.advance(elapsed: elapsed)
            state = .fling(fling)
        }
        frame.time = elapsed
        if frame.isFinished, finishedAfter == nil { finishedAfter = elapsed }
        return frame
    }

    /// Every frame of the script at a steady `frameInterval` seconds, up to
    /// `maximumDuration` seconds: what a device whose frames are all on time would see.
    ///
    /// - Parameters:
    ///   - script: The script.
    ///   - geometry: The scroll view.
    ///   - frameInterval: Seconds between frames (1/60 for 60 Hz).
    ///   - maximumDuration: Seconds after which the plan stops even if the script has not finished.
    public static func plan(_ script: ScrollScript, geometry: ScrollGeometry, frameInterval: Double,
                            maximumDuration: Double = 600) -> [ScrollFrame] {
        guard frameInterval > 0, frameInterval.isFinite else { return [] }
        var player = ScrollPlayer(script: script, geometry: geometry)
        var frames: [ScrollFrame] = []
        var index = 0.0
        while true {
            let time = index * frameInterval
            if time > maximumDuration { break }
            let frame = player.frame(at: time)
            frames.append(frame)
            if frame.isFinished { break }
            index += 1
        }
        return frames
    }
}

/// The steady script's state: one segment per pass, a fixed move per frame.
private struct SteadyState: Sendable {
    let step: Double
    let passes: Int
    let start: Double
    let bottom: Double
    var offset: Double
    var pass = 1
    var moves = 0
    var isOpen = false
    var isFinished = false

    init(script: SteadyScroll, geometry: ScrollGeometry) {
        step = min(max(script.pointsPerFrame.isFinite ? script.pointsPerFrame : 1, 0.001), SteadyScroll.maximumPointsPerFrame)
        passes = min(max(script.passes, 1), SteadyScroll.maximumPasses)
        start = geometry.start
        bottom = geometry.maximumOffset
        offset = start
    }

    mutating func advance() -> ScrollFrame {
        var frame = ScrollFrame(time: 0, offset: offset, isMoving: false, pass: pass, moves: moves, isFinished: isFinished)
        if isFinished { return frame }
        if !isOpen {
            // A pass begins where the content is: at the start.
            isOpen = true
            offset = start
            frame.segmentBegins = "pass \(pass)"
            frame.isMoving = true
        } else if offset >= bottom {
            isOpen = false
            frame.segmentEnds = "pass \(pass)"
            if pass == passes {
                isFinished = true
            } else {
                pass += 1
                offset = start
            }
        } else {
            offset = min(offset + step, bottom)
            moves += 1
            frame.isMoving = true
        }
        frame.offset = offset
        frame.moves = moves
        frame.isFinished = isFinished
        return frame
    }
}

/// The accelerating script's state. The order of the arithmetic is the simulator's
/// calibrated one: change it and the thesis' table moves.
private struct AcceleratingState: Sendable {
    let script: AcceleratingScroll
    let passes: Int
    let start: Double
    let bottom: Double
    var nextFire: Double
    var offset: Double
    var animationFrom: Double
    var animationTo: Double
    var animationStart = -Double.infinity
    var step: Double
    var pass = 1
    var moves = 0
    var isOpen = false
    var isFinished = false

    init(script: AcceleratingScroll, geometry: ScrollGeometry) {
        var clamped = script
        if script.problem != nil {
            clamped.interval = min(max(script.interval.isFinite ? script.interval : 0.4, 0.001), 60)
            clamped.firstStep = min(max(script.firstStep.isFinite ? script.firstStep : 100, 0.001), 100_000)
            clamped.stepGrowth = min(max(script.stepGrowth.isFinite ? script.stepGrowth : 0, 0), 100_000)
            clamped.animationDuration = min(max(script.animationDuration.isFinite ? script.animationDuration : 0, 0), 60)
        }
        self.script = clamped
        passes = min(max(script.passes, 1), SteadyScroll.maximumPasses)
        start = geometry.start
        bottom = geometry.maximumOffset
        nextFire = clamped.interval
        offset = start
        animationFrom = start
        animationTo = start
        step = clamped.firstStep
    }

    mutating func advance(elapsed time: Double) -> ScrollFrame {
        var ends: String?
        var begins: String?
        // The timer fires on the main thread, at the first frame once it is due.
        if time >= nextFire, !isFinished {
            nextFire = time + script.interval
            if offset >= bottom - 0.5 {
                if isOpen {
                    ends = "pass \(pass)"
                    isOpen = false
                }
                if pass == passes {
                    isFinished = true
                } else {
                    pass += 1
                    step = script.firstStep
                    offset = start
                    animationFrom = start
                    animationTo = start
                }
            } else {
                if !isOpen {
                    begins = "pass \(pass)"
                    isOpen = true
                }
                animationFrom = offset
                animationTo = min(offset + step, bottom)
                animationStart = time
                step += script.stepGrowth
                moves += 1
            }
        }
        // The step's animation moves the offset with an ease-in-out curve.
        let progress = script.animationDuration > 0 ? (time - animationStart) / script.animationDuration : (time >= animationStart ? 1 : -1)
        let moving = progress >= 0 && progress < 1
        if moving {
            let eased = progress * progress * (3 - 2 * progress)
            offset = animationFrom + (animationTo - animationFrom) * eased
        } else if progress >= 1 {
            offset = animationTo
        }
        return ScrollFrame(time: time, offset: offset, isMoving: moving, segmentEnds: ends, segmentBegins: begins,
                           pass: pass, moves: moves, isFinished: isFinished)
    }
}

/// The fling's state: one segment from release until it is slow or at an end.
private struct FlingState: Sendable {
    let script: FlingScroll
    let start: Double
    let bottom: Double
    let duration: Double
    var offset: Double
    var begun = false
    var isFinished = false

    init(script: FlingScroll, geometry: ScrollGeometry) {
        var clamped = script
        if script.problem != nil {
            clamped.velocity = script.velocity.isFinite && script.velocity != 0 ? min(max(script.velocity, -1_000_000), 1_000_000) : 1
            clamped.decelerationRate = script.decelerationRate > 0.5 && script.decelerationRate < 1 ? script.decelerationRate : FlingScroll.normalDecelerationRate
            clamped.stopVelocity = script.stopVelocity > 0 && script.stopVelocity <= 10_000 ? script.stopVelocity : 10
        }
        self.script = clamped
        start = geometry.start
        bottom = geometry.maximumOffset
        duration = clamped.duration
        offset = start
    }

    mutating func advance(elapsed time: Double) -> ScrollFrame {
        var frame = ScrollFrame(time: time, offset: offset, isMoving: false, pass: 1, moves: 1, isFinished: isFinished)
        if isFinished { return frame }
        if !begun {
            begun = true
            frame.segmentBegins = "fling"
            frame.isMoving = true
            return frame
        }
        let travelled = start + script.distance(at: time)
        offset = min(max(travelled, 0), bottom)
        frame.offset = offset
        frame.isMoving = true
        if time >= duration || travelled <= 0 || travelled >= bottom {
            isFinished = true
            frame.segmentEnds = "fling"
            frame.isFinished = true
        }
        return frame
    }
}
