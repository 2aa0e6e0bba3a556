import FramescopeCore
import FramescopeJSON

/// Reads a Chrome or Perfetto JSON trace (the Trace Event Format: `{"traceEvents": […]}`
/// or a bare list, which may lack its closing `]`) as a stream.
///
/// Framescope keeps, per process, the events that say what each vsync did: the
/// compositor's `PipelineReporter` slices (`args.chrome_frame_reporter.state`: presented,
/// partly presented, dropped, or no update wanted), `DrawFrame` and `DroppedFrame` for
/// traces without them, `BeginFrame` for the display's cadence and
/// `NeedsBeginFrameChanged` for when the page stopped asking for frames; everything else
/// is skipped as it is read. These events are a small share of a trace (a 1 GB trace holds
/// some hundred thousand), so they are kept (at most ``maximumRecords``) and sorted by time
/// at the end, since a trace's events need not come in order. Then each process is a
/// source (``TraceEvent/source(_:)``) whose presented frames are ticks
/// (``ChromeFrames``).
struct ChromeTraceReader {
    let file: String

    /// The keys of an event that the reader reads, in ``readEvent(_:_:_:)``'s order.
    static let eventKeys: [StaticString] = ["name", "ph", "ts", "pid", "args"]
    /// The event names that matter to ``ChromeFrames``, in ``ChromeEvent/Name``'s order.
    static let eventNames: [StaticString] = ["PipelineReporter", "BeginFrame", "DrawFrame", "DroppedFrame", "NeedsBeginFrameChanged", "process_name"]
    /// The phases that matter to ``ChromeFrames``; any other reads as "".
    static let phases: [StaticString] = ["b", "B", "X", "M", "I", "i", "n", "e", "E"]
    /// The keys of `args` that the reader reads.
    static let argumentKeys: [StaticString] = ["chrome_frame_reporter", "frame_reporter", "data", "name"]

