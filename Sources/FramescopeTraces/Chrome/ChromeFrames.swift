import FramescopeCore

/// The frame events of a Chrome trace, kept as they are read and turned into each
/// process's ticks at the end (docs/traces.md):
///
/// - every vsync a `PipelineReporter` slice began at is **presented** when one of its
///   reporters presented all or part of a frame, else **dropped** when one dropped a
///   frame, else **idle** (no update was wanted);
/// - a trace without reporters has `DrawFrame` (presented) and `DroppedFrame` (dropped);
/// - a presented vsync is a tick at its time; a dropped one makes none, so the gap until
///   the next presented frame shows the drop; an idle vsync, and `NeedsBeginFrameChanged`
///   to 0, break the sequence (``TraceEvent/idle``): the page had nothing to draw, so the
///   time until it draws again is no frame's;
/// - the refresh rate is the median interval between the process's vsyncs (reporters and
///   `BeginFrame`), snapped to a common rate.
struct ChromeFrames {
    let file: String

    enum Kind: UInt8 {
        case presented, partial, dropped, idle, draw, droppedInstant, begin, stopped
    }

    struct Record {
        var time: Double
        var processID: Int
        var line: Int32
        var kind: Kind
    }

    private var records: [Record] = []
    private var names: [Int: String] = [:]
    private var unknownStates = 0

    init(file: String) { self.file = file }

    /// Most process names kept.
    static let maximumNames = 10_000

    mutating func take(_ event: ChromeEvent, line: Int) throws(TraceError) {
        guard let name = event.name else { return }
        if name == .processName, event.phase == "M", let pid = event.processID, let label = event.argumentName, names.count < Self.maximumNames {
            names[pid] = String(label.prefix(120)).printable()
            return
        }
        let kind: Kind
        switch name {
        case .pipelineReporter:
            guard event.phase == "b" || event.phase == "B" || event.phase == "X" else { return }
            switch event.state {
            case "STATE_PRESENTED_ALL": kind = .presented
            case "STATE_PRESENTED_PARTIAL": kind = .partial
            case "STATE_DROPPED": kind = .dropped
            case "STATE_NO_UPDATE_DESIRED": kind = .idle
            default:
                unknownStates += 1
                return
            }
        case .drawFrame: kind = .draw
        case .droppedFrame: kind = .droppedInstant
        case .beginFrame: kind = .begin
        case .needsBeginFrameChanged:
            guard event.needsBeginFrame == "0" else { return }
            kind = .stopped
        default:
            return
        }
        guard let pid = event.processID else { throw refuse(line, "a \(name.spelling) event has no pid") }
        guard let ts = event.timestamp else { throw refuse(line, "a \(name.spelling) event has no ts") }
        // Physics first: µs since some boot, within ±300 years.
        guard ts.isFinite, abs(ts) < 1e16 else { throw refuse(line, "ts \(ts) is not a time in µs") }
        guard records.count < ChromeTraceReader.maximumRecords else {
            throw refuse(line, "more than \(ChromeTraceReader.maximumRecords) frame events; split the trace")
        }
        records.append(Record(time: ts / 1e6, processID: pid, line: Int32(clamping: line), kind: kind))
    }

    /// Hands on each process's events in time order, and its counts as Chrome's figures.
    mutating func finish(note: (String) -> Void, _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        let framed = Set(records.lazy.filter { $0.kind != .begin && $0.kind != .stopped }.map(\.processID))
        guard !framed.isEmpty else {
            throw TraceError(kind: .data, file: file, message: "has no frame events (PipelineReporter, DrawFrame or DroppedFrame); record with the categories 'cc' and 'disabled-by-default-devtools.timeline.frame'")
        }
        if unknownStates > 0 {
            note("skipped \(unknownStates) PipelineReporter slice\(unknownStates == 1 ? "" : "s") in a state Framescope does not know")
        }
        var byProcess: [Int: [Record]] = [:]
        for record in records where framed.contains(record.processID) { byProcess[record.processID, default: []].append(record) }
        records = []
        for pid in byProcess.keys.sorted() {
            guard var events = byProcess[pid] else { continue }
            events.sort { ($0.time, $0.line) < ($1.time, $1.line) }
            try emit(pid, events, handle)
        }
    }

