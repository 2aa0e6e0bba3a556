import FramescopeCore
import Foundation
@testable import FramescopeSDK
import Testing

/// The facade's parts (``SDKPart``): which run, started in order, flushed together and
/// stopped in reverse; the configuration's nested settings and the flat names they replace;
/// the one builder of a visit's context.
@Suite("Framescope's parts and configuration")
@MainActor
struct FramescopePartsTests {
    /// A part that writes what is done to it in a shared log.
    final class Recorder: SDKPart {
        let name: String
        let log: Log
        let delivered: Bool

        final class Log {
            var lines: [String] = []
        }

        init(_ name: String, log: Log, delivered: Bool = true) {
            self.name = name
            self.log = log
            self.delivered = delivered
        }

        func start() { log.lines.append("start \(name)") }

        func flush(timeout: Double) async -> Bool {
            log.lines.append("flush \(name)")
            return delivered
        }

        func stop() async {
            log.lines.append("stop \(name)")
            await Task.yield()
            log.lines.append("stopped \(name)")
        }
    }

    /// A part with neither flush nor counters of its own.
    final class Plain: SDKPart {
        func start() {}
        func stop() async {}
    }

    static func configuration(_ folder: URL, sampleRate: Double = 1, watchdog: Bool = false, metricKit: Bool = true) -> Framescope.Configuration {
        Framescope.Configuration(collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_parts",
                                 device: DeviceInfo(model: "m", osName: "o", osVersion: "1", maxRefreshRate: 60,
                                                    installationId: "parts"),
                                 // No stack sampling: the tests never start the watchdog, and making a
                                 // sampler on the main thread would set up the signal sampler.
                                 sampleRate: sampleRate, watchdog: WatchdogConfiguration(isEnabled: watchdog, stacks: .init(interval: nil)),
                                 metricKit: MetricKitConfiguration(forwardsPayloads: metricKit), resourceSampleInterval: nil,
                                 delivery: DeliveryConfiguration(directory: folder))
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("framescope-parts-\(UUID().uuidString)")
    }

    static func kinds(_ framescope: Framescope) -> [String] {
        framescope.parts.map { part in
            switch part {
            case is MetricKitForwarding: "metricKit"
            case is HangWatchdog: "watchdog"
            case is VisitDelivery: "visits"
            default: "other"
            }
        }
    }

