import ArgumentParser
import FramescopeCore
import FramescopeSimulation
import FramescopeSDK
import Foundation

/// Uses the SDK's public API as an app would, on Linux: the main actor is the app's main
/// thread, and the ticks come from the frame-pipeline simulator, played in real time.
/// Frames that the simulator made late with main-thread work block the main thread for
/// real, so the hang watchdog sees them; the other waits yield the main thread.
///
/// It visits `--screens` screens for `--seconds` seconds in all, prints one line per visit
/// once the visit is safe in the disk queue, flushes, and exits 0 only when the collector
/// accepted every visit; otherwise (a flush that timed out, a wrong configuration, a batch
/// or visit refused, a visit lost) it says what on standard error and exits 1. Delivery
/// problems are also logged to standard error as they happen.
@main
struct FramescopeExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "FramescopeExample",
        abstract: "Measures simulated screen visits with the Framescope SDK and delivers them to a collector.")

    @Option(help: "The collector's base URL, e.g. http://127.0.0.1:8080.")
    var collector: String

    @Option(help: "The app's ingest key (fsi_…).")
    var ingestKey: String

    @Option(help: "The collector's app id the key belongs to.")
    var app = "demo"

    @Option(help: "How many screen visits to make (0: only deliver what an earlier run queued).")
    var screens = 6

    @Option(help: "Seconds of measuring in all, shared evenly by the visits.")
    var seconds = 12.0

    @Option(help: "The disk queue's folder (default: a new temporary folder).")
    var queue: String?

    @Option(help: "Visits per batch.")
    var batchEvents = 5

    @Option(help: "Seconds to wait for every visit to be acknowledged.")
    var timeout = 60.0

    @Option(help: "Seeds the simulated frames.")
    var seed: UInt64 = 1

    func validate() throws {
        guard let url = URL(string: collector), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--collector must be an http or https URL, e.g. http://127.0.0.1:8080")
        }
        guard screens >= 0 else { throw ValidationError("--screens must not be negative") }
        guard seconds.isFinite, seconds > 0 else { throw ValidationError("--seconds must be a positive number") }
        guard screens == 0 || seconds / Double(screens) >= 1 else {
            throw ValidationError("--seconds must allow at least 1 s per screen (visits shorter than 1 s are dropped)")
        }
        guard timeout.isFinite, timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    @MainActor
    func run() async throws {
        let directory = queue.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("framescope-example-\(UUID().uuidString)")
        let configuration = Framescope.Configuration(
            collector: URL(string: collector)!,  // checked in validate()
            ingestKey: ingestKey,
            app: AppInfo(id: app, version: "1.0.0", build: "1"),
            device: DeviceInfo(model: "LinuxExample", osName: "Linux",
                               osVersion: ProcessInfo.processInfo.operatingSystemVersion.shortDescription,
                               maxRefreshRate: 60, installationId: "example-\(seed)"),
            resourceSampleInterval: 0.5,
            delivery: DeliveryConfiguration(directory: directory, maximumBatchEvents: batchEvents, maximumBatchAge: 2,
                                            initialRetryDelay: 0.2, maximumRetryDelay: 2),
            log: { line in FileHandle.standardError.write(Data("framescope: \(line)\n".utf8)) })
        let framescope: Framescope
        do {
            framescope = try Framescope(configuration: configuration)
        } catch {
            throw ValidationError(error.description)
        }
        var stored = 0
        framescope.onVisit = { event in
            stored += 1
            let hitchRatio = event.report.hitchRatio.map { String(format: "%.1f ms/s", $0) } ?? "–"
            // Written unbuffered, so a test that kills this process has read every line.
            let line = "stored visit \(stored): \(event.screen), \(event.report.frames) frames, hitch ratio \(hitchRatio), "
                + "\(event.hangs.count) hangs, \(event.mainThreadHitches?.frames ?? 0) busy-main-thread hitches\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        framescope.start()

        let names = ["Feed", "Search", "Chat", "Profile", "Settings", "Checkout"]
        let perScreen = screens > 0 ? seconds / Double(screens) : 0
        for index in 0..<screens {
            let name = names[index % names.count]
            framescope.screen(name)
            await play(visit: index, seconds: perScreen, into: framescope)
        }
        // Closes the last visit, then delivers everything queued (this run's and earlier ones').
        let delivered = await framescope.flush(timeout: timeout)
        let statistics = await framescope.statistics()
        await framescope.stop()
        let delivery = statistics.delivery
        let problems = Self.problems(delivery, emptied: delivered, timeout: timeout)
        print("delivered: \(problems.isEmpty ? "all" : "not all"); visits stored \(stored), accepted by the collector "
              + "\(delivery.eventsAccepted), rejected \(delivery.eventsRejected); batches \(delivery.batchesDelivered) "
              + "(\(delivery.batchesDuplicate) duplicate), retries \(delivery.retries), hangs \(statistics.hangs)")
        if !problems.isEmpty {
            var message = "FramescopeExample: not every visit was accepted by the collector:\n"
            for problem in problems { message += "  - \(problem)\n" }
            if delivery.pendingBatches > 0 { message += "  what was not sent stays queued in \(directory.path)\n" }
            FileHandle.standardError.write(Data(message.utf8))
            throw ExitCode(1)
        }
    }

    /// Why not every visit was accepted, one line each; empty when all were.
    /// - Parameter emptied: Whether the flush emptied the queue.
    static func problems(_ delivery: DeliveryStatistics, emptied: Bool, timeout: Double) -> [String] {
        var problems: [String] = []
        if let error = delivery.configurationError {
            problems.append("the collector says the configuration is wrong: \(error)")
        } else if !emptied {
            problems.append("\(delivery.pendingBatches) batches were not delivered within \(timeout) s "
                            + "(last error: \(delivery.lastError ?? "none"))")
        }
        if delivery.eventsRejected > 0 { problems.append("the collector rejected \(delivery.eventsRejected) visits") }
        if delivery.batchesRejected > 0 {
            problems.append("the collector refused \(delivery.batchesRejected) batches (\(delivery.eventsInRejectedBatches) visits): "
                            + (delivery.lastError ?? ""))
        }
        if delivery.batchesAbandoned > 0 {
            problems.append("\(delivery.batchesAbandoned) batches (\(delivery.eventsAbandoned) visits) were abandoned after "
                            + "failing too often")
        }
        if delivery.batchesDropped > 0 {
            problems.append("\(delivery.batchesDropped) batches (\(delivery.eventsDropped) visits) were dropped from the full queue")
        }
        if delivery.eventsLost > 0 {
            problems.append("\(delivery.eventsLost) visits could not be written to the disk queue: \(delivery.lastError ?? "")")
        }
        return problems
    }

    /// Plays one visit's simulated ticks in real time on the main actor.
    @MainActor
    private func play(visit index: Int, seconds: Double, into framescope: Framescope) async {
        // Every third visit is a heavy screen with an occasional main-thread stall.
        var workload = SyntheticWorkload(profile: index % 3 == 1 ? .heavy : .moderate, duration: seconds,
                                         idleLength: 0.6, scrollLength: 1.2,
                                         stallInterval: index % 3 == 1 ? seconds / 2 : nil, stallLength: 0.35,
                                         seed: seed &+ UInt64(index))
        let recording = PipelineSimulator(display: .fixed(hz: 60), seed: seed &+ UInt64(index)).run(&workload)
        guard let first = recording.ticks.first else { return }
        let base = MonotonicClock.system.nowInSeconds() - first.timestamp
        var previous = first.timestamp
        var inMotion = false
        for tick in recording.ticks {
            let due = base + tick.timestamp
            let waited = tick.timestamp - previous
            previous = tick.timestamp
            let remaining = due - MonotonicClock.system.nowInSeconds()
            if remaining > 0 {
                if waited > 2.5 / 60 {
                    // The simulated app's main thread was busy: block it for real.
                    usleep(UInt32(min(remaining, 10) * 1e6))
                } else {
                    try? await Task.sleep(for: .seconds(remaining))
                }
            }
            switch (tick.segment != nil, inMotion) {
            case (true, false): framescope.beginMotion(); inMotion = true
            case (false, true): framescope.endMotion(); inMotion = false
            default: break
            }
            framescope.tick(timestamp: due, targetTimestamp: base + tick.targetTimestamp)
        }
        if inMotion { framescope.endMotion() }
    }
}



extension OperatingSystemVersion {
    /// `major.minor.patch`.
    var shortDescription: String { "\(majorVersion).\(minorVersion).\(patchVersion)" }
}
