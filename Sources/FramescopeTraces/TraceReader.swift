import FramescopeCore

/// Reads a trace of any supported format, detecting the format from its content.
///
/// ```swift
/// var source = try FileByteSource(path: "scroll.csv")
/// try TraceReader(file: "scroll.csv").read(from: &source) { event in … }
/// ```
public struct TraceReader: Sendable {
    /// The path or name used in error messages.
    public let file: String

    /// A reader whose errors name `file`.
    public init(file: String) {
        self.file = file
    }

    /// Reads every event of the trace in `source`, in order.
    /// - Parameters:
    ///   - format: The format, or `nil` to detect it from the first bytes.
    ///   - progress: Called with the number of bytes read so far, once per chunk.
    ///   - note: Called with what a person should know about the reading that is not an
    ///     error (rows without data that were skipped, with how many).
    ///   - handle: Called for each event with the 1-based line it starts on; an error it throws stops the read.
    /// - Throws: ``TraceError`` for unreadable or malformed input.
    public func read<Source: ByteSource>(
        from source: inout Source,
        format: TraceFormat? = nil,
        progress: (Int) -> Void = { _ in },
        note: (String) -> Void = { _ in },
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        try read(from: &source, format: format, progress: progress, note: note, resolved: { _ in }, handle)
    }

    /// ``read(from:format:progress:note:_:)``, telling `resolved` the format read (given or
    /// detected) before the first event.
    func read<Source: ByteSource>(
        from source: inout Source,
        format: TraceFormat?,
        progress: (Int) -> Void,
        note: (String) -> Void,
        resolved announce: (TraceFormat) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var peeking = LookaheadSource(base: source)
        let resolved: TraceFormat
        if let format { resolved = format } else { resolved = TraceFormat.detect(prefix: try peeking.peek(4096)) }
        announce(resolved)
        // The readers run on one concrete source type, read through a function per chunk,
        // so that they and the JSON lexer are specialized once in this module rather than
        // run as generic code per byte for whatever source the caller has (measured: the
        // Chrome reader went from 65 to 230–280 MB/s; docs/benchmarks.md).
        let box = ByteSourceBox(peeking)
        var through = FunctionByteSource { (buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int in try box.source.read(into: buffer) }
        switch resolved {
        case .csv where format == nil:
            do throws(TraceError) {
                try CSVTraceReader(file: file).read(from: &through, progress: progress, handle)
            } catch where error.line == 1 && error.kind == .data {
                // Detection fell back to CSV and the first line is no CSV header either: say
                // what else was tried, rather than only that a column is unknown.
                var refused = error
                refused.message += "; no other format matched the first 4 KiB: \(Self.detectionRules); choose one with --input-format"
                throw refused
            }
        case .csv: try CSVTraceReader(file: file).read(from: &through, progress: progress, handle)
        case .json: try JSONTraceReader(file: file).read(from: &through, progress: progress, handle)
        case .xctrace:
            try XctraceReader(file: file).read(from: &through, progress: progress, note: note, handle)
        case .gfxinfo:
            try GfxinfoReader(file: file).read(from: &through, progress: progress, note: note, handle)
        case .chrome:
            try ChromeTraceReader(file: file).read(from: &through, progress: progress, note: note, handle)
        case .presentMon:
            try PresentMonReader(file: file).read(from: &through, progress: progress, note: note, handle)
        case .metricKit:
            try MetricKitReader(file: file).read(from: &through, progress: progress, note: note, handle)
        case .surfaceFlingerLatency:
            try SurfaceFlingerLatencyReader(file: file).read(from: &through, progress: progress, note: note, handle)
        }
        source = box.source.base
    }

    /// What detection looks for in each format, in the order it tries them, for the error
    /// of a file none matched.
    static let detectionRules = [
        "not gfxinfo (no 'Graphics info for pid' or dumpsys banner)",
        "not xctrace (no '<trace-query-result')",
        "not SurfaceFlinger latency (line 1 is not one whole number)",
        "not PresentMon (line 1, after any '//key=value' lines, does not start 'Application,' and name ProcessID)",
        "not MetricKit or Chrome (no payload key, no 'traceEvents' and not a JSON list)",
        "not Framescope JSON (does not start with '{')",
    ].joined(separator: ", ")

    /// Reads a whole trace into an analyzer: the common case of `analyze` and `check`.
    ///
    /// `format` is the trace's format, or `nil` to detect it from the first bytes. A declared refresh rate applies to ticks without a target, unless
    /// `refreshRateOverride` (Hz) is given, which wins. Where neither is known, the rate
    /// is inferred from the ticks (``RefreshRateInference``: twenty steady intervals) and
    /// the report says so in ``RecordingReport/inferredRefreshRate``; the ticks before that
    /// wait and are measured with it. A tick whose timestamp is not a number is a rejected
    /// tick whatever else it lacks.
    ///
    /// A recording of several sources (``TraceEvent/source(_:)``: PresentMon's applications
    /// and swap chains, Chrome's renderers) is analyzed per source, and the report is that
    /// of the source `process` names (its application or process ID; among several
    /// matches, the one with the most ticks), or of the source with the most ticks; a note
    /// names the others.
    ///
    /// Other tools' recordings are measured as recorded display times
    /// (``TraceFormat/tickTiming``): their first interval counts, and a tick early for its
    /// vsync counts at its own length.
    /// - Throws: ``TraceError`` for unreadable input, or when ticks lack a target and no
    ///   rate is declared or can be inferred, or when `process` names no source of a
    ///   recording that has sources. An input cut short (``TraceError/truncated``)
    ///   carries the report of the events before the cut in ``TraceError/partialReport``.
    public func analyze<Source: ByteSource>(
        from source: inout Source,
        format: TraceFormat? = nil,
        configuration: AnalyzerConfiguration = AnalyzerConfiguration(),
        refreshRateOverride: Double? = nil,
        process: String? = nil,
        progress: (Int) -> Void = { _ in },
        note: (String) -> Void = { _ in }
    ) throws(TraceError) -> RecordingReport {
        var streams = SourceStreams(configuration: configuration, refreshRateOverride: refreshRateOverride, selector: process, file: file)
        do throws(TraceError) {
            try read(from: &source, format: format, progress: progress, note: note, resolved: { streams.timing = $0.tickTiming }) { (event: TraceEvent, line: Int) throws(TraceError) -> Void in
                try streams.take(event, line: line)
            }
        } catch {
            // A cut-short input (a gzip stream without its end): every event before the cut
            // was whole, so the report of them is attached for a caller that wants it.
            guard error.truncated else { throw error }
            var cut = error
            cut.partialReport = streams.partialReport()
            guard cut.partialReport != nil else { throw error }
            throw cut
        }
        return try streams.finish(note: note)
    }

    /// The refresh rate, in Hz, that frames known only by duration are measured at when
    /// neither the recording nor `--refresh-rate` gives one (said in a note).
    public static let assumedRefreshRate = 60.0

    /// Most events held while a refresh rate is inferred.
    static let maximumWaitingEvents = 100_000

    static func noRate(file: String, line: Int) -> TraceError {
        TraceError(kind: .data, file: file, line: line, message: "ticks have no targetTimestamp, the trace declares no refresh rate, and no \(RefreshRateInference.steadyIntervals) steady intervals show one; add a '# refreshRate=60' line or pass --refresh-rate")
    }
}
