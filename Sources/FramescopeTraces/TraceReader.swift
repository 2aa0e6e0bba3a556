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
        var peeking = LookaheadSource(base: source)
        let resolved: TraceFormat
        if let format { resolved = format } else { resolved = TraceFormat.detect(prefix: try peeking.peek(512)) }
        switch resolved {
        case .csv: try CSVTraceReader(file: file).read(from: &peeking, progress: progress, handle)
        case .json: try JSONTraceReader(file: file).read(from: &peeking, progress: progress, handle)
        case .xctrace:
            try XctraceReader(file: file).read(from: &peeking, progress: progress, note: note, handle)
        case .gfxinfo:
            try GfxinfoReader(file: file).read(from: &peeking, progress: progress, note: note, handle)
        case .surfaceFlingerLatency:
            try SurfaceFlingerLatencyReader(file: file).read(from: &peeking, progress: progress, note: note, handle)
        }
        source = peeking.base
    }

    /// Reads a whole trace into an analyzer: the common case of `analyze` and `check`.
    ///
    /// `format` is the trace's format, or `nil` to detect it from the first bytes. A declared refresh rate applies to ticks without a target, unless
    /// `refreshRateOverride` (Hz) is given, which wins. Where neither is known, the rate
    /// is inferred from the ticks (``RefreshRateInference``: twenty steady intervals) and
    /// the report says so in ``RecordingReport/inferredRefreshRate``; the ticks before that
    /// wait and are measured with it. A tick whose timestamp is not a number is a rejected
    /// tick whatever else it lacks.
    /// - Throws: ``TraceError`` for unreadable input, or when ticks lack a target and no
    ///   rate is declared or can be inferred. An input cut short (``TraceError/truncated``)
    ///   carries the report of the events before the cut in ``TraceError/partialReport``.
    public func analyze<Source: ByteSource>(
        from source: inout Source,
        format: TraceFormat? = nil,
        configuration: AnalyzerConfiguration = AnalyzerConfiguration(),
        refreshRateOverride: Double? = nil,
        progress: (Int) -> Void = { _ in },
        note: (String) -> Void = { _ in }
    ) throws(TraceError) -> RecordingReport {
        var analyzer = FrameAnalyzer(configuration: configuration)
        var refreshInterval = refreshRateOverride.map { 1 / $0 } ?? configuration.refreshInterval
        var inference = RefreshRateInference()
        var inferred: Double?
        // Events held while the rate is being inferred, with the line of the first tick.
        var waiting: [TraceEvent] = []
        var firstWaitingLine = 0
        var toolFigures: [ToolFigure] = []
        // Frames known only by duration need an interval; without one, 60 Hz, said once.
        func knownInterval() -> Double {
            if let refreshInterval { return refreshInterval }
            refreshInterval = 1 / Self.assumedRefreshRate
            note("the recording does not say the display's refresh rate: frames measured at \(Int(Self.assumedRefreshRate)) Hz (pass --refresh-rate to set it)")
            return 1 / Self.assumedRefreshRate
        }
        func apply(_ event: TraceEvent) {
            switch event {
            case let .refreshRate(hz):
                if refreshRateOverride == nil { refreshInterval = 1 / hz }
            case let .segment(label):
                if let label { analyzer.beginSegment(label) } else { analyzer.endSegment() }
            case let .tick(tick):
                analyzer.recordTick(timestamp: tick.timestamp, targetTimestamp: tick.targetTimestamp, refreshInterval: refreshInterval)
            case let .frames(duration, count):
                analyzer.recordFrames(duration: duration, count: count, refreshInterval: knownInterval())
            case let .hitches(lateness, count):
                let interval = knownInterval()
                analyzer.recordFrames(duration: interval + lateness, count: count, refreshInterval: interval)
            case let .toolFigure(figure):
                toolFigures.append(figure)
            }
        }
        func flushWaiting() {
            let held = waiting
            waiting = []
            for event in held { apply(event) }
        }
        do throws(TraceError) {
            try read(from: &source, format: format, progress: progress, note: note) { (event: TraceEvent, line: Int) throws(TraceError) -> Void in
                if case let .refreshRate(hz) = event, refreshRateOverride == nil {
                    refreshInterval = 1 / hz
                    flushWaiting()
                    return
                }
                guard case let .tick(tick) = event, tick.targetTimestamp == nil, refreshInterval == nil, tick.timestamp.isFinite else {
                    if waiting.isEmpty { apply(event) } else { waiting.append(event) }
                    return
                }
                if waiting.isEmpty { firstWaitingLine = line }
                waiting.append(event)
                if let interval = inference.add(tick.timestamp) {
                    refreshInterval = interval
                    inferred = 1 / interval
                    flushWaiting()
                } else if waiting.count > Self.maximumWaitingEvents {
                    throw Self.noRate(file: file, line: firstWaitingLine)
                }
            }
        } catch {
            // A cut-short input (a gzip stream without its end): every event before the cut
            // was whole, so the report of them is attached for a caller that wants it.
            guard error.truncated, waiting.isEmpty else { throw error }
            var cut = error
            analyzer.endSegment()
            var report = analyzer.report()
            report.inferredRefreshRate = inferred
            report.toolFigures = toolFigures
            cut.partialReport = report
            throw cut
        }
        if !waiting.isEmpty { throw Self.noRate(file: file, line: firstWaitingLine) }
        analyzer.endSegment()
        var report = analyzer.report()
        report.inferredRefreshRate = inferred
        report.toolFigures = toolFigures
        return report
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
