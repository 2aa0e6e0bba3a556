import ArgumentParser
import FramescopeSimulation
import FramescopeSDK

/// Uses the SDK's public API as an app would, on Linux: the main actor is the app's main
/// thread, and the ticks come from the frame-pipeline simulator, played in real time.
/// Frames that the simulator made late with main-thread work keep the main thread busy for
/// real in ``renderHeavyFrame(until:)``, so the hang watchdog sees them and samples their
/// stacks; the other waits yield the main thread.
///
/// As `UIApplicationMain` does, the main thread runs its run loop (`RunLoop.main.run()`),
/// which drains the main queue, and so the main actor, on the main thread: what the SDK's
/// stack sampler needs on Linux (an `async` main would park the main thread in
/// `dispatch_main()` and run the main queue on worker threads).
///
/// With `--fatal-hang` it stores its visits, then enters Checkout and freezes the main thread
/// for good in ``freezeMainThread()``, printing `fatal hang under way` once the SDK's record
/// of the hang holds two stack samples: kill it (`kill -9`) and run it again with the same
/// `--queue` and `--screens 0` to deliver the fatal hang.
///
/// It needs only `--collector` and `--ingest-key`: the collector files the visits under the
/// key's app, and the device's facts are read from the machine (`uname`, `/etc/os-release`),
/// as an app's are on iOS; the installation id is kept in the `--queue` folder, so runs on one
/// folder are one installation. `--metrickit FILE` forwards a MetricKit payload file through
/// the SDK's forwarder, as the SDK does on iOS with each payload MetricKit delivers.
///
/// It visits `--screens` screens for `--seconds` seconds in all, prints one line per visit
/// once the visit is safe in the disk queue, flushes, and exits 0 only when the collector
/// accepted every visit; otherwise (a flush that timed out, a wrong configuration, a batch
/// or visit refused, a visit lost) it says what on standard error and exits 1. Delivery
/// problems are also logged to standard error as they happen.
@main
struct FramescopeExample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "FramescopeExample",
        abstract: "Measures simulated screen visits with the Framescope SDK and delivers them to a collector.")

    @Option(help: "The collector's base URL, e.g. http://127.0.0.1:8080.")
    var collector: String

    @Option(help: "The app's ingest key (fsi_…).")
    var ingestKey: String

    @Option(help: "The collector's app id the key belongs to (default: leave it to the collector, which takes the key's app).")
    var app: String?

    @Option(help: "The app's version, as an app's Info.plist gives it.")
    var appVersion = "1.0.0"

    @Option(help: "The share of installations that measure, 0–1 (this installation is in or out by its id).")
    var sampleRate = 1.0

    @Option(help: "A MetricKit payload JSON file to forward to the collector (repeatable).")
    var metrickit: [String] = []

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

    @Flag(help: "After the visits are stored, freeze the main thread on Checkout until killed (a fatal hang).")
    var fatalHang = false

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
        guard sampleRate.isFinite, (0...1).contains(sampleRate) else { throw ValidationError("--sample-rate must be 0–1") }
        for file in metrickit where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("--metrickit \(file): no such readable file")
        }
    }

    /// Runs the example on the main actor while the main thread runs its run loop; exits when
    /// it is done.
    func run() throws {
        let command = self
        Task { @MainActor in
            do {
                try await command.measure()
                Self.exit()
            } catch {
                Self.exit(withError: error)
            }
        }
        RunLoop.main.run()
    }

    @MainActor
    func measure() async throws {
        let directory = queue.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("framescope-example-\(UUID().uuidString)")
        // The device's facts are read (DeviceInfo.current()); the app's version is given, as
        // an app's bundle would give it.
        let configuration = Framescope.Configuration(
            collector: URL(string: collector)!,  // checked in validate()
            ingestKey: ingestKey,
            app: AppInfo.current(id: app, version: appVersion, build: "1"),
            sampleRate: sampleRate,
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
        print("installation \(framescope.device.installationId ?? "none") \(framescope.isSampled ? "sampled" : "not sampled"); "
              + "device \(framescope.device.model), \(framescope.device.osName) \(framescope.device.osVersion)")
        for file in metrickit {
            do {
                try framescope.forwardMetricKitPayload(try Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw ValidationError("--metrickit \(file): \(error)")
            }
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
        if fatalHang {
            try await freeze(framescope, after: screens, directory: directory, stored: { stored })
        }
        // Closes the last visit, then delivers everything queued (this run's and earlier ones').
        let delivered = await framescope.flush(timeout: timeout)
        let statistics = await framescope.statistics()
        await framescope.stop()
        let delivery = statistics.delivery
        let problems = Self.problems(delivery, emptied: delivered, timeout: timeout) + Self.problems(statistics.metricKit)
        let short = statistics.tracker.visitsDropped - statistics.shortVisitsKept
        print("delivered: \(problems.isEmpty ? "all" : "not all"); visits stored \(stored)"
              + (short > 0 ? " (\(short) dropped as shorter than 1 s or 10 frames)" : "") + ", accepted by the collector "
              + "\(delivery.eventsAccepted), rejected \(delivery.eventsRejected); batches \(delivery.batchesDelivered) "
              + "(\(delivery.batchesDuplicate) duplicate), retries \(delivery.retries), hangs \(statistics.hangs); "
              + "MetricKit payloads delivered \(statistics.metricKit.payloadsDelivered), "
              + "waiting \(statistics.metricKit.pendingPayloads)")
        if !problems.isEmpty {
            var message = "FramescopeExample: not every visit was accepted by the collector:\n"
            for problem in problems { message += "  - \(problem)\n" }
            if delivery.pendingBatches > 0 { message += "  what was not sent stays queued in \(directory.path)\n" }
            FileHandle.standardError.write(Data(message.utf8))
            throw ExitCode(1)
        }
    }

    /// Waits until the `visits` visits are stored, enters Checkout and freezes the main thread
    /// for good; a background task prints `fatal hang under way` once the SDK's record of the
    /// hang (`hang-in-progress.json` in the queue's folder) holds two stack samples.
    @MainActor
    private func freeze(_ framescope: Framescope, after visits: Int, directory: URL,
                        stored: () -> Int) async throws -> Never {
        framescope.screen("Checkout")  // closes the last visit
        while stored() < visits { try await Task.sleep(for: .milliseconds(20)) }
        let record = directory.appendingPathComponent("hang-in-progress.json")
        Task.detached {
            struct Record: Decodable {
                struct Stack: Decodable { var samples: [HangStack.Sample] }
                var screen: String
                var stack: Stack?
            }
            while true {
                if let data = FileManager.default.contents(atPath: record.path),
                   let read = try? JSONDecoder().decode(Record.self, from: data), (read.stack?.samples.count ?? 0) >= 2 {
                    FileHandle.standardOutput.write(Data("fatal hang under way on \(read.screen)\n".utf8))
                    return
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        freezeMainThread()
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

    /// Why not every MetricKit payload was delivered, one line each; empty when all were.
    static func problems(_ metricKit: MetricKitStatistics) -> [String] {
        var problems: [String] = []
        if let error = metricKit.configurationError {
            problems.append("the collector says the configuration is wrong for MetricKit payloads: \(error)")
        } else if metricKit.pendingPayloads > 0 {
            problems.append("\(metricKit.pendingPayloads) MetricKit payloads were not delivered (last error: \(metricKit.lastError ?? "none"))")
        }
        if metricKit.payloadsRefused > 0 { problems.append("the collector refused \(metricKit.payloadsRefused) MetricKit payloads") }
        if metricKit.payloadsRejected > 0 { problems.append("the collector rejected \(metricKit.payloadsRejected) MetricKit payloads") }
        return problems
    }

    /// Plays one visit's simulated ticks in real time on the main actor.
    @MainActor
    private func play(visit index: Int, seconds: Double, into framescope: Framescope) async {
        // Every third visit is a heavy screen with an occasional main-thread stall.
        var workload = SyntheticWorkload(profile: index % 3 == 1 ? .heavy : .moderate, duration: seconds,
                                         idleLength: 0.6, scrollLength: 1.2,
                                         stallInterval: index % 3 == 1 ? seconds / 2 : nil, stallLength: 0.6,
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
                    // The simulated app's main thread was busy: keep it busy for real.
                    renderHeavyFrame(until: MonotonicClock.system.nowInSeconds() + min(remaining, 10))
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
        // The last frame is shown a frame before the workload's end: stay on the screen for the
        // whole share, or a 1 s visit measured 0.98 s and the SDK dropped it as too short.
        let end = base + first.timestamp + seconds
        let remaining = end - MonotonicClock.system.nowInSeconds()
        if remaining > 0 { try? await Task.sleep(for: .seconds(remaining)) }
    }
}



/// The example's main-thread work: computes until `deadline` (seconds of the monotonic clock),
/// as a heavy frame's layout or decoding would. Its own frame in every stack sample taken
/// meanwhile (`@inline(never)`), so the hangs it makes group under it.
@inline(never)
func renderHeavyFrame(until deadline: Double) {
    var value: UInt64 = 0x9E37_79B9_7F4A_7C15
    // The clock is read about once a millisecond: a sample almost always finds the loop itself.
    while MonotonicClock.system.nowInSeconds() < deadline {
        for _ in 0..<500_000 { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
    }
    blackHole(value)
}

/// Blocks the calling (main) thread for good, in a read of a pipe nobody writes to: the frozen
/// app of a fatal hang. A signal (the stack sampler's) makes the read return; it reads again.
@inline(never)
func freezeMainThread() -> Never {
    var ends: [Int32] = [0, 0]
    _ = pipe(&ends)
    var byte: UInt8 = 0
    while true { _ = read(ends[0], &byte, 1) }
}

/// Keeps `value` from being optimised away.
@inline(never)
func blackHole(_ value: UInt64) {
    if value == 42 { FileHandle.standardError.write(Data()) }
}
