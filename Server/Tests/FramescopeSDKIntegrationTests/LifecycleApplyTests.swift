import Foundation
import FramescopeCore
@testable import FramescopeSDK
import Testing

extension RealThreadTests {
    @Suite("Framescope.apply: lifecycle decisions on the real SDK")
    struct LifecycleApplyTests {
        @Test("Time before activation, behind an alert and in the background is neither a drop nor a hang")
        @MainActor
        func awayTimeCountsNowhere() async throws {
            let folder = try TestFolder()
            var delivery = quickDelivery(batchEvents: 10)
            delivery.directory = folder.url
            let configuration = Framescope.Configuration(
                collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_x", app: testApp, device: testDevice,
                tracker: ScreenTracker.Configuration(minimumVisitDuration: 0.3, minimumVisitFrames: 5),
                watchdog: WatchdogConfiguration(checkInterval: 0.05), delivery: delivery)
            let framescope = try Framescope(configuration: configuration)
            var seen: [ScreenVisitEvent] = []
            framescope.onVisit = { seen.append($0) }
            framescope.start()
            var lifecycle = AppLifecycle(launch: AppLifecycle.Launch(environment: ["ActivePrewarm": "1"], bundlePath: "/x/Shop.app",
                                                                     isDebuggerAttached: false))
            framescope.apply(lifecycle.start())
            framescope.screen("Feed")
            usleep(400_000)                 // pre-warmed: the main thread is busy before the user opens the app
            await playTicks(framescope, seconds: 0.2)
            framescope.apply(lifecycle.handle(.didBecomeActive))
            await playTicks(framescope, seconds: 0.5)
            framescope.apply(lifecycle.handle(.willResignActive))   // a system alert
            usleep(400_000)
            framescope.apply(lifecycle.handle(.didBecomeActive))
            await playTicks(framescope, seconds: 0.5)
            framescope.apply(lifecycle.handle(.willResignActive))
            framescope.apply(lifecycle.handle(.didEnterBackground))
            usleep(600_000)                 // in the background
            framescope.apply(lifecycle.handle(.willEnterForeground))
            framescope.apply(lifecycle.handle(.didBecomeActive))
            await playTicks(framescope, seconds: 0.5)
            framescope.screen("Search")
            await framescope.stop()

            let feed = try #require(seen.first { $0.screen == "Feed" })
            // 1.5 s of frames were shown while active; 1.6 s away and 0.2 s of pre-warm ticks are not counted.
            #expect(feed.duration < 1.9, "visit \(feed.duration) s")
            #expect(feed.report.duration < 1.7, "frames \(feed.report.duration) s")
            #expect(feed.report.hangs == 0 && feed.hangs.isEmpty, "\(feed.hangs)")
            #expect(feed.report.maxDroppedFrames < 20, "the longest interval dropped \(feed.report.maxDroppedFrames) frames")
            #expect((await framescope.statistics()).hangs == 0)
        }

        @Test("A debugger attached: frames measured, hangs not reported")
        @MainActor
        func debuggerSilencesHangs() async throws {
            let folder = try TestFolder()
            var delivery = quickDelivery(batchEvents: 10)
            delivery.directory = folder.url
            let framescope = try Framescope(configuration: Framescope.Configuration(
                collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_x", app: testApp, device: testDevice,
                tracker: ScreenTracker.Configuration(minimumVisitDuration: 0.3, minimumVisitFrames: 5),
                watchdog: WatchdogConfiguration(checkInterval: 0.05), delivery: delivery))
            var seen: [ScreenVisitEvent] = []
            framescope.onVisit = { seen.append($0) }
            framescope.start()
            var lifecycle = AppLifecycle(launch: AppLifecycle.Launch(isDebuggerAttached: true))
            framescope.apply(lifecycle.start())
            framescope.apply(lifecycle.handle(.didBecomeActive))
            framescope.screen("Feed")
            await playTicks(framescope, seconds: 0.3)
            usleep(500_000)                 // stopped at a breakpoint
            await playTicks(framescope, seconds: 0.3)
            framescope.screen("Search")
            await framescope.stop()
            let feed = try #require(seen.first { $0.screen == "Feed" })
            #expect(feed.hangs.isEmpty)
            #expect((await framescope.statistics()).hangs == 0)
            #expect(feed.report.frames > 20)
        }
    }
}
