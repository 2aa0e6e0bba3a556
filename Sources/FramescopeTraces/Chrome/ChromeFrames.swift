import FramescopeCore

/// The frame events of a Chrome trace, kept as they are read and turned into each
/// process's ticks at the end (docs/traces.md):
///
/// - every vsync a `PipelineReporter` slice began at is **presented** when one of its
///   reporters presented all or part of a frame, else **dropped** when one dropped a
///   frame, else **idle** (no update was wanted); a `BACKFILL` reporter counts at the vsync
///   of its `frame_sequence`, whatever its `ts` (``placeBackfills(_:)``);
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

        /// Whether the event is a `PipelineReporter` slice.
        var isReporter: Bool { self == .presented || self == .partial || self == .dropped || self == .idle }
    }

    /// What a reporter's `frame_type` says, and whether a reporter's `frame_sequence` or a
    /// `BeginFrame`'s `frameSeqId` was read.
    struct Flags: OptionSet {
        let rawValue: UInt8
        /// A reporter Chrome forked for the main thread's update (`frame_type: "FORKED"`).
        static let forked = Flags(rawValue: 1)
        /// A reporter for a vsync the compositor skipped, made when it began the next one
        /// (`frame_type: "BACKFILL"`).
        static let backfill = Flags(rawValue: 2)
        /// ``Record/sequence`` holds the event's `frame_sequence` (`frameSeqId`).
        static let sequenced = Flags(rawValue: 4)
    }

    /// One kept event, 24 bytes.
    struct Record {
        /// When the event began, s.
        var time: Double
        /// The event's process and, for a reporter, its `frame_source`: an index in `streams`.
        var stream: UInt32
        var line: Int32
        /// `frame_sequence` (`frameSeqId`), when ``Flags/sequenced``.
        var sequence: UInt32
        var kind: Kind
        var flags: Flags = []
    }

    /// A process and a begin-frame source in it: the sequence numbers of one stream count
    /// the same vsyncs.
    struct Stream: Hashable {
        var processID: Int
        var source: Int?
    }

    private var records: [Record] = []
    private var streams: [Stream] = []
    private var streamIndex: [Stream: UInt32] = [:]
    private var names: [Int: String] = [:]
    private var unknownStates = 0

    init(file: String) { self.file = file }

    /// Most process names kept.
    static let maximumNames = 10_000

    /// Keeps `event` (the `index`th of the list, from 0, on `line`) if it is about frames,
    /// after judging the fields it needs; refuses a frame event whose fields are wrong. An
    /// event about something else is returned from untouched, whatever its fields hold.
    mutating func take(_ event: ChromeEvent, line: Int, index: Int) throws(TraceError) {
        guard let name = event.name else { return }
        if name == .processName {
            if case .value("M")? = event.phase, case let .value(pid)? = event.processID, let pid = Self.wholeNumber(pid),
               let label = event.argumentName, names.count < Self.maximumNames {
                names[pid] = String(label.prefix(120)).printable()
            }
            return
        }
        let file = file
        let problem = { (message: String) in TraceError(kind: .data, file: file, line: line, message: "event \(index) (\(name.spelling))\(message)") }
        let kind: Kind
        switch name {
        case .pipelineReporter:
            switch event.phase {
            case let .unreadable(found)?: throw problem(": ph is \(found), not a phase such as \"b\"")
            case .value("b")?, .value("B")?, .value("X")?: break
            default: return
            }
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
        let pid: Int
        switch event.processID {
        case nil: throw problem(" has no pid")
        case let .unreadable(found)?: throw problem(": pid is \(found), not a whole number")
        case let .value(value)?:
            guard let whole = Self.wholeNumber(value) else { throw problem(": pid \(ChromeTraceReader.describe(value)) is not a whole number") }
            pid = whole
        }
        let ts: Double
        switch event.timestamp {
        case nil: throw problem(" has no ts")
        case let .unreadable(found)?: throw problem(": ts is \(found), not a number of µs")
        // Physics first: µs since some boot, within ±300 years.
        case let .value(value)?:
            guard value.isFinite, abs(value) < 1e16 else { throw problem(": ts \(ChromeTraceReader.describe(value)) is not a time in µs") }
            ts = value
        }
        var flags: Flags = event.frameType == "FORKED" ? .forked : event.frameType == "BACKFILL" ? .backfill : []
        var source: Int?
        var sequence: UInt32 = 0
        if kind.isReporter, let field = event.frameSource { source = try reporterNumber(field, "frame_source", problem) }
        if kind.isReporter || kind == .begin, let field = event.sequence {
            if let value = UInt32(exactly: try reporterNumber(field, kind == .begin ? "frameSeqId" : "frame_sequence", problem)) {
                // Chrome counts a source's vsyncs from 1: 2^32 of them take two years at 60 Hz.
                // A sequence beyond that is not read, and the reporter stays at its ts.
                sequence = value
                flags.insert(.sequenced)
            }
        }
        guard records.count < ChromeTraceReader.maximumRecords else {
            throw TraceError(kind: .data, file: file, line: line, message: "more than \(ChromeTraceReader.maximumRecords) frame events; split the trace")
        }
        let stream = streamNumber(Stream(processID: pid, source: source))
        records.append(Record(time: ts / 1e6, stream: stream, line: Int32(clamping: line), sequence: sequence, kind: kind, flags: flags))
    }

    /// A reporter's `frame_sequence` or `frame_source`, or a `BeginFrame`'s `frameSeqId`: a
    /// whole number of 0 or more.
    private func reporterNumber(_ field: ChromeEvent.Field<Double>, _ key: String, _ problem: (String) -> TraceError) throws(TraceError) -> Int {
        switch field {
        case let .unreadable(found): throw problem(": \(key) is \(found), not a whole number")
        case let .value(value):
            guard let whole = Self.wholeNumber(value), whole >= 0 else {
                throw problem(": \(key) \(ChromeTraceReader.describe(value)) is not a whole number of 0 or more")
            }
            return whole
        }
    }

    /// `value` when it is a whole number a process ID or a sequence can be (below 10^15).
    static func wholeNumber(_ value: Double) -> Int? {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? Int(value) : nil
    }

    /// The index of `stream` in `streams`, added when new.
    private mutating func streamNumber(_ stream: Stream) -> UInt32 {
        if let number = streamIndex[stream] { return number }
        let number = UInt32(streams.count)
        streams.append(stream)
        streamIndex[stream] = number
        return number
    }

    /// Hands on each process's events in time order, and its counts as Chrome's figures.
    mutating func finish(note: (String) -> Void, _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        let streams = streams
        let framed = Set(records.lazy.filter { $0.kind != .begin && $0.kind != .stopped }.map { streams[Int($0.stream)].processID })
        guard !framed.isEmpty else {
            throw TraceError(kind: .data, file: file, message: "has no frame events (PipelineReporter, DrawFrame or DroppedFrame); record with the categories 'cc' and 'disabled-by-default-devtools.timeline.frame'")
        }
        if unknownStates > 0 {
            note("skipped \(unknownStates) PipelineReporter slice\(unknownStates == 1 ? "" : "s") in a state Framescope does not know")
        }
        var byProcess: [Int: [Record]] = [:]
        for record in records {
            let pid = streams[Int(record.stream)].processID
            if framed.contains(pid) { byProcess[pid, default: []].append(record) }
        }
        records = []
        for pid in byProcess.keys.sorted() {
            guard var events = byProcess[pid] else { continue }
            Self.placeBackfills(&events)
            events.sort { ($0.time, $0.line) < ($1.time, $1.line) }
            try emit(pid, events, handle)
        }
    }

    /// One vsync of a process: what its events at one time say, strongest first
    /// (presented, dropped, idle, a stop), or only that a `BeginFrame` came (`nil`).
    private struct Vsync {
        var time: Double
        var line: Int
        var kind: Kind?
        var begins = false
    }

    /// How many refreshes apart two vsyncs that wanted a frame may be, with idle vsyncs or
    /// stops between, and still be content at a lower cadence: a quarter of the refresh rate
    /// (15 fps at 60 Hz, 30 fps at 120 Hz), half a refresh allowed for jitter. A page that
    /// draws every other vsync (60 fps content on a 120 Hz display, a 30 fps video or timer)
    /// leaves idle vsyncs, and even stops (`needsBeginFrame` 0 for one vsync, recorded from a
    /// `setInterval` page), between its frames; a longer spell is a page with nothing to draw.
    static let slowestCadenceRefreshes = 4.5

    private func emit(_ pid: Int, _ events: [Record], _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        let firstLine = Int(events.first?.line ?? 1)
        // Without BeginFrame events to give the cadence, the median interval between frames
        // stands for it (a page draws in bursts, so twenty steady intervals may never come).
        let name = names[pid] ?? "pid \(pid)"
        try handle(.source(TraceSource(application: name, processID: pid, variableCadence: true, role: Self.role(of: name))), firstLine)
        let hz = Self.refreshRate(events)
        if let hz { try handle(.refreshRate(hz), firstLine) }
        let reporters = events.contains { $0.kind.isReporter }
        let (vsyncs, counts) = Self.vsyncs(events, reporters: reporters)
        try measure(vsyncs, period: hz.map { 1 / $0 }, reporters: reporters, handle)
        if let first = vsyncs.first(where: { $0.kind != .stopped }), let last = vsyncs.last(where: { $0.kind != .stopped }), last.time > first.time {
            try handle(.span(last.time - first.time), last.line)
        }
        let lastLine = Int(events.last?.line ?? 1)
        func figure(_ label: String, _ value: Int, unit: String, _ metrics: [Metric]) throws(TraceError) {
            try handle(.toolFigure(ToolFigure(tool: "Chrome", label: label, value: Double(value), unit: unit, metrics: metrics)), lastLine)
        }
        func vsyncCount(_ kind: Kind) -> Int { vsyncs.reduce(0) { $0 + ($1.kind == kind ? 1 : 0) } }
        if reporters {
            // One frame per vsync: a vsync may carry two reporters (the compositor's and a
            // forked one for the main thread's update), which Chrome counts apart.
            try figure("Presented frames (vsyncs)", vsyncCount(.presented), unit: "frames", [.frames])
            try figure("Dropped frames (vsyncs)", vsyncCount(.dropped), unit: "frames", [.droppedFrames])
            try figure("No update desired (vsyncs)", vsyncCount(.idle), unit: "frames", [])
            try figure("Presented (PipelineReporter)", counts.presented, unit: "reporters", [])
            try figure("of which partly presented", counts.partial, unit: "reporters", [])
            try figure("Dropped (PipelineReporter)", counts.dropped, unit: "reporters", [])
            try figure("No update desired (PipelineReporter)", counts.idle, unit: "reporters", [])
            try figure("of which forked (main thread)", counts.forked, unit: "reporters", [])
        } else {
            try figure("DrawFrame", counts.draw, unit: "frames", [.frames])
            try figure("DroppedFrame", counts.droppedInstant, unit: "frames", [.droppedFrames])
        }
    }

    /// What reporters and instants a process has, by kind.
    private struct Counts {
        var presented = 0, partial = 0, dropped = 0, idle = 0, forked = 0, draw = 0, droppedInstant = 0
    }

    /// The process's events grouped by time into vsyncs, each with its strongest kind, and
    /// the counts of its events.
    private static func vsyncs(_ events: [Record], reporters: Bool) -> ([Vsync], Counts) {
        var vsyncs: [Vsync] = []
        var counts = Counts()
        var index = 0
        while index < events.count {
            let time = events[index].time
            var vsync = Vsync(time: time, line: Int(events[index].line), kind: nil)
            while index < events.count, events[index].time == time {
                let event = events[index]
                vsync.line = Int(event.line)
                index += 1
                if event.flags.contains(.forked) { counts.forked += 1 }
                switch event.kind {
                case .presented, .partial:
                    if event.kind == .presented { counts.presented += 1 } else { counts.partial += 1; counts.presented += 1 }
                    vsync.kind = .presented
                case .draw:
                    counts.draw += 1
                    if !reporters { vsync.kind = .presented }
                case .dropped:
                    counts.dropped += 1
                    if vsync.kind != .presented { vsync.kind = .dropped }
                case .droppedInstant:
                    counts.droppedInstant += 1
                    if !reporters, vsync.kind != .presented { vsync.kind = .dropped }
                case .idle:
                    counts.idle += 1
                    if vsync.kind == nil || vsync.kind == .stopped { vsync.kind = .idle }
                case .stopped:
                    if vsync.kind == nil { vsync.kind = .stopped }
                case .begin:
                    vsync.begins = true
                }
            }
            // Instants of a trace with reporters (DroppedFrame, DrawFrame) mark no vsync.
            if vsync.kind != nil || vsync.begins { vsyncs.append(vsync) }
        }
        return (vsyncs, counts)
    }

    /// Turns vsyncs into ticks (docs/traces.md, "Idle is not a drop"):
    ///
    /// - a presented vsync is a tick; a dropped one makes none (the gap shows the drop) and
    ///   is a ``TraceEvent/missed`` frame;
    /// - idle vsyncs and stops between a presented vsync and the next presented one are
    ///   content at a lower cadence when those are at most ``slowestCadenceRefreshes``
    ///   refreshes apart: the first tick's target is the second, so no frame is dropped;
    ///   idle vsyncs before a dropped vsync, a longer spell, or a spell without a
    ///   `BeginFrame` in a trace that has them, pause measuring (``TraceEvent/idle``);
    /// - a run of dropped vsyncs that an idle vsync ends closes with a tick at that vsync
    ///   (the page wanted nothing more, so the dropped frame was the last it owed);
    /// - after a pause (and at the start), measuring restarts at the first vsync that
    ///   wanted a frame: when it dropped, a tick one refresh before it starts the run, so
    ///   jank that ends an idle spell counts.
    private func measure(_ vsyncs: [Vsync], period: Double?, reporters: Bool,
                         _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        let wanting = vsyncs.indices.filter { vsyncs[$0].kind == .presented || vsyncs[$0].kind == .dropped }
        let hasBegins = vsyncs.contains { $0.kind == nil }
        var paused = true
        for (position, index) in wanting.enumerated() {
            let vsync = vsyncs[index]
            let next = position + 1 < wanting.count ? wanting[position + 1] : nil
            // What lies between this vsync and the next that wants a frame.
            var idle: Int?
            var begins = false
            for between in (index + 1)..<(next ?? vsyncs.count) {
                switch vsyncs[between].kind {
                case .idle?, .stopped?: if idle == nil { idle = between }
                case nil: begins = true
                default: break
                }
            }
            var cadence = false
            var pauses = idle != nil
            if let next, let period {
                let gap = vsyncs[next].time - vsync.time
                let short = gap <= Self.slowestCadenceRefreshes * period
                // Only a presented frame can be the next of a lower cadence: jank after a short
                // idle spell restarts the run at its first dropped vsync, so every drop counts.
                cadence = idle != nil && short && vsyncs[next].kind == .presented
                pauses = (idle != nil && !cadence) || (reporters && hasBegins && !begins && !short)
            }
            if vsync.kind == .presented {
                let target = cadence ? next.map { vsyncs[$0].time } : nil
                try handle(.tick(FrameTick(timestamp: vsync.time, targetTimestamp: target)), vsync.line)
            } else {
                if paused, let period {
                    // Jank right after idle: start one refresh before the first dropped vsync.
                    try handle(.runEdge(FrameTick(timestamp: vsync.time - period, targetTimestamp: vsync.time)), vsync.line)
                }
                try handle(.missed, vsync.line)
                if let period, index + 1 < vsyncs.count, vsyncs[index + 1].kind == .idle, vsyncs[index + 1].time - vsync.time <= 1.5 * period {
                    // The vsync right after the drop wanted nothing: the run ends there.
                    try handle(.runEdge(FrameTick(timestamp: vsyncs[index + 1].time, targetTimestamp: nil)), vsyncs[index + 1].line)
                }
            }
            paused = false
            if pauses {
                try handle(.idle, idle.map { vsyncs[$0].line } ?? vsync.line)
                paused = true
            }
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
}
