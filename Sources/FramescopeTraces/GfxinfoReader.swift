import FramescopeCore

/// Reads the summary of Android's `dumpsys gfxinfo <package>` as a stream.
///
/// ```
/// ** Graphics info for pid 2599 [com.example] **
/// Total frames rendered: 21
/// Janky frames: 4 (19.05%)
/// 50th percentile: 19ms
/// HISTOGRAM: 5ms=0 6ms=0 … 16ms=2 17ms=3 … 200ms=1 … 4950ms=0
/// ```
///
/// The summary has no frame times, only HWUI's histogram of frame durations (buckets of
/// 1 ms up to 32 ms, then wider, each labelled by its lower bound). Framescope counts each
/// bucket's frames at the bucket's label (``TraceEvent/frames(duration:count:)``), which
/// fills the report's counts, drops, slow and frozen frames and percentiles but no FPS
/// window; and it keeps the dump's own figures beside its own (``TraceEvent/toolFigure(_:)``),
/// with the percentiles recomputed from the dump's histogram by Framescope's nearest-rank
/// rule. The GPU histogram, memory and view sections are not frame figures and are skipped.
///
/// A dump of several processes (`dumpsys gfxinfo` without a package) is read for the
/// process with the most frames, and a note names the others. Field by field:
/// `docs/traces.md`.
struct GfxinfoReader {
    let file: String

    /// The longest line accepted, in bytes: a histogram line is about 2 KB; view and
    /// configuration lines stay under a few KB.
    static let maximumLineBytes = 1 << 20
    /// The most frames one count may say: a display at 1,000 Hz for 31 years. A larger
    /// count is not a device's.
    static let maximumFrames = 1_000_000_000_000
    /// The tool's name in ``ToolFigure/tool``.
    static let tool = "gfxinfo"