    @Test("The parts in start order: MetricKit, the watchdog where the installation is sampled, the visits")
    func order() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(Self.kinds(try Framescope(configuration: Self.configuration(folder, watchdog: true))) == ["metricKit", "watchdog", "visits"])
        // Not sampled: the watchdog exists (the tracker reads its busy spans) but never runs.
        let unsampled = try Framescope(configuration: Self.configuration(folder, sampleRate: 0, watchdog: true))
        #expect(unsampled.watchdog != nil && Self.kinds(unsampled) == ["metricKit", "visits"])
        #expect(Self.kinds(try Framescope(configuration: Self.configuration(folder, metricKit: false))) == ["visits"])
    }

    @Test("Parts start in order (a part added to a running SDK at once), flush together, stop in reverse one at a time")
    func lifecycle() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let framescope = try Framescope(configuration: Self.configuration(folder))
        let log = Recorder.Log()
        framescope.add(Recorder("a", log: log))
        framescope.add(Recorder("b", log: log))
        #expect(log.lines.isEmpty)   // nothing starts before the SDK does
        framescope.start()
        framescope.start()
        #expect(log.lines == ["start a", "start b"])
        framescope.add(Recorder("c", log: log, delivered: false))
        #expect(log.lines == ["start a", "start b", "start c"])
        #expect(Self.kinds(framescope) == ["metricKit", "visits", "other", "other", "other"])

        log.lines = []
        // One part still holding something makes the flush false; the others are flushed all the same.
        #expect(await framescope.flush(timeout: 1) == false)
        #expect(log.lines.sorted() == ["flush a", "flush b", "flush c"])

        log.lines = []
        await framescope.stop()
        #expect(log.lines == ["stop c", "stopped c", "stop b", "stopped b", "stop a", "stopped a"])
        framescope.add(Recorder("late", log: log))
        #expect(framescope.parts.count == 5 && !log.lines.contains("start late"))
        #expect(await framescope.flush(timeout: 1) == false)   // stopped: nothing is flushed
        #expect(log.lines.count == 6)
    }

    @Test("A part with nothing to deliver flushes true at once and adds no counters")
    func defaults() async throws {
        let plain = Plain()
        #expect(await plain.flush(timeout: 0))
        var statistics = Framescope.Statistics(isSampled: true, tracker: ScreenTracker.Statistics(), shortVisitsKept: 3, hangs: 2,
                                               delivery: DeliveryStatistics())
        let before = statistics
        await plain.addStatistics(to: &statistics)
        #expect(statistics == before)
    }

    @Test("Statistics come from the parts: the visits' delivery and MetricKit's payloads, before the SDK starts too")
    func statistics() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let framescope = try Framescope(configuration: Self.configuration(folder))
        try framescope.forwardMetricKitPayload(Data(#"{"timeStampEnd":"x"}"#.utf8))
        let statistics = await framescope.statistics()
        #expect(statistics.isSampled && statistics.metricKit.payloadsQueued == 1 && statistics.hangs == 0)
        #expect(statistics.delivery.eventsQueued == 0 && statistics.delivery.batchesSealed == 0)
    }

    @Test("Configuration nests the watchdog's and MetricKit's settings, with their defaults; problems name the nested field")
    func nested() {
        var configuration = Framescope.Configuration(collector: URL(string: "https://f.example")!, ingestKey: "fsi_x")
        #expect(configuration.watchdog == WatchdogConfiguration(isEnabled: true, checkInterval: 0.125, busyThreshold: 0.034,
                                                               stacks: .init(interval: 0.1, samples: 20)))
        #expect(configuration.metricKit.forwardsPayloads)
        #expect(configuration.problem == nil)
        configuration.watchdog.checkInterval = 0.3
        #expect(configuration.problem == "watchdog: checkInterval must be a positive number of seconds below the hang threshold (0.25 s)")
        configuration.watchdog.checkInterval = 0.05
        configuration.watchdog.busyThreshold = 0
        #expect(configuration.problem == "watchdog: busyThreshold must be a positive number of seconds")
        configuration.watchdog.busyThreshold = 0.034
        configuration.watchdog.stacks.interval = 0.001
        #expect(configuration.problem == "watchdog: stacks.interval must be at least 0.01 seconds")
        configuration.watchdog.stacks.interval = nil
        configuration.watchdog.stacks.samples = 51
        #expect(configuration.problem == "watchdog: stacks.samples must be 1–50")
        #expect(configuration.watchdog.hangWatchdog(threshold: 0.25)
            == HangWatchdog.Configuration(threshold: 0.25, checkInterval: 0.05, busyThreshold: 0.034))
    }

    @Test("The flat names of the last release still read and write the nested settings")
    func flatNames() {
        let names: any FlatNames = LegacyNames()
        #expect(names.roundTrip() == [
            "true 0.125 0.034 Optional(0.1) 20 true",
            "false 0.05 0.02 nil 7 false",
        ])
    }

    @Test("One builder makes a visit's context from the device's state, for visits and fatal hangs alike")
    func visitContext() {
        let state = DeviceState(network: .cellular, lowPowerMode: true, thermalState: .serious)
        #expect(state.visitContext(tags: ["plan": "pro"])
            == VisitContext(network: .cellular, lowPowerMode: true, thermalState: .serious, tags: ["plan": "pro"]))
        #expect(DeviceState().visitContext(tags: [:]) == VisitContext(network: .unknown, lowPowerMode: false))
    }
}

/// Writes and reads the flat names back (called through the protocol, so that only the
/// deprecated witness uses them and the build stays free of warnings).
protocol FlatNames {
    /// Each flat name's value, as a line, before and after setting them all.
    func roundTrip() -> [String]
}

/// The deprecated flat names, used on purpose.
struct LegacyNames: FlatNames {
    @available(*, deprecated, message: "uses the flat names on purpose")
    func roundTrip() -> [String] {
        func line(_ c: Framescope.Configuration) -> String {
            "\(c.watchdogEnabled) \(c.watchdogCheckInterval) \(c.busyThreshold) \(String(describing: c.hangStackInterval)) \(c.hangStackSamples) \(c.forwardsMetricKit)"
        }
        var configuration = Framescope.Configuration(collector: URL(string: "https://f.example")!, ingestKey: "fsi_x",
                                                     watchdogCheckInterval: 0.125)
        let first = line(configuration)
        configuration.watchdogEnabled = false
        configuration.watchdogCheckInterval = 0.05
        configuration.busyThreshold = 0.02
        configuration.hangStackInterval = nil
        configuration.hangStackSamples = 7
        configuration.forwardsMetricKit = false
        let nested = configuration.watchdog == WatchdogConfiguration(isEnabled: false, checkInterval: 0.05, busyThreshold: 0.02,
                                                                     stacks: .init(interval: nil, samples: 7))
            && !configuration.metricKit.forwardsPayloads
        return nested ? [first, line(configuration)] : [first, "not forwarded to the nested settings"]
    }
}
