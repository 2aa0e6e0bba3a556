import Foundation
import FramescopeCore
import Testing
@testable import FramescopeSDK

extension RealThreadTests {
    /// The visit pipeline's settle wait on a manual clock: no real sleep, the exact wait asserted.
    ///
    /// It runs with the real-thread suites in the isolated process: it needs the cooperative
    /// pool to run the pipeline's task, and in the whole parallel run on two cores the
    /// collector suites' blocking calls starved that pool past its time limit (a minute).
    /// The limit stays: with a real sleep instead of the injected clock the test would wait
    /// forever for a sleeper on the manual clock.
    @Suite("Visit pipeline: the settle wait sleeps on the delivery's clock", .timeLimit(.minutes(1)))
    struct VisitPipelineTests {
        @Test("A visit waits the settle time after its end on the injected clock, and takes a hang reported during the wait")
        func settleWaitOnTheInjectedClock() async throws {
            let folder = try TestFolder()
            let sleeper = ManualClock()
            // The visit ended at 10 s on the tracker's clock, which reads 10 s now: the
            // pipeline must wait the whole settle time, 1 s.
            let visitEnd: UInt64 = 10_000_000_000
            let delivery = try DeliveryQueue(configuration: quickDelivery(), directory: folder.url,
                                             collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_x",
                                             app: testApp, device: testDevice)
            let hangLog = HangLog()
            let (events, eventSink) = AsyncStream.makeStream(of: ScreenVisitEvent.self)
            let pipeline = VisitPipeline(
                delivery: delivery, sampler: nil, hangLog: hangLog, deviceState: { DeviceState() },
                settleNanoseconds: 1_000_000_000, clock: MonotonicClock { visitEnd }, sleeper: sleeper,
                shortVisitsKept: Locked(0), notify: { _ = eventSink.yield($0) })
            let (messages, input) = AsyncStream.makeStream(of: PipelineMessage.self)
            let running = Task { await pipeline.run(messages) }

            let visit = ClosedVisit(screen: "Feed", unixStart: Date().timeIntervalSince1970 - 5, start: 5_000_000_000, end: visitEnd,
                                    duration: 5, report: FrameReport(), motion: nil, tags: [:], mainThreadHitches: nil)
            input.yield(.visitChanged(closed: .finished(visit), started: false))
            // The pipeline sleeps on the manual clock; a hang in the visit's last second is
            // reported by the watchdog meanwhile.
            #expect(await sleeper.sleepers(atLeast: 1))
            hangLog.record(.ended(Hang(start: 9_200_000_000, duration: 0.6), .recovered))
            let step = sleeper.advanceToEarliest()
            #expect(step == 1.0, "waited \(String(describing: step)) s on the clock")

            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.screen == "Feed")
            #expect(event.hangs.count == 1)
            if let hang = event.hangs.first {
                #expect(abs(hang.offset - 4.2) < 1e-9 && abs(hang.duration - 0.6) < 1e-9, "\(hang)")
            }
            input.finish()
            await running.value
        }
    }
}