    /// Most frame events kept (24 bytes each).
    static let maximumRecords = 4_000_000

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        note: (String) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        let file = file
        var lexer = JSONStreamLexer<TraceError> { message, line in TraceError(kind: .data, file: file, line: line, message: message) }
        defer { lexer.deallocate() }
        var frames = ChromeFrames(file: file)
        try lexer.skipByteOrderMark(&source)
        try lexer.skipWhitespace(&source)
        if try lexer.peekByte(&source) == UInt8(ascii: "[") {
            try readEvents(&lexer, &source, bare: true, &frames, progress)
        } else {
            try lexer.expect(UInt8(ascii: "{"), &source, "a JSON object or list of trace events")
            var sawEvents = false
            if try !lexer.consumeIf(UInt8(ascii: "}"), &source) {
                repeat {
                    let key = try lexer.string(&source)
                    try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                    if key == "traceEvents" {
                        sawEvents = true
                        try readEvents(&lexer, &source, bare: false, &frames, progress)
                    } else {
                        try lexer.skipValue(&source)
                    }
                } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
            }
            guard sawEvents else { throw lexer.error("no \"traceEvents\" list in the trace object") }
        }
        guard try lexer.atEnd(&source) else { throw lexer.error("unexpected content after the trace") }
        try frames.finish(note: note, handle)
    }

    /// Reads the list of events; `bare` (the JSON Array Format) may end without its `]`,
    /// even after a `,`.
    private func readEvents<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, bare: Bool,
        _ frames: inout ChromeFrames, _ progress: (Int) -> Void
    ) throws(TraceError) {
        try lexer.expect(UInt8(ascii: "["), &source, "'[' to start the list of trace events")
        if try lexer.consumeIf(UInt8(ascii: "]"), &source) { return }
        var reported = 0
        while true {
            if bare, try lexer.atEnd(&source) { return }
            try readEvent(&lexer, &source, &frames)
            if lexer.totalRead != reported { reported = lexer.totalRead; progress(reported) }
            if bare, try lexer.atEnd(&source) { return }
            guard try lexer.separator(closing: UInt8(ascii: "]"), &source) else { return }
        }
    }

    /// Reads one event object, keeping what ``ChromeFrames`` needs.
    private func readEvent<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, _ frames: inout ChromeFrames
    ) throws(TraceError) {
        try lexer.expect(UInt8(ascii: "{"), &source, "'{' to start a trace event")
        let line = lexer.line
        var event = ChromeEvent()
        if try !lexer.consumeIf(UInt8(ascii: "}"), &source) {
            repeat {
                // Keys and names are matched in the read buffer: most events are of kinds
                // the reader skips, and a String for each of their keys cost a third of the time.
                let key = try lexer.matchString(&source, among: Self.eventKeys)
                try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                switch key {
                case 0: event.name = try lexer.matchString(&source, among: Self.eventNames).flatMap(ChromeEvent.Name.init(rawValue:)) ?? .other
                case 1: event.phase = try lexer.matchString(&source, among: Self.phases).map { Self.phases[$0].description } ?? ""
                case 2: event.timestamp = try lexer.number(&source, parse: parseDouble)
                case 3: event.processID = try processID(&lexer, &source)
                case 4: try readArguments(&lexer, &source, &event)
                default: try lexer.skipValue(&source)
                }
            } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        }
        try frames.take(event, line: line)
    }

    /// A process ID: a whole number, or a string of one (some writers quote it).
    private func processID<Source: ByteSource>(_ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source) throws(TraceError) -> Int? {
        try lexer.skipWhitespace(&source)
        let value: Double
        if try lexer.peekByte(&source) == UInt8(ascii: "\"") {
            guard let parsed = Double(try lexer.string(&source)) else { return nil }
            value = parsed
        } else {
            value = try lexer.number(&source, parse: parseDouble)
        }
        guard value.isFinite, value == value.rounded(), abs(value) < 1e15 else { throw lexer.error("pid \(value) is not a whole number") }
        return Int(value)
    }

    /// `args`: the frame reporter's state, `data.needsBeginFrame`, and a metadata event's name.
    private func readArguments<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, _ event: inout ChromeEvent
    ) throws(TraceError) {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "{") else { return try lexer.skipValue(&source) }
        try lexer.expect(UInt8(ascii: "{"), &source, "'{'")
        if try lexer.consumeIf(UInt8(ascii: "}"), &source) { return }
        repeat {
            let key = try lexer.matchString(&source, among: Self.argumentKeys)
            try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
            switch key {
            case 0, 1: (event.state, event.frameType) = try members("state", "frame_type", &lexer, &source)
            case 2: event.needsBeginFrame = try members("needsBeginFrame", nil, &lexer, &source).0
            case 3:
                try lexer.skipWhitespace(&source)
                if try lexer.peekByte(&source) == UInt8(ascii: "\"") { event.argumentName = try lexer.string(&source) } else { try lexer.skipValue(&source) }
            default: try lexer.skipValue(&source)
            }
        } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
    }

    /// The values of `wanted` and `also` in the object that comes next, as text (a string's
    /// content, or for a number or literal "0" when it is zero or false, else "1"); nil when
    /// missing or when the value is not an object.
    private func members<Source: ByteSource>(_ wanted: String, _ also: String?, _ lexer: inout JSONStreamLexer<TraceError>,
                                             _ source: inout Source) throws(TraceError) -> (String?, String?) {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "{") else { try lexer.skipValue(&source); return (nil, nil) }
        try lexer.expect(UInt8(ascii: "{"), &source, "'{'")
        if try lexer.consumeIf(UInt8(ascii: "}"), &source) { return (nil, nil) }
        var found: (String?, String?) = (nil, nil)
        repeat {
            let key = try lexer.string(&source)
            try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
            try lexer.skipWhitespace(&source)
            let next = try lexer.peekByte(&source)
            guard key == wanted || key == also else {
                try lexer.skipValue(&source)
                continue
            }
            var value: String?
            if next == UInt8(ascii: "\"") {
                value = String(try lexer.string(&source).prefix(64))
            } else if next == UInt8(ascii: "t") || next == UInt8(ascii: "f") {
                value = next == UInt8(ascii: "t") ? "1" : "0"
                try lexer.skipValue(&source)
            } else if let next, next &- 0x30 < 10 || next == UInt8(ascii: "-") {
                let number = try lexer.number(&source, parse: parseDouble)
                value = number == 0 ? "0" : "1"
            } else {
                try lexer.skipValue(&source)
            }
            if key == wanted { found.0 = value } else { found.1 = value }
        } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        return found
    }


    /// Whether `prefix` looks like a Chrome trace: a list of events, or an object whose
    /// first bytes name `"traceEvents"`.
    static func matches(prefix: some Collection<UInt8>) -> Bool {
        guard let first = prefix.first(where: { !JSONText.isWhitespace($0) && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }) else { return false }
        if first == UInt8(ascii: "[") { return true }
        guard first == UInt8(ascii: "{") else { return false }
        return String(decoding: prefix, as: UTF8.self).contains("\"traceEvents\"")
    }
}

/// What one trace event says that matters for frames.
struct ChromeEvent {
    /// The names ``ChromeFrames`` reads, by their position in
    /// ``ChromeTraceReader/eventNames``; every other name is ``other``.
    enum Name: Int {
        case pipelineReporter, beginFrame, drawFrame, droppedFrame, needsBeginFrameChanged, processName, other

        /// The name as a trace spells it, for messages.
        var spelling: String {
            rawValue < ChromeTraceReader.eventNames.count ? ChromeTraceReader.eventNames[rawValue].description : "other"
        }
    }

    var name: Name?
    var phase: String?
    var timestamp: Double?
    var processID: Int?
    /// `args.chrome_frame_reporter.state`.
    var state: String?
    /// `args.chrome_frame_reporter.frame_type` (`FORKED` for a main-thread reporter forked
    /// from the compositor's).
    var frameType: String?
    /// `args.data.needsBeginFrame`, as "0" or "1".
    var needsBeginFrame: String?
    /// `args.name`: a metadata event's process name.
    var argumentName: String?
}
