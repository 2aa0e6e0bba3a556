import Foundation
import FramescopeCore
import FramescopeScroll
import Testing

/// The thesis' geometry from the scripts' worked examples: bottom at 1,496 points.
private let geometry = ScrollGeometry(contentHeight: 2_000, viewportHeight: 504)

@Suite("Scroll scripts")
struct ScrollScriptTests {
    @Test("accelerating: the first steps go 100, 230, 390, … and stop at the bottom")
    func acceleratingTargets() {
        let targets = AcceleratingScroll.thesis.targets(in: geometry)
        #expect(targets.count == 5)
        #expect(targets[0] == [100, 230, 390, 580, 800, 1050, 1330, 1496])
        #expect(Set(targets.map { $0 }).count == 1)
    }

    @Test("accelerating at 60 Hz: timer fires, animated offsets, the jump back, the end after the fifth pass")
    func acceleratingFrames() {
        let frames = ScrollPlayer.plan(.accelerating(.thesis), geometry: geometry, frameInterval: 1.0 / 60)
        // Nothing moves before the first fire at 0.4 s (frame 24).
        #expect(frames[0..<24].allSatisfy { $0.offset == 0 && !$0.isMoving })
        let firstFire = frames[24]
        #expect(firstFire.segmentBegins == "pass 1")
        #expect(firstFire.isMoving && firstFire.offset == 0 && firstFire.moves == 1)
        // Half-way through the 0.3 s animation (9 frames later) the ease-in-out curve is at
        // exactly one half: 50 points.
        #expect(abs(frames[24 + 9].offset - 50) < 1e-9)
        // The animation ends at the target and the content rests until the next fire.
        #expect(frames[24 + 19].offset == 100 && !frames[24 + 19].isMoving)
        // Each fire's target, read where the content rests just before the next fire.
        var rests: [Double] = []
        for (index, frame) in frames.enumerated() where index > 0 && frame.moves > frames[index - 1].moves {
            rests.append(frames[index - 1].offset)
        }
        #expect(Array(rests.prefix(8)) == [0, 100, 230, 390, 580, 800, 1050, 1330])
        // The fire that finds the bottom ends the pass and jumps back to the top.
        let ends = frames.enumerated().filter { $0.element.segmentEnds != nil }
        #expect(ends.map(\.element.segmentEnds) == ["pass 1", "pass 2", "pass 3", "pass 4", "pass 5"])
        let firstEnd = ends[0]
        #expect(frames[firstEnd.offset - 1].offset == 1496)
        #expect(firstEnd.element.offset == 0 && !firstEnd.element.isMoving)
        #expect(firstEnd.element.time >= 3.6 && firstEnd.element.time < 3.6 + 9.0 / 60)
        // The next pass starts at 100 points again.
        let secondBegin = frames.firstIndex { $0.segmentBegins == "pass 2" }
        #expect(secondBegin.map { frames[$0].time >= 4.0 && frames[$0].time < 4.0 + 10.0 / 60 } == true)
        #expect(frames[(secondBegin ?? 0) + 19].offset == 100)
        // The fifth pass's end finishes the script, after 8 steps per pass and nothing more.
        #expect(frames.last?.isFinished == true && frames.last?.segmentEnds == "pass 5")
        #expect(frames.filter(\.isFinished).count == 1)
        #expect(frames.last?.moves == 40)
        // Each fire is due 0.4 s after the frame that fired, so 60 Hz frames (24 or 25 per
        // fire) stretch the nominal 18 s a little: 45 fires, each at most a frame late.
        let total = frames.last?.time ?? 0
        #expect(total >= 18.0 && total <= 18.0 + 45.0 / 60)
        #expect(frames.compactMap(\.segmentBegins) == ["pass 1", "pass 2", "pass 3", "pass 4", "pass 5"])
    }

