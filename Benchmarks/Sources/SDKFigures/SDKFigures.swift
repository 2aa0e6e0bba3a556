import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FramescopeCore
import FramescopeSDK
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Prints two figures of the SDK that a per-iteration benchmark cannot give:
/// 1. the hang watchdog's CPU use while the main queue is healthy, in % of one core:
///    process CPU time (getrusage) over a span with the watchdog running, less the same
///    span without it, so process start-up and the idle runtime are not counted;
/// 2. the SDK's resident memory after 20 screen visits (`/proc/self/statm`), less the
///    figure before the SDK was created (after the system's networking code was loaded);
/// 3. the cost of `Framescope.tick` with the whole SDK running beside the engine's alone
///    (`FrameAnalyzer.recordTick` inside a segment) on the same ticks, in alternating runs
///    of a million ticks, so that both meet the same machine: on the shared VM the speed of
///    a core changes by a factor of two from one second to the next.
@main
struct SDKFigures {
    static func cpuSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// CPU seconds the process uses in `seconds` of wall time while the main actor sleeps.
    @MainActor
    static func cpuOver(seconds: Double) async -> Double {
        let before = cpuSeconds()
        try? await Task.sleep(for: .seconds(seconds))
        return cpuSeconds() - before
    }

    @MainActor
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        let span = Double(arguments.first ?? "") ?? 20
        let checkInterval = Double(arguments.dropFirst().first ?? "") ?? HangWatchdog.Configuration().checkInterval
        print("Framescope SDK figures (\(ProcessInfo.processInfo.activeProcessorCount) cores)")

        // 1. Watchdog CPU while healthy.
        _ = await cpuOver(seconds: 1)   // let start-up settle
        let idle = await cpuOver(seconds: span)
        let watchdog = HangWatchdog(watching: .main, configuration: HangWatchdog.Configuration(checkInterval: checkInterval)) { _ in }
        watchdog.start()
        let watched = await cpuOver(seconds: span)
        watchdog.stop()
        let checks = watchdog.statistics.checks
        let share = (watched - idle) / span * 100
        print(String(format: "watchdog (%.0f ms checks, healthy main queue): %.4f %% of a core "
                     + "(%.4f s CPU in %.0f s with it, %.4f s without; %d checks)",
                     checkInterval * 1000, share, watched, span, idle, checks))

        // 2. Memory with 20 screens visited. The system's networking and JSON code is
        // loaded first (an app has it already; on Linux FoundationNetworking and libcurl
        // alone are megabytes of pages), so the figure is the SDK's own.
        var warmRequest = URLRequest(url: URL(string: "http://127.0.0.1:9/")!)
        warmRequest.httpMethod = "POST"
        _ = try? await URLSession(configuration: .ephemeral).upload(for: warmRequest, from: Data([1]))
        _ = try JSONEncoder().encode(["warm": 1])
        try? await Task.sleep(for: .milliseconds(200))
        let residentBefore = residentBytes()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-figures-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let framescope = try makeFramescope(folder: folder, maxRefreshRate: 120,
                                            tracker: ScreenTracker.Configuration(minimumVisitDuration: 0), batchEvents: 100)
        var stored = 0
        framescope.onVisit = { _ in stored += 1 }
        framescope.start()
        let interval = 1.0 / 120
        var t = MonotonicClock.system.nowInSeconds()
        for screen in 0..<21 {
            framescope.screen("Screen \(screen)")
            framescope.setTag("variant-\(screen % 3)", for: "experiment")
            for index in 0..<(120 * 30) {   // 30 s at 120 Hz, a scroll in the middle
                if index == 1200 { framescope.beginMotion() }
                if index == 2400 { framescope.endMotion() }
                t += index % 53 == 52 ? 3 * interval : interval
                framescope.tick(timestamp: t, targetTimestamp: t + interval)
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        while stored < 20 { try? await Task.sleep(for: .milliseconds(20)) }
        let resident = residentBytes() - residentBefore
        print("memory after 20 screen visits (30 s each at 120 Hz, queued, collector down): "
              + "resident +\(resident / 1024) KiB")
        await framescope.stop()

        // 3. Tick cost, SDK against the engine alone, interleaved.
        try await tickCosts(rounds: 20)
    }

    /// An SDK whose collector is down (port 9), queueing in `folder`.
    /// - Parameters:
    ///   - maxRefreshRate: The device's maximum refresh rate, in Hz.
    ///   - batchEvents: Visits per queued batch.
    @MainActor
    static func makeFramescope(folder: URL, maxRefreshRate: Int, tracker: ScreenTracker.Configuration = ScreenTracker.Configuration(),
                               batchEvents: Int = DeliveryConfiguration().maximumBatchEvents) throws -> Framescope {
        try Framescope(configuration: Framescope.Configuration(
            collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_figures",
            app: AppInfo(id: "figures", version: "1.0.0", build: "1"),
            device: DeviceInfo(model: "Figures", osName: "Linux", osVersion: "6", maxRefreshRate: maxRefreshRate),
            tracker: tracker,
            delivery: DeliveryConfiguration(directory: folder, maximumBatchEvents: batchEvents)))
    }

    /// Nanoseconds per tick of `Framescope.tick` (the whole SDK running, in motion, 60 Hz
    /// with a drop every 97 frames) and of the engine alone on the same ticks, in `rounds`
    /// alternating runs of a million ticks each. Prints each pair's medians and minimums.
    @MainActor
    static func tickCosts(rounds: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-figures-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let framescope = try makeFramescope(folder: folder, maxRefreshRate: 60)
        framescope.start()
        framescope.screen("Feed")
        framescope.beginMotion()
        var analyzer = FrameAnalyzer(keepsSegmentReports: false)
        analyzer.beginSegment("motion")
        let interval = 1.0 / 60
        let ticks = 1_000_000
        var sdkTimes: [Double] = []
        var engineTimes: [Double] = []
        var sdkTime = MonotonicClock.system.nowInSeconds()
        var engineTime = sdkTime
        for _ in 0..<rounds {
            var start = MonotonicClock.system.now()
            for index in 0..<ticks {
                sdkTime += index % 97 == 96 ? 2 * interval : interval
                framescope.tick(timestamp: sdkTime, targetTimestamp: sdkTime + interval)
            }
            sdkTimes.append(Double(MonotonicClock.system.now() - start) / Double(ticks))
            start = MonotonicClock.system.now()
            for index in 0..<ticks {
                engineTime += index % 97 == 96 ? 2 * interval : interval
                analyzer.recordTick(timestamp: engineTime, targetTimestamp: engineTime + interval, refreshInterval: nil)
            }
            engineTimes.append(Double(MonotonicClock.system.now() - start) / Double(ticks))
            // Let the watchdog's ping and the pipeline run between rounds, as between frames.
            try? await Task.sleep(for: .milliseconds(10))
        }
        let differences = zip(sdkTimes, engineTimes).map { $0 - $1 }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(String(format: "tick, %d × %d ticks alternating: Framescope.tick median %.1f ns (min %.1f, max %.1f); "
                     + "engine alone median %.1f ns (min %.1f, max %.1f); SDK minus engine median %.1f ns",
                     rounds, ticks, median(sdkTimes), sdkTimes.min() ?? 0, sdkTimes.max() ?? 0,
                     median(engineTimes), engineTimes.min() ?? 0, engineTimes.max() ?? 0, median(differences)))
        _ = analyzer.report()
        await framescope.stop()
    }
}
