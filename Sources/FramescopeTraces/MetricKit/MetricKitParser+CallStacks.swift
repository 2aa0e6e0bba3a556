import FramescopeJSON

extension MetricKitParser {
    /// Most frames read of one call-stack tree; the rest are skipped.
    public static let maximumCallStackFrames = 10_000
    /// Deepest frame read of a call-stack tree; deeper callers are skipped.
    public static let maximumCallStackDepth = 256

    /// What reading one stack of a call-stack tree left out, for the issues that say so.
    struct CallStackCuts {
        /// Callers deeper than ``maximumCallStackDepth`` were skipped.
        var deeper = false
        /// Frames past ``maximumCallStackFrames`` were skipped.
        var frames = false
    }

    /// `callStackTree`: the roots of its thread-attributed stack (the thread that hung), or
    /// nil when it has none. At most ``maximumCallStackFrames`` frames, ``maximumCallStackDepth``
    /// deep: what lies past either is skipped unread, at any depth, and an issue naming the
    /// stack says it was cut; frames without a UUID, name or offset are left out with their
    /// callers (an issue naming the first).
    func readCallStackTree<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, into payload: inout MetricKitPayload
    ) throws(TraceError) -> [MetricKitCallStackFrame]? {
        var attributed: [MetricKitCallStackFrame]?
        var budget = Self.maximumCallStackFrames
        try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
            guard key == "callStacks" else { return try lexer.skipValue(&source, maximumDepth: .max) }
            try lexer.skipWhitespace(&source)
            guard try lexer.peekByte(&source) == UInt8(ascii: "[") else { return try lexer.skipValue(&source, maximumDepth: .max) }
            try lexer.expect(UInt8(ascii: "["), &source, "'['")
            if try lexer.consumeIf(UInt8(ascii: "]"), &source) { return }
            var index = 0
            repeat {
                let stackPath = "\(path).callStacks[\(index)]"
                index += 1
                var isAttributed = false
                var roots: [MetricKitCallStackFrame] = []
                var cuts = CallStackCuts()
                try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
                    switch key {
                    case "threadAttributed":
                        try lexer.skipWhitespace(&source)
                        if try lexer.peekByte(&source) == UInt8(ascii: "t") { try lexer.skipValue(&source, maximumDepth: .max); isAttributed = true }
                        else { try lexer.skipValue(&source, maximumDepth: .max) }
                    case "callStackRootFrames" where attributed == nil:
                        roots = try readFrames(&lexer, &source, path: stackPath + ".callStackRootFrames", budget: &budget,
                                               cuts: &cuts, into: &payload)
                    default:
                        try lexer.skipValue(&source, maximumDepth: .max)
                    }
                }
                if isAttributed && attributed == nil {
                    attributed = roots
                    // Said only of the stack that is kept: the others are read to find it.
                    if cuts.deeper {
                        issue(&payload, stackPath, lexer.line,
                              "callers deeper than \(Self.maximumCallStackDepth) frames are left out; the stack is kept to that depth")
                    }
                    if cuts.frames {
                        issue(&payload, stackPath, lexer.line,
                              "more than \(Self.maximumCallStackFrames) frames; the frames past them are left out")
                    }
                }
            } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
        }
        return attributed.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A list of frames being read: one `subFrames` (or the roots), with the frames read so far.
    private struct FrameList {
        /// Its path, for issues (`….callStackRootFrames`, `…[0].subFrames`).
        var path: String
        /// The index of its next element.
        var index = 0
        /// Its frames read so far, each with its callers.
        var frames: [MetricKitCallStackFrame] = []
    }

    /// A frame whose members are being read.
    private struct PartialFrame {
        var path: String
        var line: Int
        var uuid: String?
        var name: String?
        var offset: Double?
        var samples: Double?
        var callers: [MetricKitCallStackFrame] = []
    }

    /// Where the loop of ``readFrames(_:_:path:budget:cuts:into:)`` is.
    private enum FrameStep {
        /// At an element of the innermost open list.
        case element
        /// At a member of the innermost open frame.
        case member
        /// After a member of the innermost open frame.
        case afterMember
        /// After an element of the innermost open list.
        case afterElement
    }

    /// A list of frames (the roots), each with its callers, read to
    /// ``maximumCallStackDepth`` frames deep; a `subFrames` list deeper is skipped unread,
    /// whatever its depth, and noted in `cuts`.
    ///
    /// A loop over an explicit stack of open lists and frames, not a recursion: read as a
    /// recursion (four calls a level), a tree 256 frames deep overflowed the 512 KiB stack of
    /// a cooperative thread in a debug build (issue 43, item 4).
    private func readFrames<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, budget: inout Int,
        cuts: inout CallStackCuts, into payload: inout MetricKitPayload
    ) throws(TraceError) -> [MetricKitCallStackFrame] {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "[") else {
            try lexer.skipValue(&source, maximumDepth: .max)
            return []
        }
        try lexer.expect(UInt8(ascii: "["), &source, "'['")
        if try lexer.consumeIf(UInt8(ascii: "]"), &source) { return [] }
        // lists[d] is the list at depth d (its frames are the (d + 1)th frames of their
        // stacks); open[d] is the frame of lists[d] being read, whose callers are lists[d + 1].
        var lists = [FrameList(path: path)]
        var open: [PartialFrame] = []
        var step = FrameStep.element
        while true {
            switch step {
            case .element:
                let list = lists.count - 1
                let framePath = "\(lists[list].path)[\(lists[list].index)]"
                lists[list].index += 1
                step = .afterElement
                guard budget > 0 else {
                    cuts.frames = true
                    try lexer.skipValue(&source, maximumDepth: .max)
                    continue
                }
                budget -= 1
                let frame = PartialFrame(path: framePath, line: lexer.line)
                try lexer.skipWhitespace(&source)
                guard try lexer.peekByte(&source) == UInt8(ascii: "{") else {
                    // Not an object: a frame without its fields.
                    try lexer.skipValue(&source, maximumDepth: .max)
                    finish(frame, into: &lists[list], &payload)
                    continue
                }
                try lexer.expect(UInt8(ascii: "{"), &source, "'{'")
                if try lexer.consumeIf(UInt8(ascii: "}"), &source) {
                    finish(frame, into: &lists[list], &payload)
                    continue
                }
                open.append(frame)
                step = .member
            case .member:
                let current = open.count - 1
                let key = try lexer.string(&source)
                try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                let field = open[current].path + "." + key
                step = .afterMember
                switch key {
                case "binaryUUID": open[current].uuid = try optionalString(&lexer, &source, &payload, field)
                case "binaryName": open[current].name = try optionalString(&lexer, &source, &payload, field)
                case "offsetIntoBinaryTextSegment", "sampleCount":
                    try lexer.skipWhitespace(&source)
                    if try lexer.peekByte(&source) == UInt8(ascii: "\"") {
                        try lexer.skipValue(&source, maximumDepth: .max)
                    } else if try !lexer.null(&source) {
                        let value = try lexer.number(&source, parse: parseDouble)
                        if key == "sampleCount" { open[current].samples = value } else { open[current].offset = value }
                    }
                case "subFrames":
                    open[current].callers = []
                    try lexer.skipWhitespace(&source)
                    guard try lexer.peekByte(&source) == UInt8(ascii: "[") else {
                        try lexer.skipValue(&source, maximumDepth: .max)
                        continue
                    }
                    try lexer.expect(UInt8(ascii: "["), &source, "'['")
                    if try lexer.consumeIf(UInt8(ascii: "]"), &source) { continue }
                    guard lists.count < Self.maximumCallStackDepth else {
                        cuts.deeper = true
                        repeat { try lexer.skipValue(&source, maximumDepth: .max) } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
                        continue
                    }
                    lists.append(FrameList(path: field))
                    step = .element
                default:
                    try lexer.skipValue(&source, maximumDepth: .max)
                }
            case .afterMember:
                if try lexer.separator(closing: UInt8(ascii: "}"), &source) {
                    step = .member
                    continue
                }
                finish(open.removeLast(), into: &lists[lists.count - 1], &payload)
                step = .afterElement
            case .afterElement:
                if try lexer.separator(closing: UInt8(ascii: "]"), &source) {
                    step = .element
                    continue
                }
                let done = lists.removeLast()
                guard !lists.isEmpty else { return done.frames }
                // That list was the callers of the innermost open frame, whose members go on.
                open[open.count - 1].callers = done.frames
                step = .afterMember
            }
        }
    }

    /// Appends `frame` to `list` when it has a UUID, a name and a whole offset below 4 GiB;
    /// otherwise it is left out with its callers, and an issue names it.
    private func finish(_ frame: PartialFrame, into list: inout FrameList, _ payload: inout MetricKitPayload) {
        guard let uuid = frame.uuid, let name = frame.name, let offset = frame.offset, offset >= 0, offset < 4_294_967_296,
              offset == offset.rounded() else {
            issue(&payload, frame.path, frame.line,
                  "a frame needs binaryUUID, binaryName and a whole offsetIntoBinaryTextSegment; left out with its callers")
            return
        }
        let count = frame.samples.flatMap { $0 >= 0 && $0 <= 1e9 && $0 == $0.rounded() ? Int($0) : nil } ?? 1
        list.frames.append(MetricKitCallStackFrame(binaryUUID: uuid, binaryName: name, offset: UInt64(offset), sampleCount: count,
                                                   subFrames: frame.callers))
    }
}
