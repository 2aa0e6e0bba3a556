import FramescopeCore

/// What the live overlay shows, worked out from display ticks and, at most
/// ``updateInterval`` seconds apart, the visit's running report: FPS over the last second
/// beside the display's current refresh rate, dropped frames and drop events in the last
/// second, the visit's hitch ratio with Apple's band, a hang under way, and the screen.
///
/// Showing the refresh rate beside the FPS matters: a counter of callbacks alone reads
/// "dropping" when ProMotion idles down to 10 Hz on a still screen, and never shows that
/// Low Power Mode capped the display at 60 Hz. Drops here are the engine's
/// (`FrameInterval.droppedFrames`), so the overlay and the reports agree.
///
/// ``tick(timestamp:targetTimestamp:refreshInterval:)`` runs on every frame and allocates
/// nothing: the last second lives in a ring of ``capacity`` slots allocated once.
///
/// ```swift
/// var overlay = OverlayModel()
/// overlay.tick(timestamp: link.timestamp, targetTimestamp: link.targetTimestamp, refreshInterval: link.duration)
/// if let state = overlay.update(at: link.timestamp, hitchRatio: report?.whole.hitchRatio, hangUnderWay: nil, screen: "Feed") {
///     label.text = state.line   // "58 FPS / 60 Hz · 2 dropped in 1 · 3.1 ms/s good · Feed"
/// }
/// ```
public struct OverlayModel: Sendable {
    /// What the overlay shows at one update.
    public struct State: Sendable, Hashable {
        /// Frames shown per second over the last second (frames ÷ their total duration); `nil` before two ticks.
        public var fps: Double?
        /// The display's refresh rate at the latest tick, in Hz (`nil` before a tick).
        public var refreshRate: Double?
        /// Frames dropped in the last second.
        public var droppedFrames: Int
        /// Intervals that dropped at least one frame, in the last second.
        public var dropEvents: Int
        /// The visit's hitch ratio so far, in ms/s.
        public var hitchRatio: Double?
        /// Apple's band for ``hitchRatio``.
        public var band: Band?
        /// Seconds the main thread has been blocked by a hang under way, if one is.
        public var hangUnderWay: Double?
        /// The screen being measured.
        public var screen: String?

        /// One line for the collapsed overlay:
        /// `58 FPS / 60 Hz · 2 dropped in 1 · 3.1 ms/s good · Feed`.
        public var line: String {
            var parts = ["\(Self.whole(fps)) FPS / \(Self.whole(refreshRate)) Hz",
                         "\(droppedFrames) dropped in \(dropEvents)",
                         "\(Self.tenths(hitchRatio)) ms/s \(band?.rawValue ?? "–")"]
            if let hangUnderWay { parts.append("HANG \(Self.tenths(hangUnderWay)) s") }
            if let screen { parts.append(screen) }
            return parts.joined(separator: " · ")
        }

        /// The expanded overlay, one fact per line.
        public var expanded: String {
            var lines = [screen ?? "(no screen)",
                         "FPS \(Self.whole(fps)) of \(Self.whole(refreshRate)) Hz, last second",
                         "Dropped \(droppedFrames) frame\(droppedFrames == 1 ? "" : "s") in \(dropEvents) event\(dropEvents == 1 ? "" : "s"), last second",
                         "Hitch ratio \(Self.tenths(hitchRatio)) ms/s, \(band?.rawValue ?? "no frames yet") (visit)"]
            lines.append(hangUnderWay.map { "Hang under way: \(Self.tenths($0)) s" } ?? "No hang")
            return lines.joined(separator: "\n")
        }

        /// A number rounded to a whole, or `–`.
        static func whole(_ value: Double?) -> String {
            guard let value, value.isFinite else { return "–" }
            return String(Int(value.rounded()))
        }