    @Test("accelerating: a late frame delays the timer, as a busy main thread does, but not the targets")
    func acceleratingLateFrames() {
        var player = ScrollPlayer(script: .accelerating(.thesis), geometry: geometry)
        var time = 0.0
        var rests: [Double] = []
        var last = 0.0
        var moves = 0
        while !player.isFinished && time < 100 {
            // Every 10th frame takes 100 ms.
            let frame = player.frame(at: time)
            if frame.moves > moves { rests.append(last); moves = frame.moves }
            last = frame.offset
            time += Int((time * 60).rounded()) % 10 == 9 ? 0.1 : 1.0 / 60
        }
        #expect(player.isFinished)
        #expect(Array(rests.prefix(8)) == [0, 100, 230, 390, 580, 800, 1050, 1330])
        #expect((player.finishedAfter ?? 0) > 18.0)
    }

    @Test("steady: a fixed move per frame, one segment per pass, the jump outside any segment")
    func steady() {
        let frames = ScrollPlayer.plan(.steady(SteadyScroll(pointsPerFrame: 4, passes: 2)), geometry: geometry, frameInterval: 1.0 / 120)
        #expect(frames[0].segmentBegins == "pass 1" && frames[0].offset == 0)
        #expect(frames[1].offset == 4 && frames[2].offset == 8)
        // 1,496 / 4 = 374 moves reach the bottom; the frame after ends the pass and jumps.
        #expect(frames[374].offset == 1496 && frames[374].isMoving)
        #expect(frames[375].segmentEnds == "pass 1" && frames[375].offset == 0 && !frames[375].isMoving)
        #expect(frames[376].segmentBegins == "pass 2" && frames[376].offset == 0)
        #expect(frames.last?.segmentEnds == "pass 2" && frames.last?.isFinished == true)
        #expect(frames.count == 752)
        // Per frame, not per second: the same script at 60 Hz moves the same offsets.
        let at60 = ScrollPlayer.plan(.steady(SteadyScroll(pointsPerFrame: 4, passes: 2)), geometry: geometry, frameInterval: 1.0 / 60)
        #expect(at60.map(\.offset) == frames.map(\.offset))
    }

    @Test("steady: a step that does not divide the travel stops at the bottom")
    func steadyUneven() {
        let frames = ScrollPlayer.plan(.steady(SteadyScroll(pointsPerFrame: 7)), geometry: geometry, frameInterval: 1.0 / 60)
        #expect(frames.map(\.offset).max() == 1496)
        #expect(frames.last?.isFinished == true)
        #expect(frames.filter { $0.segmentEnds != nil }.count == 1)
    }

    @Test("fling: UIScrollView's normal deceleration, the distance and the stop")
    func fling() {
        let fling = FlingScroll(velocity: 2_000)
        #expect(abs(fling.distance(at: 100) - 999.0) < 0.1)
        #expect(abs(fling.duration - 2.6465) < 0.001)
        let velocityAfterOneSecond: Double = 2_000 * pow(0.998, 1000)
        #expect(abs(fling.velocity(at: 1) - velocityAfterOneSecond) < 1e-6)
        let kept: Double = pow(0.998, 500) - 1
        let distanceAfterHalfASecond: Double = 2_000 * kept / (1000 * log(0.998))
        #expect(abs(fling.distance(at: 0.5) - distanceAfterHalfASecond) < 1e-6)
        let frames = ScrollPlayer.plan(.fling(fling), geometry: ScrollGeometry(contentHeight: 5_000, viewportHeight: 500), frameInterval: 1.0 / 60)
        #expect(frames.first?.segmentBegins == "fling")
        #expect(frames.last?.segmentEnds == "fling" && frames.last?.isFinished == true)
        let flingSeconds = Double(frames.count - 1) / 60
        #expect(abs(flingSeconds - 2.6465) < 0.017)
        // Monotonic, decelerating.
        let steps = zip(frames.dropFirst(), frames).map { $0.offset - $1.offset }
        #expect(steps.allSatisfy { $0 >= 0 })
        #expect(steps.dropFirst().first! > steps.last!)
    }

