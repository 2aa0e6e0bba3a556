import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore

/// A store on a fresh SQLite file, deleted when the value is released.
final class TemporaryStore {
    let directory: URL
    let store: SQLiteStore

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try SQLiteStore(path: directory.appendingPathComponent("collector.sqlite").path)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// A visit report from the simulator: `seconds` of a workload at 60 Hz.
func visitReport(seed: UInt64, seconds: Double = 6, profile: SyntheticWorkload.Profile = .moderate) -> RecordingReport {
    var workload = SyntheticWorkload(profile: profile, duration: seconds, seed: seed)
    return PipelineSimulator(display: .fixed(hz: 60), seed: seed).run(&workload).analyze()
}

/// A batch of `count` visits to `screen`, starting at `start` (Unix seconds).
func makeBatch(id: String, app: String = "shop", screen: String = "Feed", count: Int = 3, start: Double, version: String = "1.0") -> EventBatch {
    let events = (0..<count).map { index -> ScreenVisitEvent in
        let report = visitReport(seed: UInt64(index + 1))
        return ScreenVisitEvent(screen: screen, startedAt: ISO8601.format(unixSeconds: start + Double(index) * 60),
                                duration: report.whole.duration + report.whole.firstDuration + 0.5,
                                context: VisitContext(network: .wifi, lowPowerMode: index == 2),
                                report: report.whole, motion: report.motion)
    }
    return EventBatch(batchId: id, app: AppInfo(id: app, version: version, build: "1"),
                      device: DeviceInfo(model: "iPhone14,5", osName: "iOS", osVersion: "18.1", maxRefreshRate: 60), events: events)
}

func jsonData<T: Encodable>(_ value: T) throws -> Data {
    try JSONEncoder().encode(value)
}
