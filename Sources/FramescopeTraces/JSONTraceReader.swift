import FramescopeCore
import FramescopeJSON

/// Reads Framescope's JSON trace format as a stream, in constant memory:
///
/// ```json
/// {"refreshRate": 60, "ticks": [{"timestamp": 1.0, "targetTimestamp": 1.0167, "segment": "scroll 1"}, …]}
/// ```
///
/// `refreshRate` (Hz) must come before `ticks` to apply to ticks without a target.
/// `targetTimestamp` and `segment` may be missing or `null`. Keys the format does
/// not define are skipped, so newer writers stay readable. Any syntax error stops the
/// read with a ``TraceError`` naming the line.
struct JSONTraceReader {
    let file: String

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        let file = file
        var lexer = JSONStreamLexer<TraceError> { message, line in TraceError(kind: .data, file: file, line: line, message: message) }
        defer { lexer.deallocate() }
        try lexer.skipByteOrderMark(&source)
        try lexer.expect(UInt8(ascii: "{"), &source, "a JSON object")
        var sawTicks = false
        var currentSegment: String? = nil
        if try !lexer.consumeIf(UInt8(ascii: "}"), &source) {
            repeat {
                let key = try lexer.string(&source)
                try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                switch key {
                case "refreshRate":
                    if try !lexer.null(&source) {
                        let rate = try lexer.number(&source, parse: parseDouble)
                        guard rate.isFinite, rate > 0 else {
                            throw lexer.error("refreshRate \(rate) must be a positive number of Hz")
                        }
                        try handle(.refreshRate(rate), lexer.line)
                    }
                case "ticks":
                    sawTicks = true
                    try lexer.expect(UInt8(ascii: "["), &source, "'[' to start the list of ticks")
                    if try !lexer.consumeIf(UInt8(ascii: "]"), &source) {
                        var reported = 0
                        repeat {
                            try readTick(&lexer, &source, &currentSegment, handle)
                            if lexer.totalRead != reported { reported = lexer.totalRead; progress(reported) }
                        } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
                    }
                default:
                    try lexer.skipValue(&source)
                }
            } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        }
        guard try lexer.atEnd(&source) else { throw lexer.error("unexpected content after the trace object") }
        guard sawTicks else { throw lexer.error("no \"ticks\" list in the trace object") }
    }


    private func readTick<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, _ currentSegment: inout String?,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        try lexer.expect(UInt8(ascii: "{"), &source, "'{' to start a tick")
        let line = lexer.line
        var timestamp: Double?
        var target: Double?
        var segment: String?
        if try !lexer.consumeIf(UInt8(ascii: "}"), &source) {
            repeat {
                let key = try lexer.string(&source)
                try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
                switch key {
                case "timestamp":
                    timestamp = try lexer.number(&source, parse: parseDouble)
                case "targetTimestamp":
                    target = try lexer.null(&source) ? nil : try lexer.number(&source, parse: parseDouble)
                case "segment":
                    segment = try lexer.null(&source) ? nil : try lexer.string(&source)
                    if segment == "" { segment = nil }
                default:
                    try lexer.skipValue(&source)
                }
            } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
        }
        guard let timestamp else {
            throw TraceError(kind: .data, file: file, line: line, message: "tick has no \"timestamp\"")
        }
        if let target, timestamp.isFinite, target.isFinite, target <= timestamp {
            throw TraceError(kind: .data, file: file, line: line, message: "targetTimestamp \(target) is not after timestamp \(timestamp): the refresh interval would be negative or zero")
        }
        if segment != currentSegment {
            currentSegment = segment
            try handle(.segment(segment), line)
        }
        try handle(.tick(FrameTick(timestamp: timestamp, targetTimestamp: target)), line)
    }
}
