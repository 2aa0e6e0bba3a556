import Foundation
import FramescopeCore
import FramescopeSimulation

/// The demo app: id `demo`, filled with four weeks of simulated fleet data
/// (``FleetSimulation/demo(appId:start:days:deviceCount:seed:)``), clearly labelled as
/// simulated.
public enum DemoData {
    /// The demo app's id.
    public static let appId = "demo"
    /// The demo app's name, which says the data is simulated.
    public static let appName = "Demo app (simulated data)"

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
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var ingested = 0
        for batch in fleet.batches() {
            let events = batch.events.compactMap { event in ISO8601.parse(event.startedAt).map { (event, $0) } }.filter { $0.1 <= now }
            guard !events.isEmpty else { continue }
            let raw = try events.map { String(decoding: try encoder.encode($0.0), as: UTF8.self) }
            var ingest = IngestBatch(app: appId, batchId: batch.batchId, appVersion: batch.app.version, osVersion: batch.device.osVersion,
                                     deviceModel: batch.device.model, events: events, rawEvents: raw, receivedAt: now)
            ingest.installationId = batch.device.installationId
            _ = try await store.ingest(ingest)
            ingested += events.count
        }
        return (credentials, ingested)
    }
}
