import Dispatch
import Foundation
import Testing
@testable import FramescopeSDK

extension RealThreadTests {
    /// Real serial queues blocked with `Thread.sleep`, watched by a real watchdog. The
    /// check interval is short (10 ms) so that durations are exact to a few ms; the
    /// tolerances (±50 ms) allow for a loaded two-core machine.
    @Suite("Hang watchdog on a real queue")
    struct HangWatchdogTests {
        static let configuration = HangWatchdog.Configuration(threshold: 0.25, checkInterval: 0.01, suspensionTolerance: 0.2)

        let queue = DispatchQueue(label: "test.watched")
        let log = HangEventLog()

        func makeWatchdog(clock: MonotonicClock = .system) -> HangWatchdog {
            HangWatchdog(watching: queue, configuration: Self.configuration, clock: clock) { [log] in log.append($0) }
        }

        @Test("A 100 ms block is no hang")
        func shortBlock() {
            let watchdog = makeWatchdog()
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            block(queue, for: 0.1)
            Thread.sleep(forTimeInterval: 0.1)
            watchdog.stop()
            #expect(log.all.isEmpty)
            #expect(watchdog.statistics.hangs == 0)
            #expect(watchdog.statistics.checks > 10)  // it was checking all along
        }

        @Test("A 400 ms block is one hang of 400 ± 50 ms, begun after the threshold, dated from the block's start")
        func longBlock() throws {
            let watchdog = makeWatchdog()
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            let blockStart = block(queue, for: 0.4)
            Thread.sleep(forTimeInterval: 0.1)
            watchdog.stop()

            let events = log.all
            try #require(events.count == 2, "\(events)")
            guard case let .began(begun) = events[0], case let .ended(hang, ending) = events[1] else {
                Issue.record("expected began then ended: \(events)")
                return
            }
            #expect(ending == .recovered)
            #expect(begun.start == hang.start)
            #expect(begun.duration >= 0.25 && begun.duration <= hang.duration, "reported begun after \(begun.duration) s")
            #expect(abs(hang.duration - 0.4) <= 0.05, "duration \(hang.duration) s")
            #expect(abs(elapsed(from: blockStart, to: hang.start)) <= 0.05, "start off by \(elapsed(from: blockStart, to: hang.start)) s")
        }

        @Test("Three 300 ms blocks 100 ms apart are three hangs of about 300 ms")
        func threeBlocks() {
            let watchdog = makeWatchdog()
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            for _ in 0..<3 {
                block(queue, for: 0.3)
                Thread.sleep(forTimeInterval: 0.1)
            }
            watchdog.stop()

            #expect(log.began.count == 3, "\(log.all)")
            let ended = log.ended
            #expect(ended.count == 3, "\(log.all)")
            for (hang, ending) in ended {
                #expect(ending == .recovered)
                #expect(abs(hang.duration - 0.3) <= 0.05, "duration \(hang.duration) s")
            }
            #expect(watchdog.statistics.hangs == 3)
        }

        @Test("Stopping during a hang reports it as ended by the stop, with its duration so far")
        func stopDuringHang() {
            let watchdog = makeWatchdog()
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            let blocker = Blocker(queue, for: 0.7)
            Thread.sleep(forTimeInterval: 0.4)
            let stopTime = systemMonotonicNanoseconds()
            watchdog.stop()
            blocker.wait()
            Thread.sleep(forTimeInterval: 0.05)

            #expect(log.began.count == 1, "\(log.all)")
            let ended = log.ended
            #expect(ended.count == 1, "\(log.all)")
            if let (hang, ending) = ended.first {
                #expect(ending == .stopped)
                #expect(ending.isInterrupted)
                // From the block's start to the stop (about 0.4 s).
                let expected = elapsed(from: blocker.started, to: stopTime)
                #expect(abs(hang.duration - expected) <= 0.05, "duration \(hang.duration) s, expected \(expected) s")
            }
        }

