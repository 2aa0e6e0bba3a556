import Dispatch
import Foundation
import Testing
@testable import FramescopeSDK

extension RealThreadTests {
    /// The busy spans the watchdog publishes for the screen tracker's main-thread hint: spans
    /// measured from real blocks and real wakeups, so in the isolated process.
    @Suite("Hang watchdog: busy spans on a real queue")
    struct BusySpanTests {
        static let configuration = HangWatchdog.Configuration(threshold: 0.25, checkInterval: 0.01, suspensionTolerance: 0.2)
        let queue = DispatchQueue(label: "test.busy")

        // Real threads are the subject: the ping publishes the span on a real queue as the
        // block ends (the rule alone is HangWatchdogPolicyTests' busy-span tests).
        @Test("A healthy queue has no busy span; a 100 ms block is one, ending when the block ends")
        func blockMakesSpan() throws {
            let watchdog = HangWatchdog(watching: queue, configuration: Self.configuration) { _ in }
            watchdog.start()
            // Real threads are the subject: 0.2 s of a healthy real queue, about 20 pings, none
            // waiting the busy threshold.
            Thread.sleep(forTimeInterval: 0.2)
            #expect(watchdog.latestBusySpan == nil)
            let blockStart = block(queue, for: 0.1)
            let blockEnd = MonotonicClock.system.now()
            queue.sync {}  // the ping that waited behind the block has run and published its span
            watchdog.stop()
            let span = try #require(watchdog.latestBusySpan)
            let length = elapsed(from: span.start, to: span.end)
            #expect(length >= 0.034 && length <= 0.15, "span of \(length) s for a 0.1 s block")
            #expect(abs(elapsed(from: blockEnd, to: span.end)) <= 0.03, "span ends \(elapsed(from: blockEnd, to: span.end)) s from the block's end")
            #expect(span.overlaps(from: blockStart, to: blockEnd))
        }

        // Real threads are the subject: real 12 ms blocks plus the real wakeup latency of the
        // ping stay under the busy threshold (the rule alone is HangWatchdogPolicyTests'
        // "Blocks of 12 ms between checks are no busy span").
        @Test("A block shorter than the busy threshold makes no span")
        func shortBlockNoSpan() {
            let watchdog = HangWatchdog(watching: queue, configuration: Self.configuration) { _ in }
            watchdog.start()
            for _ in 0..<5 {
                block(queue, for: 0.012)
                queue.sync {}  // a ping posted during the block runs before the next block
            }
            watchdog.stop()
            #expect(watchdog.latestBusySpan == nil)
        }

        // Real threads are the subject: the ping, running on a real queue right after the jump,
        // races the checks and must read the words they published (the rule alone is
        // HangWatchdogPolicyTests' "A stopped process …").
        @Test("A stopped process (the clock jumps 2 s while a ping waits) makes no busy span")
        func suspensionMakesNoSpan() {
            let clock = SteppableClock()
            // Checks 100 ms apart, so the ping usually runs after the jump before a check
            // notices the gap: the ping itself must tell the stop from a busy queue.
            let configuration = HangWatchdog.Configuration(threshold: 0.5, checkInterval: 0.1, suspensionTolerance: 0.2)
            let watchdog = HangWatchdog(watching: queue, configuration: configuration, clock: clock.clock) { _ in }
            watchdog.start()
            for _ in 0..<3 {
                // Real threads are the subject (the ping racing the checks): the ping waits
                // behind a 20 ms block; near its end 2 s pass for the clock.
                let blocker = Blocker(queue, for: 0.02)
                Thread.sleep(forTimeInterval: 0.016)  // real: the jump lands inside the ping's wait
                clock.jump(by: 2)
                blocker.wait()
                // Real: the watchdog's thread, checking every 100 ms, sees the jump before the next round.
                Thread.sleep(forTimeInterval: 0.25)
            }
            watchdog.stop()
            #expect(watchdog.latestBusySpan == nil, "\(String(describing: watchdog.latestBusySpan))")
            #expect(watchdog.statistics.suspensions >= 1)
        }
    }
}
