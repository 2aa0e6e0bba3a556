import FramescopeCore
import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps the record of the hang under way in the SDK's folder, so that a process killed during
/// a hang (the system's watchdog, a user force-quitting a frozen app, `kill -9`) leaves it
/// behind, and the next launch sends it as a ``FatalHangEvent``.
///
/// - When a hang begins (``handle(_:)`` with ``HangEvent/began(_:)``) on a screen, the record
///   is written: a new random id, the screen and tags at that moment, the start, the
///   duration so far, the app and OS versions and the device's state.
/// - While it lasts (``progressed(_:)``, from the watchdog's progress handler) it is rewritten
///   with the duration and the stack samples so far.
/// - When it ends (``HangEvent/ended(_:_:)``, whether it recovered, or the watchdog was
///   paused or stopped) the record is deleted.
/// - At the next launch ``DeliveryQueue`` moves a record it finds into the journal, as an
///   event of a batch, then deletes it (``recover(in:)``). Killed between the two, the
///   record is sent twice; the collector keeps one per id.
///
/// Each write goes to a temporary file renamed over the record (no `fsync`: a killed process
/// leaves its writes to the kernel; a power loss may lose the record). Everything runs on
/// the watchdog's thread, and only while a hang lasts.
final class FatalHangRecorder: Sendable {
    /// The record's file name in the SDK's folder.
    static let fileName = "hang-in-progress.json"

    /// What the app shows now, published by ``Framescope`` on each screen change and tag
    /// change (never per tick) for the watchdog's thread to read.
    struct Scene: Sendable, Hashable {
        /// The current screen, or nil between visits.
        var screen: String?
        /// The custom tags.
        var tags: [String: String] = [:]
    }

    /// The record's file.
    let url: URL
    /// The current screen and tags.
    let scene = Locked(Scene())
    private let app: AppInfo
    private let osVersion: String
    private let clock: MonotonicClock
    private let deviceState: @Sendable () -> DeviceState
    /// The hang under way's record as last written, or nil.
    private let record = Locked<FatalHangEvent?>(nil)
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// A recorder writing to `directory` (the delivery queue's folder); `clock` is the
    /// watchdog's, which hang starts are read on.
    init(directory: URL, app: AppInfo, osVersion: String, clock: MonotonicClock,
         deviceState: @escaping @Sendable () -> DeviceState) {
        url = directory.appendingPathComponent(Self.fileName)
        self.app = app
        self.osVersion = osVersion
        self.clock = clock
        self.deviceState = deviceState
    }

    /// Writes the record when a hang begins on a screen; deletes it when the hang ends.
    func handle(_ event: HangEvent) {
        switch event {
        case let .began(hang):
            let scene = scene.withLock { $0 }
            guard let screen = scene.screen else { return }
            let state = deviceState()
            // The wall-clock time of the hang's start: now, less how long ago it began.
            let startedAt = Date().timeIntervalSince1970 - seconds(clock.now().minus(hang.start))
            let event = FatalHangEvent(
                id: UUID().uuidString.lowercased(), screen: screen, startedAt: ISO8601.format(unixSeconds: startedAt),
                duration: hang.duration, appVersion: app.version, build: app.build, osVersion: osVersion,
                context: state.visitContext(tags: scene.tags),
                stack: nil)
            record.withLock { $0 = event }
            write(event)
        case .ended:
            guard record.withLock({ record in defer { record = nil }; return record != nil }) else { return }
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// Rewrites the record of the hang under way with `hang`'s duration and samples so far.
    func progressed(_ hang: Hang) {
        guard let event = record.withLock({ record -> FatalHangEvent? in
            guard var event = record else { return nil }
            event.duration = hang.duration
            if let stack = hang.stack { event.stack = stack }
            record = event
            return event
        }) else { return }
        write(event)
    }

    /// Writes `event` to a temporary file and renames it over the record.
    private func write(_ event: FatalHangEvent) {
        guard let data = try? encoder.encode(event) else { return }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".tmp-\(Self.fileName)")
        do {
            try data.write(to: temporary)
        } catch {
            return
        }
        if rename(temporary.path, url.path) != 0 { try? FileManager.default.removeItem(at: temporary) }
    }

    /// The fatal hang a record left in `directory` says happened, as the JSON of one event,
    /// or nil when there is none or it is not a fatal hang (then it is of no use and the
    /// caller deletes it as well).
    static func recover(in directory: URL) -> [UInt8]? {
        let url = directory.appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: url.path),
              let event = try? JSONDecoder().decode(FatalHangEvent.self, from: data),
              event.kind == "fatalHang" else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(event)).map { Array($0) }
    }
}
