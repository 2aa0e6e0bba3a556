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
/// is skipped as it is read, whatever its fields hold: only the fields of the events kept
/// are judged (``ChromeFrames/take(_:line:index:)``). These events are a small share of a
/// trace (a 1 GB trace holds some hundred thousand), so they are kept (at most
/// ``maximumRecords``) and sorted by time at the end, since a trace's events need not come
/// in order. Then each process is a source (``TraceEvent/source(_:)``) whose presented
/// frames are ticks (``ChromeFrames``).
struct ChromeTraceReader {
    let file: String

    /// The keys of an event that the reader reads, in ``readEvent(_:_:index:_:)``'s order.
    static let eventKeys: [StaticString] = ["name", "ph", "ts", "pid", "args"]
    /// The event names that matter to ``ChromeFrames``, in ``ChromeEvent/Name``'s order.
    static let eventNames: [StaticString] = ["PipelineReporter", "BeginFrame", "DrawFrame", "DroppedFrame", "NeedsBeginFrameChanged", "process_name"]
    /// The phases that matter to ``ChromeFrames``; any other reads as "".
    static let phases: [StaticString] = ["b", "B", "X", "M", "I", "i", "n", "e", "E"]
    /// The keys of `args` that the reader reads.
    static let argumentKeys: [StaticString] = ["chrome_frame_reporter", "frame_reporter", "data", "name", "frameSeqId"]
    /// The keys of `args.data` that the reader reads.
    static let dataKeys: [StaticString] = ["needsBeginFrame"]
    /// The keys of a frame reporter (`args.chrome_frame_reporter`) that the reader reads.
    static let reporterKeys: [StaticString] = ["state", "frame_type", "frame_sequence", "frame_source"]

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
        var index = 0
        while true {
            if bare, try lexer.atEnd(&source) { return }
            try readEvent(&lexer, &source, index: index, &frames)
            index += 1
            if lexer.totalRead != reported { reported = lexer.totalRead; progress(reported) }
            if bare, try lexer.atEnd(&source) { return }
            guard try lexer.separator(closing: UInt8(ascii: "]"), &source) else { return }
        }
    }

    /// Reads one event object, the `index`th of the list (from 0), keeping what
    /// ``ChromeFrames`` needs. Its fields are only read here; ``ChromeFrames`` judges them
    /// for the events it keeps, so an event about something else may hold anything.
    private func readEvent<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, index: Int, _ frames: inout ChromeFrames
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
                case 0: event.name = try name(&lexer, &source)
                case 1: event.phase = try phase(&lexer, &source)
                case 2: event.timestamp = try number(&lexer, &source, quoted: false)
                case 3: event.processID = try number(&lexer, &source, quoted: true)
                case 4: try readArguments(&lexer, &source, &event)
                default: try lexer.skipValue(&source)
                }
            } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        }
        try frames.take(event, line: line, index: index)
    }

    /// `args`: the frame reporter's fields, `data.needsBeginFrame`, a metadata event's name,
    /// and a `BeginFrame`'s `frameSeqId`.
    private func readArguments<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, _ event: inout ChromeEvent
    ) throws(TraceError) {
        guard try enterObject(&lexer, &source) else { return }
        repeat {
            let key = try lexer.matchString(&source, among: Self.argumentKeys)
            try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
            switch key {
            case 0, 1: try readReporter(&lexer, &source, &event)
            case 2:
                guard try enterObject(&lexer, &source) else { continue }
                repeat {
                    let key = try lexer.matchString(&source, among: Self.dataKeys)
                    try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                    if key == 0 { event.needsBeginFrame = try flag(&lexer, &source) } else { try lexer.skipValue(&source) }
                } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
            case 3: event.argumentName = try text(&lexer, &source, keeping: JSONStreamLexer<TraceError>.maximumStringBytes)
            case 4: event.sequence = try number(&lexer, &source, quoted: true)
            default: try lexer.skipValue(&source)
            }
        } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
    }

    /// `args.chrome_frame_reporter` (or `args.frame_reporter`): `state`, `frame_type`,
    /// `frame_sequence` and `frame_source`.
    private func readReporter<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, _ event: inout ChromeEvent
    ) throws(TraceError) {
        guard try enterObject(&lexer, &source) else { return }
        repeat {
            let key = try lexer.matchString(&source, among: Self.reporterKeys)
            try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
            switch key {
            case 0: event.state = try text(&lexer, &source, keeping: 64)
            case 1: event.frameType = try text(&lexer, &source, keeping: 64)
            case 2: event.sequence = try number(&lexer, &source, quoted: true)
            case 3: event.frameSource = try number(&lexer, &source, quoted: true)
            default: try lexer.skipValue(&source)
            }
        } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
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
