import FramescopeCore
import Foundation
import Testing
@testable import FramescopeSDK

/// The record of a hang in progress: written when a hang begins on a screen, rewritten as it
/// goes on, deleted when it ends, and moved into the journal by the next process's queue.
@Suite("Fatal hang record")
struct FatalHangRecorderTests {
    /// A new empty folder, deleted at the end of the test.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-fatal-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    static let stack = HangStack(images: [HangStack.Image(id: String(repeating: "cd", count: 20), name: "Shop", size: 1 << 20, app: true)],
                                 frames: [HangStack.Frame(image: 0, offset: 0x1234)],
                                 samples: [HangStack.Sample(at: 0.01, frames: [0]), HangStack.Sample(at: 0.11, frames: [0])])

    static func recorder(in folder: Folder, clock: MonotonicClock) -> FatalHangRecorder {
        FatalHangRecorder(directory: folder.url, app: AppInfo(id: "shop", version: "3.2.0", build: "320"), osVersion: "18.1",
                          clock: clock, deviceState: { DeviceState(network: .cellular, lowPowerMode: true, thermalState: .fair) })
    }

    static func read(_ recorder: FatalHangRecorder) throws -> FatalHangEvent {
        try JSONDecoder().decode(FatalHangEvent.self, from: Data(contentsOf: recorder.url))
    }

    @Test("Began on a screen writes the record; progress rewrites duration and samples; the end deletes it")
    func lifecycle() throws {
        let folder = try Folder()
        let now = Locked<UInt64>(100_000_000_000)
        let clock = MonotonicClock(now: { now.withLock { $0 } })
        let recorder = Self.recorder(in: folder, clock: clock)
        recorder.scene.withLock { $0 = FatalHangRecorder.Scene(screen: "Checkout", tags: ["plan": "pro"]) }

        let start: UInt64 = 99_700_000_000  // 0.3 s before now
        let before = Date().timeIntervalSince1970
        recorder.handle(.began(Hang(start: start, duration: 0.3)))
        var record = try Self.read(recorder)
        #expect(record.kind == "fatalHang" && record.screen == "Checkout")
        #expect(record.appVersion == "3.2.0" && record.build == "320" && record.osVersion == "18.1")
        #expect(record.context == VisitContext(network: .cellular, lowPowerMode: true, thermalState: .fair, tags: ["plan": "pro"]))
        #expect(record.duration == 0.3 && record.stack == nil)
        #expect((1...64).contains(record.id.count))
        let startedAt = try #require(ISO8601.parse(record.startedAt))
        #expect(abs(startedAt - (before - 0.3)) < 0.5, "\(record.startedAt)")
        let id = record.id

        recorder.progressed(Hang(start: start, duration: 0.8, stack: Self.stack))
        record = try Self.read(recorder)
        #expect(record.id == id && record.duration == 0.8 && record.stack == Self.stack)
        recorder.progressed(Hang(start: start, duration: 1.2))  // no new samples: the stack stays
        record = try Self.read(recorder)
        #expect(record.duration == 1.2 && record.stack == Self.stack)

        recorder.handle(.ended(Hang(start: start, duration: 1.3), .recovered))
        #expect(!FileManager.default.fileExists(atPath: recorder.url.path))
        recorder.progressed(Hang(start: start, duration: 2))  // after the end: nothing
        #expect(!FileManager.default.fileExists(atPath: recorder.url.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty, "no temporary file left")
    }

    @Test("A hang between visits (no screen) leaves no record")
    func noScreen() throws {
        let folder = try Folder()
        let recorder = Self.recorder(in: folder, clock: .system)
        recorder.handle(.began(Hang(start: MonotonicClock.system.now(), duration: 0.3)))
        #expect(!FileManager.default.fileExists(atPath: recorder.url.path))
    }

    @Test("The next queue moves a record into the journal once and deletes it; a damaged record is deleted")
    func recovery() async throws {
        let folder = try Folder()
        let recorder = Self.recorder(in: folder, clock: .system)
        recorder.scene.withLock { $0.screen = "Checkout" }
        recorder.handle(.began(Hang(start: MonotonicClock.system.now(), duration: 0.3)))
        recorder.progressed(Hang(start: 0, duration: 4.5, stack: Self.stack))
        let written = try Self.read(recorder)

        func open() throws -> DeliveryQueue {
            try DeliveryQueue(configuration: DeliveryConfiguration(), directory: folder.url,
                              collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_test",
                              app: AppInfo(id: "shop", version: "3.3.0", build: "330"),
                              device: DeviceInfo(model: "iPhone16,1", osName: "iOS", osVersion: "18.2", maxRefreshRate: 120))
        }
        var queue = try open()
        var statistics = await queue.currentStatistics
        #expect(statistics.fatalHangsRecovered == 1 && statistics.pendingEvents == 1)
        #expect(!FileManager.default.fileExists(atPath: recorder.url.path))
        let journal = try String(contentsOf: folder.url.appendingPathComponent("pending.jsonl"), encoding: .utf8)
        let line = try #require(journal.split(separator: "\n").first)
        let json = try #require(line.firstIndex(of: " ").map { line[line.index(after: $0)...] })
        let queued = try JSONDecoder().decode(FatalHangEvent.self, from: Data(json.utf8))
        #expect(queued == written, "the event names the versions of the launch that hung, not this one")

        // A second process finds the event in the journal, not a second record.
        queue = try open()
        statistics = await queue.currentStatistics
        #expect(statistics.fatalHangsRecovered == 0 && statistics.pendingEvents == 1)

        try Data("{\"kind\":\"fatalHang\",\"id\":".utf8).write(to: recorder.url)  // torn
        queue = try open()
        statistics = await queue.currentStatistics
        #expect(statistics.fatalHangsRecovered == 0 && statistics.pendingEvents == 1)
        #expect(!FileManager.default.fileExists(atPath: recorder.url.path))
    }
}
