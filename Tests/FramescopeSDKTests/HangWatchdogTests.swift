import Dispatch
import Foundation
import Testing
@testable import FramescopeSDK

extension RealThreadTests {
    /// Real serial queues blocked with `Thread.sleep` for a given time, watched by a real
    /// watchdog, and the hang's measured duration compared with the block's: real durations,
    /// so in the isolated process. The check interval is short (10 ms) so that durations are
    /// exact to a few ms; the tolerances (±50 ms) allow for a loaded two-core machine.
    ///
    /// Only what needs a real block's length is here: that a real block is measured, and that
    /// a short one is none. The decisions (hangs in a row, a block while paused, the watchdog's
    /// own sleep overshooting, a hang cut by it) are `HangDetector`'s, tested at given
    /// nanoseconds in `HangDetectorTests`; what crosses threads (`pause`, the handler's thread)
    /// is `HangWatchdogThreadTests`', which waits for events; a real suspension is the probe's
    /// `SIGSTOP` test (Server/Tests/FramescopeSDKIntegrationTests/WatchdogProbeTests.swift).
    @Suite("Hang watchdog on a real queue: real durations")
    struct HangWatchdogTests {
        static let configuration = HangWatchdog.Configuration(threshold: 0.25, checkInterval: 0.01, suspensionTolerance: 0.2)

        let queue = DispatchQueue(label: "test.watched")
        let log = HangEventLog()

        func makeWatchdog() -> HangWatchdog {
            HangWatchdog(watching: queue, configuration: Self.configuration) { [log] in log.append($0) }
        }

        // Real threads are the subject: a real 100 ms block, with the real wakeup latency of
        // the ping and of the watchdog's thread, stays under the threshold (the decision
        // alone is HangDetectorTests' "A healthy queue"). `start()` returns with the first
        // ping posted, so the block queues behind it; the stop right after the block reports
        // any hang the block made, begun or not yet seen.
        @Test("A 100 ms block is no hang")
        func shortBlock() {
            let watchdog = makeWatchdog()
            watchdog.start()
            block(queue, for: 0.1)
            queue.sync {}  // the ping that waited behind the block has run
            watchdog.stop()
            #expect(log.all.isEmpty)
            #expect(watchdog.statistics.hangs == 0)
            #expect(watchdog.statistics.checks > 5)  // it was checking all along (about 10 in 0.1 s)
        }

        // Real threads are the subject: the ping on a real queue measures a real block, its
        // start and duration within the tolerance (the dating rule alone is HangDetectorTests').
        @Test("A 400 ms block is one hang of 400 ± 50 ms, begun after the threshold, dated from the block's start")
        func longBlock() throws {
            let watchdog = makeWatchdog()
            watchdog.start()
            let blockStart = block(queue, for: 0.4)
            let ended = log.wait { !$0.ended.isEmpty }  // the next check after the ping ran
            watchdog.stop()
            try #require(ended, "the hang never ended: \(log.all)")

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
    }
}

/// A real watchdog on a real serial queue, for what crosses threads: `pause()` called on one
/// thread reaching the detector on the watchdog's, and the thread the handler runs on. The
/// queue is held by a ``QueueGate`` until the event the test waits for has come, so no
/// assertion depends on how long anything took, and the suite runs in the main run.
///
/// The suspension tolerance is wide (0.45 s): in the main run on two cores the watchdog's own
/// thread may wake late, and a late check taken for a stopped process would end the hang as
/// suspended (that rule is HangDetectorTests').
@Suite("Hang watchdog on a real queue: events across threads")
struct HangWatchdogThreadTests {
    static let configuration = HangWatchdog.Configuration(threshold: 0.5, checkInterval: 0.01, suspensionTolerance: 0.45)

    let queue = DispatchQueue(label: "test.watched.events")
    let log = HangEventLog()

    // Real threads are the subject: `pause()` from the test's thread reaches the detector on
    // the watchdog's thread while the queue is held (the decision alone is HangDetectorTests'
    // "(d) A hang under way at pause ends at the pause, flagged").
    @Test("Pausing during a hang ends it at the pause; the paused time is no hang")
    func pauseDuringHang() throws {
        let watchdog = HangWatchdog(watching: queue, configuration: Self.configuration) { [log] in log.append($0) }
        watchdog.start()
        let gate = QueueGate(queue)
        let began = log.wait { !$0.began.isEmpty }
        let beforePause = systemMonotonicNanoseconds()
        watchdog.pause()
        let afterPause = systemMonotonicNanoseconds()
        gate.release()  // the queue moves while paused: the ping runs, unmeasured
        queue.sync {}
        watchdog.resume()
        watchdog.stop()  // measured afresh from the resume: nothing waited a threshold since
        try #require(began, "the held queue never made a hang: \(log.all)")

        #expect(log.began.count == 1, "\(log.all)")
        let ended = log.ended
        #expect(ended.count == 1, "\(log.all)")
        let (hang, ending) = try #require(ended.first)
        #expect(ending == .paused)
        // It ends at the pause, read on the watchdog's thread while `pause()` waited for it.
        let end = Double(hang.start) + hang.duration * 1e9
        #expect(end >= Double(beforePause) - 1e3 && end <= Double(afterPause) + 1e3,
                "ended \((end - Double(beforePause)) / 1e9) s after the pause was called, which took \(elapsed(from: beforePause, to: afterPause)) s")
        #expect(hang.duration >= Self.configuration.threshold, "duration \(hang.duration) s")
    }

    // Real threads are the subject: which thread the handler runs on, and a stop called
    // from inside it.
    @Test("The handler runs off the watched queue and may stop the watchdog")
    func handlerThread() throws {
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
        let gate = QueueGate(queue)
        let ended = log.wait { !$0.ended.isEmpty }
        gate.release()
        box.withLock { $0 = nil }
        watchdog.stop()
        try #require(ended, "no hang ended: \(log.all)")

        #expect(onWatchedQueue.withLock { $0 } == [false, false])
        #expect(log.began.count == 1)
        #expect(log.ended.map(\.ending) == [.stopped])
    }
}