    /// Whether `prefix` (the first bytes of a file) is a gfxinfo dump: its banner or a
    /// process header within them.
    static func matches(prefix: some Collection<UInt8>) -> Bool {
        let text = String(decoding: prefix, as: UTF8.self)
        return text.contains("Graphics Acceleration Info") || text.contains("** Graphics info for pid ")
    }

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        note: (String) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var processes: [Process] = []
        let lines = LineSplitter(file: file, maximumLineBytes: Self.maximumLineBytes, formatName: "gfxinfo output")
        try lines.forEachLine(of: &source, progress: progress) { (bytes, number) throws(TraceError) in
            try take(bytes, number, into: &processes)
        }
        let measured = processes.filter { $0.histogramLine != nil || !$0.framestats.frames.isEmpty }
        guard let chosen = measured.max(by: { $0.frameCount < $1.frameCount }) else {
            throw TraceError(kind: .data, file: file, line: nil, message: "has no 'HISTOGRAM:' line and no frames in a PROFILEDATA block; expected the output of 'adb shell dumpsys gfxinfo <package>' (with or without 'framestats')")
        }
        if measured.count > 1 {
            let others = measured.filter { $0.header != chosen.header }.map(\.name).joined(separator: ", ")
            note("\(measured.count) processes have frames; reading \(chosen.name), the one with the most (\(chosen.frameCount)); not read: \(others)")
        }
        if let total = chosen.totalFrames, total != chosen.histogramTotal {
            note("HISTOGRAM counts \(chosen.histogramTotal) frames; 'Total frames rendered' says \(total)")
        }
        for figure in chosen.figures(tool: Self.tool) {
            try handle(.toolFigure(figure.figure), figure.line)
        }
        let stats = chosen.framestats
        if let line = stats.firstLine {
            try readFramestats(stats, line: line, histogram: chosen.histogramLine == nil ? nil : chosen.histogramTotal, note: note, handle)
            return
        }
        let line = chosen.histogramLine ?? 0
        for bucket in chosen.histogram where bucket.count > 0 {
            try handle(.frames(duration: Double(bucket.milliseconds) / 1000, count: bucket.count), line)
        }
    }

    /// The frames of the PROFILEDATA rows, each at its own duration, read instead of the
    /// histogram (whose counts stay as the dump's figures).
    private func readFramestats(_ stats: GfxinfoFramestats, line: Int, histogram: Int?, note: (String) -> Void,
                                _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        if let interval = stats.frameInterval { try handle(.refreshRate(1e9 / Double(interval)), line) }
        try handle(.toolFigure(ToolFigure(tool: Self.tool, label: "PROFILEDATA frames", value: Double(stats.frames.count), unit: "frames", metrics: [.frames])), line)
        let judged = stats.frames.filter { $0.late != nil }
        if !judged.isEmpty {
            let late = judged.filter { $0.late == true }.count
            try handle(.toolFigure(ToolFigure(tool: Self.tool, label: "PROFILEDATA frames past FrameDeadline", value: Double(late), unit: "frames", metrics: [.slowFrames, .frozenFrames])), line)
        }
        for frame in stats.frames {
            try handle(.frames(duration: Double(frame.nanoseconds) / 1e9, count: 1), line)
        }
        if let histogram {
            note("frames from the \(stats.frames.count) PROFILEDATA rows (their exact times); the HISTOGRAM's \(histogram) frames are shown as gfxinfo's figures")
        }
        if stats.flagged > 0 {
            note("skipped \(stats.flagged) PROFILEDATA row\(stats.flagged == 1 ? "" : "s") whose Flags are not 0 (not frames by HWUI's rules)")
        }
    }

    /// One line of the dump, into the process it belongs to.
    private func take(_ bytes: [UInt8], _ number: Int, into processes: inout [Process]) throws(TraceError) {
        func refuse(_ message: String) -> TraceError {
            TraceError(kind: .data, file: file, line: number, message: message)
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        if text.hasPrefix("** Graphics info for pid ") {
            processes.append(Process(header: text.printable()))
            return
        }
        if GfxinfoFramestats.isFence(text) {
            if processes.isEmpty { processes.append(Process(header: nil)) }
            processes[processes.count - 1].framestats.fence()
            return
        }
        if let last = processes.indices.last, processes[last].framestats.isOpen {
            if let problem = processes[last].framestats.take(text, line: number) { throw refuse(problem) }
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let key = String(text[..<colon]).printable()
        let value = text[text.index(after: colon)...].trimmingWhitespace()
        func count(_ field: Substring) throws(TraceError) -> Int {
            guard let number = Int(field), number >= 0, number <= Self.maximumFrames else {
                throw refuse("\(key): '\(field)' is not a count of frames (a whole number up to 10^12)")
            }
            return number
        }
        func current() -> Int {
            if processes.isEmpty { processes.append(Process(header: nil)) }
            return processes.count - 1
        }
        switch key {
        case "Total frames rendered":
            processes[current()].totalFrames = try count(value)
            processes[current()].totalLine = number
        case "Janky frames", "Janky frames (legacy)":
            let figure = value.split(separator: " ").first ?? ""
            processes[current()].counts.append((key, try count(figure), number))
        case "HISTOGRAM":
            let index = current()
            guard processes[index].histogramLine == nil else { throw refuse("a second HISTOGRAM line for one process") }
            processes[index].histogramLine = number
            var previous = 0
            for field in value.split(separator: " ") {
                guard let equals = field.firstIndex(of: "="), field[..<equals].hasSuffix("ms"),
                      let milliseconds = Int(field[..<equals].dropLast(2)) else {
                    throw refuse("HISTOGRAM: '\(field)' is not 'Nms=count'")
                }
                guard milliseconds > previous, milliseconds <= 1_000_000 else {
                    throw refuse("HISTOGRAM: bucket \(milliseconds)ms is not after \(previous)ms (buckets rise, 1 ms to 1,000 s)")
                }
                previous = milliseconds
                let frames = try count(field[field.index(after: equals)...])
                processes[index].histogram.append(Bucket(milliseconds: milliseconds, count: frames))
                processes[index].histogramTotal = processes[index].histogramTotal.addingSaturated(frames)
            }
            guard processes[index].histogramTotal <= Self.maximumFrames else {
                throw refuse("HISTOGRAM counts more than 10^12 frames in all: not a device's")
            }
        default:
            if key.hasSuffix("th percentile"), !key.contains("gpu"), let rank = Int(key.dropLast("th percentile".count)), (1...99).contains(rank) {
                guard value.hasSuffix("ms"), let milliseconds = Int(value.dropLast(2)), milliseconds >= 0, milliseconds <= 1_000_000 else {
                    throw refuse("\(key): '\(value)' is not a duration in whole ms")
                }
                processes[current()].percentiles.append((rank, milliseconds, number))
            } else if key.hasPrefix("Number ") {
                processes[current()].counts.append((key, try count(value), number))
            }
        }
    }

    /// One bucket of the dump's histogram.
    struct Bucket {
        /// The bucket's label: the lower bound of its frame durations, in ms.
        var milliseconds: Int
        /// Frames in the bucket.
        var count: Int
    }

    /// What the dump says about one process.
    private struct Process {
        /// `** Graphics info for pid 2599 [com.example] **`, or nil before any header.
        var header: String?
        var totalFrames: Int?
        var totalLine = 0
        /// "Janky frames" and the "Number …" lines, in order.
        var counts: [(label: String, value: Int, line: Int)] = []
        var percentiles: [(rank: Int, milliseconds: Int, line: Int)] = []
        var histogram: [Bucket] = []
        var histogramLine: Int?
        var histogramTotal = 0
        var framestats = GfxinfoFramestats()

        /// Frames the process has: its histogram's, or its PROFILEDATA rows' if more.
        var frameCount: Int { max(histogramTotal, framestats.frames.count) }

        /// "pid 2599 [com.example]", or "the dump" without a header.
        var name: String {
            guard let header else { return "the dump" }
            return header.replacingStars()
        }

        /// The dump's figures with Framescope's metrics for the same things.
        func figures(tool: String) -> [(figure: ToolFigure, line: Int)] {
            var result: [(ToolFigure, Int)] = []
            if let totalFrames {
                result.append((ToolFigure(tool: tool, label: "Total frames rendered", value: Double(totalFrames), unit: "frames", metrics: [.frames]), totalLine))
            }
            for (label, value, line) in counts {
                let metrics: [Metric] = switch label {
                case "Janky frames", "Janky frames (legacy)": [.slowFrames, .frozenFrames]
                case "Number Frame deadline missed", "Number Frame deadline missed (legacy)": [.dropEvents]
                default: []
                }
                result.append((ToolFigure(tool: tool, label: label, value: Double(value), unit: "frames", metrics: metrics), line))
            }
            for (rank, milliseconds, line) in percentiles {
                let metric: [Metric] = switch rank {
                case 50: [.frameDurationP50]
                case 90: [.frameDurationP90]
                case 95: [.frameDurationP95]
                case 99: [.frameDurationP99]
                default: []
                }
                let own = Self.nearestRank(Double(rank) / 100, histogram, total: histogramTotal).map(Double.init)
                result.append((ToolFigure(tool: tool, label: "\(rank)th percentile", value: Double(milliseconds), unit: "ms", metrics: metric, framescope: own), line))
            }
            return result
        }

        /// The label of the ⌈q·N⌉-th smallest frame of the histogram (Framescope's
        /// nearest-rank rule, `DurationHistogram.value(atQuantile:)`), in ms.
        static func nearestRank(_ q: Double, _ histogram: [Bucket], total: Int) -> Int? {
            guard total > 0 else { return nil }
            let rank = max(1, min(total, Int((q * Double(total)).rounded(.up))))
            var seen = 0
            for bucket in histogram {
                seen = seen.addingSaturated(bucket.count)
                if seen >= rank { return bucket.milliseconds }
            }
            return histogram.last?.milliseconds
        }
    }
}
