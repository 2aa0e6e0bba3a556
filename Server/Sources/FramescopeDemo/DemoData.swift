import Foundation
import FramescopeCollector
import FramescopeCore
import FramescopeSimulation
import FramescopeTraces

/// The demo app: id `demo`, filled with four weeks of simulated fleet data
/// (``FleetSimulation/demo(appId:start:days:deviceCount:seed:)``), clearly labelled as
/// simulated.
public enum DemoData {
    /// The demo app's id.
    public static let appId = "demo"
    /// The demo app's name, which says the data is simulated.
    public static let appName = "Demo app (simulated data)"
    /// The tag key the demo declares (``DeclaredTags``): the arm of an experiment each installation is in.
    public static let demoTagKey = "experiment"

    /// Creates the demo app if it is missing (or gives it fresh keys, since stored keys
    /// cannot be shown again) and, when it has no events yet, ingests `days` days of
    /// simulated visits ending at `now`. Returns the keys to print.
    public static func prepare(store: any CollectorStore, now: Double = Date().timeIntervalSince1970, days: Int = 28, deviceCount: Int = 120) async throws -> (credentials: AppCredentials, ingestedEvents: Int) {
        let credentials: AppCredentials
        if try await store.apps().contains(where: { $0.app == appId }), let rotated = try await store.rotateKeys(app: appId) {
            credentials = rotated
        } else {
            credentials = try await store.createApp(name: appName, id: appId)
        }
        guard try await store.rawEventCount(app: appId) == 0 else { return (credentials, 0) }
        let midnight = (now / 86_400).rounded(.down) * 86_400
        let start = midnight - Double(days - 1) * 86_400
        let fleet = FleetSimulation.demo(appId: appId, start: start, days: days, deviceCount: deviceCount)
        var ingested = 0
        var metricKit = DemoMetricKit()
        // A declared tag, so the filter bar and the break-down show one: half the fleet (by
        // installation) is in an experiment's "compact" arm, the rest in "control". The
        // simulated scrolling does not depend on it, so the arms' figures differ by chance only.
        _ = try await store.declareTagKey(app: appId, key: demoTagKey, now: start)
        var pending: [IngestBatch] = []
        for batch in fleet.batches() {
            let arm = (batch.device.installationId ?? batch.device.model).utf8.reduce(0) { $0 &+ Int($1) } % 2 == 0 ? "compact" : "control"
            let events = batch.events.enumerated().compactMap { position, event -> (ScreenVisitEvent, Double)? in
                var event = event
                event.context.tags[demoTagKey] = arm
                // The main thread's samples, as an SDK that samples sends them (DemoHangs).
                for index in event.hangs.indices {
                    event.hangs[index].stack = DemoHangs.stack(screen: event.screen, version: batch.app.version,
                                                               duration: event.hangs[index].duration, seed: position &+ index &+ ingested)
                }
                return ISO8601.parse(event.startedAt).map { (event, $0) }
            }.filter { $0.1 <= now }
            guard !events.isEmpty else { continue }
            let raw = events.map { StoredEventJSON.encode($0.0) }
            var ingest = IngestBatch(app: appId, batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                                     deviceModel: batch.device.model, events: events, rawEvents: raw, receivedAt: now)
            ingest.installationId = batch.device.installationId
            ingest.maxRefreshRate = batch.device.maxRefreshRate
            // The newest release's SDK samples a quarter of the installations (issue 35): its
            // batches say so, and the overview says which rates its figures come from. The
            // visits, and so every figure, are the same as without.
            if batch.app.version == fleet.releases.last?.version { ingest.sampleRatePPM = SampleRate.partsPerMillion(of: 0.25) }
            // One Checkout visit in 25 ends in a fatal hang (the app killed while it hung),
            // sent by the device's next batch: here, beside the visit.
            if let (checkout, started) = events.first(where: { $0.0.screen == "Checkout" }), (ingested / 7) % 25 == 0 {
                let duration = 3 + Double(ingested % 5)
                ingest.fatalHangs = [(FatalHangEvent(
                    id: "demo-fatal-\(batch.batchId)", screen: checkout.screen, startedAt: ISO8601.format(unixSeconds: started + 1),
                    duration: duration, appVersion: batch.app.version, build: batch.app.build, osVersion: batch.device.osVersion,
                    context: checkout.context, stack: DemoHangs.stack(screen: "Checkout", version: batch.app.version, duration: duration, seed: ingested)),
                    started + 1)]
            }
            // Flushes of 64 batches, as the group commit makes them under load: one
            // transaction on SQLite, inserts side by side on ClickHouse.
            pending.append(ingest)
            if pending.count == 64 {
                _ = try await store.ingest(pending)
                pending.removeAll(keepingCapacity: true)
            }
            ingested += events.count
            for (event, start) in events { metricKit.add(event, start: start, device: batch.device, appVersion: batch.app.version) }
        }
        _ = try await store.ingest(pending)
        _ = try await store.storeMetricKit(app: appId, records: metricKit.records(receivedAt: now))
        try await store.storeSymbols(app: appId, images: DemoHangs.symbols(versions: fleet.releases.map(\.version)), now: now)
        return (credentials, ingested)
    }
}

/// Simulated MetricKit payloads for the demo: one per device and day, as iOS delivers
/// them, whose scroll hitch time ratio is the hitch ratio of that device's scrolling that
/// day (the SDK's `motion` reports) and whose hang diagnostics are its hangs, with their
/// stacks as call-stack trees would give them (the first 32 of a day). Real Apple
/// figures differ from the SDK's (docs/collector.md); these only fill the comparison.
struct DemoMetricKit {
    private struct DeviceDay: Hashable { var installation: String; var day: Int; var appVersion: String; var os: String; var model: String }
    private var days: [DeviceDay: (motion: [FrameReport], hangs: [Double], stacks: [(Int, Double, HangStack)])] = [:]

    mutating func add(_ event: ScreenVisitEvent, start: Double, device: DeviceInfo, appVersion: String) {
        let key = DeviceDay(installation: device.installationId ?? device.model, day: Int(start / 86_400), appVersion: appVersion,
                            os: device.osVersion, model: device.model)
        var entry = days[key] ?? ([], [], [])
        if let motion = event.motion { entry.motion.append(motion) }
        for hang in event.hangs {
            if let stack = hang.stack, entry.stacks.count < MetricKitParser.maximumHangCallStacks {
                entry.stacks.append((entry.hangs.count, hang.duration, stack))
            }
            entry.hangs.append(hang.duration)
        }
        days[key] = entry
    }

    func records(receivedAt: Double) -> [MetricKitRecord] {
        days.sorted { ($0.key.day, $0.key.installation) < ($1.key.day, $1.key.installation) }.map { key, entry in
            let begin = Double(key.day) * 86_400
            var record = MetricKitRecord(
                digest: "demo-\(key.installation)-\(key.day)", receivedAt: receivedAt, begin: begin, end: begin + 86_340,
                appVersion: key.appVersion, osVersion: key.os, deviceModel: key.model,
                scrollHitchTimeRatio: entry.motion.isEmpty ? nil : FrameReport.merged(entry.motion).hitchRatio,
                hangDiagnostics: entry.hangs.count, hangTime: entry.hangs.reduce(0, +), longestHang: entry.hangs.max() ?? 0,
                histogramHangs: 0)
            record.hangs = entry.stacks.map { MetricKitHang(diagnostic: $0.0, duration: $0.1, summary: HangSummary($0.2)) }
            return record
        }
    }
}