    @Test("fling: an end of the content stops it early; upwards from the middle stops at the top")
    func flingAtEnds() {
        let short = ScrollPlayer.plan(.fling(FlingScroll(velocity: 5_000)), geometry: geometry, frameInterval: 1.0 / 60)
        #expect(short.last?.offset == 1496 && short.last?.isFinished == true)
        let up = ScrollPlayer.plan(.fling(FlingScroll(velocity: -5_000)),
                                   geometry: ScrollGeometry(contentHeight: 2_000, viewportHeight: 504, startOffset: 700), frameInterval: 1.0 / 60)
        #expect(up.first?.offset == 700)
        #expect(up.last?.offset == 0 && up.last?.segmentEnds == "fling")
    }

    @Test("geometry: content shorter than the viewport, a start beyond the bottom, NaN")
    func geometryEdges() {
        #expect(ScrollGeometry(contentHeight: 100, viewportHeight: 504).maximumOffset == 0)
        #expect(ScrollGeometry(contentHeight: 2_000, viewportHeight: 504, startOffset: 5_000).start == 1496)
        #expect(ScrollGeometry(contentHeight: .nan, viewportHeight: .infinity, startOffset: .nan).start == 0)
        // A list too short to scroll still ends after its five passes, with no segment.
        let frames = ScrollPlayer.plan(.accelerating(.thesis), geometry: ScrollGeometry(contentHeight: 100, viewportHeight: 504), frameInterval: 1.0 / 60)
        #expect(frames.last?.isFinished == true)
        #expect(frames.allSatisfy { $0.segmentBegins == nil && $0.offset == 0 })
    }

    @Test("JSON: each kind round-trips, defaults fill gaps, values out of range name their field")
    func codable() throws {
        let scripts: [ScrollScript] = [.steady(SteadyScroll(pointsPerFrame: 3, passes: 2)), .accelerating(.thesis), .fling(FlingScroll(velocity: -1_200, decelerationRate: 0.99))]
        for script in scripts {
            let data = try JSONEncoder().encode(script)
            #expect(try JSONDecoder().decode(ScrollScript.self, from: data) == script)
        }
        let thesis = try JSONDecoder().decode(ScrollScript.self, from: Data(#"{"script": "accelerating"}"#.utf8))
        #expect(thesis == .accelerating(.thesis))
        let cases: [(String, String)] = [
            (#"{"script": "steady", "pointsPerFrame": -4}"#, "pointsPerFrame"),
            (#"{"script": "steady", "passes": 0}"#, "passes"),
            (#"{"script": "accelerating", "interval": 0}"#, "interval"),
            (#"{"script": "fling"}"#, "velocity"),
            (#"{"script": "fling", "velocity": 100, "decelerationRate": 1.5}"#, "decelerationRate"),
            (#"{"script": "spin"}"#, "script"),
        ]
        for (json, field) in cases {
            do {
                _ = try JSONDecoder().decode(ScrollScript.self, from: Data(json.utf8))
                Issue.record("\(json) was accepted")
            } catch let error as DecodingError {
                #expect(error.fieldPath == field, "\(json): \(error.fieldPath)")
            }
        }
    }

    @Test("out-of-range values from code are clamped, never a trap or an endless script")
    func clamped() {
        let wild: [ScrollScript] = [
            .steady(SteadyScroll(pointsPerFrame: .nan, passes: Int.max)),
            .accelerating(AcceleratingScroll(interval: -1, firstStep: .infinity, stepGrowth: .nan, passes: -3, animationDuration: .nan)),
            .fling(FlingScroll(velocity: .infinity, decelerationRate: 7, stopVelocity: -1)),
        ]
        for script in wild {
            #expect(script.problem != nil)
            let frames = ScrollPlayer.plan(script, geometry: geometry, frameInterval: 1.0 / 60, maximumDuration: 60)
            #expect(!frames.isEmpty)
            #expect(frames.allSatisfy { $0.offset.isFinite && $0.offset >= 0 && $0.offset <= 1496 })
        }
    }
}