        @Test("Pausing during a hang ends it at the pause; the paused time is no hang")
        func pauseDuringHang() {
            let watchdog = makeWatchdog()
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            let blocker = Blocker(queue, for: 0.8)
            Thread.sleep(forTimeInterval: 0.4)
            let pauseTime = systemMonotonicNanoseconds()
            watchdog.pause()
            blocker.wait()  // the block goes on for another 0.4 s while paused
            Thread.sleep(forTimeInterval: 0.05)
            watchdog.resume()
            Thread.sleep(forTimeInterval: 0.3)
            watchdog.stop()

            #expect(log.began.count == 1, "\(log.all)")
            let ended = log.ended
            #expect(ended.count == 1, "\(log.all)")
            if let (hang, ending) = ended.first {
                #expect(ending == .paused)
                // From the block's start to the pause (about 0.4 s), not to the block's end.
                let expected = elapsed(from: blocker.started, to: pauseTime)
                #expect(abs(hang.duration - expected) <= 0.05, "duration \(hang.duration) s, expected \(expected) s")
            }
        }

        @Test("A block while paused is no hang, and the first interval after resume starts fresh")
        func resumeStartsFresh() {
            let watchdog = makeWatchdog()
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            // A 0.5 s block, paused from 0.1 s to 0.3 s into it, with a ping waiting
            // behind it all along. Counted from before the pause, the ping waits 0.5 s;
            // counted from the resume, 0.2 s: no hang.
            let blocker = Blocker(queue, for: 0.5)
            Thread.sleep(forTimeInterval: 0.1)
            watchdog.pause()
            Thread.sleep(forTimeInterval: 0.2)
            watchdog.resume()
            blocker.wait()
            Thread.sleep(forTimeInterval: 0.1)
            watchdog.stop()
            #expect(log.all.isEmpty, "\(log.all)")
            #expect(watchdog.statistics.checks > 10)
        }

        @Test("The watchdog's own sleep overshooting by 2 s (a stop) is not a hang: the measurement restarts")
        func overshootIsNoHang() {
            let steppable = SteppableClock()
            let watchdog = makeWatchdog(clock: steppable.clock)
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            // A ping is waiting behind this block when the clock jumps, as it would be
            // when the process is stopped mid-block and continued 2 s later.
            let blocker = Blocker(queue, for: 0.15)
            Thread.sleep(forTimeInterval: 0.05)
            steppable.jump(by: 2)
            blocker.wait()
            Thread.sleep(forTimeInterval: 0.1)
            watchdog.stop()
            #expect(log.all.isEmpty, "\(log.all)")
            #expect(watchdog.statistics.suspensions == 1)
        }

        @Test("A hang under way when the watchdog overshoots ends at the last check before the gap, flagged")
        func hangCutBySuspension() {
            let steppable = SteppableClock()
            let watchdog = makeWatchdog(clock: steppable.clock)
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            let blocker = Blocker(queue, for: 0.6)
            Thread.sleep(forTimeInterval: 0.4)
            let jumpTime = systemMonotonicNanoseconds()
            steppable.jump(by: 2)
            blocker.wait()  // about 0.2 s more after the restart: under the threshold
            Thread.sleep(forTimeInterval: 0.1)
            watchdog.stop()

            #expect(log.began.count == 1, "\(log.all)")
            let ended = log.ended
            #expect(ended.count == 1, "\(log.all)")
            if let (hang, ending) = ended.first {
                #expect(ending == .suspended)
                // From the block's start to the last check before the jump (about 0.4 s).
                let expected = elapsed(from: blocker.started, to: jumpTime)
                #expect(abs(hang.duration - expected) <= 0.05, "duration \(hang.duration) s, expected \(expected) s")
            }
            #expect(watchdog.statistics.suspensions == 1)
        }

        @Test("The handler runs off the watched queue and may stop the watchdog")
        func handlerThread() {
            let onWatchedQueue = Locked<[Bool]>([])
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let box = Locked<HangWatchdog?>(nil)
            let watchdog = HangWatchdog(watching: queue, configuration: Self.configuration) { [log] event in
                onWatchedQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == true) }
                log.append(event)
                if case .began = event { box.withLock { $0 }?.stop() }
            }
            box.withLock { $0 = watchdog }
            watchdog.start()
            Thread.sleep(forTimeInterval: 0.05)
            block(queue, for: 0.35)
            Thread.sleep(forTimeInterval: 0.05)
            box.withLock { $0 = nil }
            watchdog.stop()

            #expect(onWatchedQueue.withLock { $0 } == [false, false])
            #expect(log.began.count == 1)
            #expect(log.ended.map(\.ending) == [.stopped])
        }
    }
}
