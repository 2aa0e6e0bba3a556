/// What one trace event says that may matter for frames, as ``ChromeTraceReader`` read it.
///
/// Nothing here is judged while the event is read: its name may come after its other keys
/// (Chrome writes `args` first), and an event that is not about frames is skipped whatever
/// its fields hold. ``ChromeFrames/take(_:line:index:)`` judges the fields of the events it
/// keeps.
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

    /// A field as the trace wrote it: a value of the type the reader expects, or what stood
    /// there instead (`null`, `'text'`, `an object`…), for the message should the event be
    /// one Framescope keeps.
    enum Field<Value> {
        case value(Value)
        case unreadable(String)
    }

    /// `name`; nil when missing, ``Name/other`` when not one of ours or not a string.
    var name: Name?
    /// `ph`: one of ``ChromeTraceReader/phases``, or "" for any other string.
    var phase: Field<String>?
    /// `ts`, µs.
    var timestamp: Field<Double>?
    /// `pid`: a number, or a string holding one (some writers quote it).
    var processID: Field<Double>?
    /// `args.chrome_frame_reporter.state` (or `args.frame_reporter.state`).
    var state: String?
    /// `…frame_type`: `FORKED` for a main-thread reporter forked from the compositor's,
    /// `BACKFILL` for a vsync the compositor skipped, reported later.
    var frameType: String?
    /// `…frame_sequence`, or a `BeginFrame`'s `args.frameSeqId`: the vsync's number in its
    /// `frame_source`'s sequence (a number, or a string holding one, as protobuf's JSON
    /// writes 64-bit numbers).
    var sequence: Field<Double>?
    /// `…frame_source`: the begin-frame source the sequence counts in.
    var frameSource: Field<Double>?
    /// `args.data.needsBeginFrame`, as "0" or "1".
    var needsBeginFrame: String?
    /// `args.name`: a metadata event's process name (nil when longer than 4,096 bytes as
    /// written: an event that is not metadata may hold a URL of any size there).
    var argumentName: String?
}