        /// A number rounded to tenths, or `–`.
        static func tenths(_ value: Double?) -> String {
            guard let value, value.isFinite, abs(value) < 1e12 else { return "–" }
            let tenths = Int((value * 10).rounded())
            return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)"
        }
    }

    /// Seconds between two updates at least (0.25: four a second).
    public let updateInterval: Double
    /// The span the FPS and drop counts cover, in seconds (1).
    public let window: Double
    /// Ticks the ring holds: a second at 1,000 Hz, the most a display refreshes at.
    public static let capacity = 1_024

    private var ends: [Double]
    private var durations: [Double]
    private var drops: [Int32]
    private var head = 0
    private var count = 0
    private var durationSum = 0.0
    private var dropSum = 0
    private var dropEventSum = 0
    private var previousTimestamp = 0.0
    private var previousTarget = 0.0
    private var hasPrevious = false
    private var refreshRate: Double?
    private var lastUpdate = -Double.infinity

    /// An overlay model updating at most every `updateInterval` seconds over a `window`-second span.
    public init(updateInterval: Double = 0.25, window: Double = 1) {
        self.updateInterval = updateInterval.isFinite && updateInterval >= 0 ? updateInterval : 0.25
        self.window = window.isFinite && window > 0 ? window : 1
        ends = Array(repeating: 0, count: Self.capacity)
        durations = Array(repeating: 0, count: Self.capacity)
        drops = Array(repeating: 0, count: Self.capacity)
    }

    /// Records one display tick (the same values the SDK's `tick` takes). A tick the engine
    /// would refuse (not after the previous one, a target not 1 ms to 1 s ahead) is ignored.
    public mutating func tick(timestamp: Double, targetTimestamp: Double?, refreshInterval: Double?) {
        guard timestamp.isFinite else { return }
        let target: Double
        if let targetTimestamp, targetTimestamp.isFinite, FrameAnalyzer.refreshIntervalRange.contains(targetTimestamp - timestamp) {
            target = targetTimestamp
        } else if let refreshInterval, FrameAnalyzer.refreshIntervalRange.contains(refreshInterval) {
            target = timestamp + refreshInterval
        } else {
            return
        }
        if hasPrevious, !(timestamp > previousTimestamp) { return }
        refreshRate = 1 / (target - timestamp)
        let first = !hasPrevious || timestamp - previousTimestamp > FrameAnalyzer.maximumTickGap
        let (lastTimestamp, lastTarget) = (previousTimestamp, previousTarget)
        previousTimestamp = timestamp
        previousTarget = target
        hasPrevious = true
        if first { return }
        let frame = FrameInterval(previousTimestamp: lastTimestamp, previousTarget: lastTarget, timestamp: timestamp)
        if count == Self.capacity { evictOldest() }
        let slot = (head + count) % Self.capacity
        ends[slot] = timestamp
        durations[slot] = frame.interval
        let dropped = Int32(clamping: frame.droppedFrames)
        drops[slot] = dropped
        count += 1
        durationSum += frame.interval
        dropSum += Int(dropped)
        if dropped > 0 { dropEventSum += 1 }
        while count > 0, ends[head] <= timestamp - window { evictOldest() }
    }

    /// Forgets the last second (after a pause: the next tick starts afresh).
    public mutating func reset() {
        head = 0
        count = 0
        durationSum = 0
        dropSum = 0
        dropEventSum = 0
        hasPrevious = false
        lastUpdate = -.infinity
    }

    /// The state to show at `time` (seconds on the ticks' clock), or `nil` when the last
    /// state is younger than ``updateInterval``.
    ///
    /// - Parameters:
    ///   - time: Now, on the ticks' clock.
    ///   - hitchRatio: The visit's hitch ratio so far, in ms/s (`currentReport()?.whole.hitchRatio`).
    ///   - hangUnderWay: Seconds the main thread has been blocked, if a hang is under way.
    ///   - screen: The screen being measured.
    public mutating func update(at time: Double, hitchRatio: Double?, hangUnderWay: Double?, screen: String?) -> State? {
        guard takeUpdate(at: time) else { return nil }
        return state(hitchRatio: hitchRatio, hangUnderWay: hangUnderWay, screen: screen)
    }

    /// Whether an update is due at `time` (``updateInterval`` since the last); when it is,
    /// the update counts as made. For a caller whose inputs cost something to read (the
    /// visit's report): read them, then call ``state(hitchRatio:hangUnderWay:screen:)``, only
    /// when this answers `true`.
    public mutating func takeUpdate(at time: Double) -> Bool {
        guard time - lastUpdate >= updateInterval else { return false }
        lastUpdate = time
        return true
    }

    /// The state now, whenever it was last updated.
    public func state(hitchRatio: Double?, hangUnderWay: Double?, screen: String?) -> State {
        let durationSum = max(self.durationSum, 0)
        let fps: Double? = count > 0 && durationSum > 0 ? Double(count) / durationSum : nil
        return State(fps: fps, refreshRate: refreshRate, droppedFrames: dropSum, dropEvents: dropEventSum,
                     hitchRatio: hitchRatio, band: Band.hitchRatio(hitchRatio), hangUnderWay: hangUnderWay, screen: screen)
    }

    private mutating func evictOldest() {
        durationSum -= durations[head]
        let dropped = Int(drops[head])
        dropSum -= dropped
        if dropped > 0 { dropEventSum -= 1 }
        head = (head + 1) % Self.capacity
        count -= 1
        if count == 0 { durationSum = 0 }
    }
}