    private func emit(_ pid: Int, _ events: [Record], _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        let firstLine = Int(events.first?.line ?? 1)
        // Without BeginFrame events to give the cadence, the median interval between frames
        // stands for it (a page draws in bursts, so twenty steady intervals may never come).
        let name = names[pid] ?? "pid \(pid)"
        try handle(.source(TraceSource(application: name, processID: pid, variableCadence: true, role: Self.role(of: name))), firstLine)
        if let hz = Self.refreshRate(events) { try handle(.refreshRate(hz), firstLine) }
        let reporters = events.contains { $0.kind == .presented || $0.kind == .partial || $0.kind == .dropped || $0.kind == .idle }
        var counts: [Kind: Int] = [:]
        var paused = true
        var index = 0
        while index < events.count {
            // One vsync: the events of one kind family at one time.
            let time = events[index].time
            var vsync: Kind?
            var line = Int(events[index].line)
            while index < events.count, events[index].time == time {
                let kind = events[index].kind
                line = Int(events[index].line)
                index += 1
                counts[kind, default: 0] += 1
                switch kind {
                case .presented, .partial:
                    vsync = .presented
                case .draw where !reporters:
                    vsync = .presented
                case .dropped:
                    if vsync != .presented { vsync = .dropped }
                case .droppedInstant where !reporters:
                    if vsync != .presented { vsync = .dropped }
                case .idle:
                    if vsync == nil { vsync = .idle }
                case .stopped:
                    if vsync == nil { vsync = .stopped }
                default:
                    break
                }
            }
            switch vsync {
            case .presented?:
                try handle(.tick(FrameTick(timestamp: time, targetTimestamp: nil)), line)
                paused = false
            case .dropped?:
                try handle(.missed, line)
            case .idle?, .stopped?:
                if !paused { try handle(.idle, line) }
                paused = true
            default:
                break
            }
        }
        let lastLine = Int(events.last?.line ?? 1)
        func figure(_ label: String, _ kinds: [Kind], _ metrics: [Metric]) throws(TraceError) {
            let value = kinds.reduce(0) { $0 + (counts[$1] ?? 0) }
            try handle(.toolFigure(ToolFigure(tool: "Chrome", label: label, value: Double(value), unit: "frames", metrics: metrics)), lastLine)
        }
        if reporters {
            try figure("Presented (PipelineReporter)", [.presented, .partial], [.frames])
            try figure("of which partly presented", [.partial], [])
            try figure("Dropped (PipelineReporter)", [.dropped], [.droppedFrames])
            try figure("No update desired", [.idle], [])
        } else {
            try figure("DrawFrame", [.draw], [.frames])
            try figure("DroppedFrame", [.droppedInstant], [.droppedFrames])
        }
    }

    /// What a process is, by the name Chrome gives it (`process_name` metadata): the
    /// browser's own UI and the GPU process are system sources, so a page's renderer is read
    /// by default even when the browser drew more frames (its tab strip animating).
    static func role(of name: String) -> TraceSource.Role {
        switch name {
        case "Browser": .system("the browser's own UI")
        case "GPU Process": .system("the GPU process")
        default: .application
        }
    }

    /// The median interval between the process's vsyncs (reporters' and `BeginFrame`
    /// times, 0.5 ms to 100 ms apart), snapped to a common rate, in Hz; nil without one.
    static func refreshRate(_ events: [Record]) -> Double? {
        var intervals: [Double] = []
        var previous: Double?
        for event in events where event.kind != .draw && event.kind != .droppedInstant && event.kind != .stopped {
            if let previous, (0.0005...0.1).contains(event.time - previous) { intervals.append(event.time - previous) }
            if previous != event.time { previous = event.time }
        }
        return RefreshRateInference.snappedMedian(of: intervals).map { 1 / $0 }
    }

    private func refuse(_ line: Int, _ message: String) -> TraceError {
        TraceError(kind: .data, file: file, line: line, message: message)
    }
}
