import Dispatch
import Foundation
import Testing
@testable import FramescopeSDK

extension RealThreadTests {
    /// Real serial queues blocked with `Thread.sleep`, watched by a real watchdog. The
    /// check interval is short (10 ms) so that durations are exact to a few ms; the
    /// tolerances (±50 ms) allow for a loaded two-core machine.
    ///
    /// Only what needs real threads is here: that a real block is measured, that `pause`
    /// reaches the detector, that `stop` ends a hang, and on which thread the handler runs.
    /// The decisions (hangs in a row, a block while paused, the watchdog's own sleep
    /// overshooting, a hang cut by it) are `HangDetector`'s, tested at given nanoseconds
    /// in `HangDetectorTests`; a real suspension is the probe's `SIGSTOP` test
    /// (Server/Tests/FramescopeSDKIntegrationTests/WatchdogProbeTests.swift).
    @Suite("Hang watchdog on a real queue")
    struct HangWatchdogTests {
        static let configuration = HangWatchdog.Configuration(threshold: 0.25, checkInterval: 0.01, suspensionTolerance: 0.2)

        let queue = DispatchQueue(label: "test.watched")
        let log = HangEventLog()

        func makeWatchdog(clock: MonotonicClock = .system) -> HangWatchdog {
            HangWatchdog(watching: queue, configuration: Self.configuration, clock: clock) { [log] in log.append($0) }
        }

        // Real threads are the subject: a real 100 ms block, with the real wakeup latency of
        // the ping and of the watchdog's thread, stays under the threshold (the decision
        // alone is HangDetectorTests' "A healthy queue").
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

        // Real threads are the subject: the ping on a real queue measures a real block, its
        // start and duration within the tolerance (the dating rule alone is HangDetectorTests').
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

        // Real threads are the subject: `pause()` from another thread reaches the detector on
        // the watchdog's thread while the queue is blocked (the decision alone is
        // HangDetectorTests' "(d) A hang under way at pause ends at the pause, flagged").
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

        // Real threads are the subject: which thread the handler runs on, and a stop called
        // from inside it.
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
