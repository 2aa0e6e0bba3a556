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
    ///   - handle: Called for each event with the 1-based line it starts on; an error it throws stops the read.
    /// - Throws: ``TraceError`` for unreadable or malformed input.
    public func read<Source: ByteSource>(
        from source: inout Source,
        format: TraceFormat? = nil,
        progress: (Int) -> Void = { _ in },
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var peeking = PeekingSource(base: source)
        let resolved: TraceFormat
        if let format { resolved = format } else { resolved = try peeking.detectFormat() }
        switch resolved {
        case .csv: try CSVTraceReader(file: file).read(from: &peeking, progress: progress, handle)
        case .json: try JSONTraceReader(file: file).read(from: &peeking, progress: progress, handle)
        }
        source = peeking.base
    }

    /// Reads a whole trace into an analyzer: the common case of `analyze` and `check`.
    ///
    /// A declared refresh rate applies to ticks without a target, unless
    /// `refreshRateOverride` (Hz) is given, which wins.
    public func analyze<Source: ByteSource>(
        from source: inout Source,
        configuration: AnalyzerConfiguration = AnalyzerConfiguration(),
        refreshRateOverride: Double? = nil,
        progress: (Int) -> Void = { _ in }
    ) throws(TraceError) -> RecordingReport {
        var analyzer = FrameAnalyzer(configuration: configuration)
        var refreshInterval = refreshRateOverride.map { 1 / $0 } ?? configuration.refreshInterval
        try read(from: &source, progress: progress) { (event: TraceEvent, line: Int) throws(TraceError) -> Void in
            switch event {
            case let .refreshRate(hz):
                if refreshRateOverride == nil { refreshInterval = 1 / hz }
            case let .segment(label):
                if let label { analyzer.beginSegment(label) } else { analyzer.endSegment() }
            case let .tick(tick):
                if tick.targetTimestamp == nil && refreshInterval == nil {
                    throw TraceError(kind: .data, file: file, line: line, message: "tick has no targetTimestamp and the trace declares no refresh rate; add a '# refreshRate=60' line or pass --refresh-rate")
                }
                analyzer.recordTick(timestamp: tick.timestamp, targetTimestamp: tick.targetTimestamp, refreshInterval: refreshInterval)
            }
        }
        analyzer.endSegment()
        return analyzer.report()
    }
}

/// Lets the reader look at the first bytes to detect the format, then hands them on.
struct PeekingSource<Base: ByteSource>: ByteSource {
    var base: Base
    private var pending: [UInt8] = []

    init(base: Base) { self.base = base }

    mutating func detectFormat() throws(TraceError) -> TraceFormat {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 8)
        defer { storage.deallocate() }
        let count = try base.read(into: storage)
        pending = Array(storage[0..<count])
        return TraceFormat.detect(prefix: pending)
    }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TraceError) -> Int {
        if !pending.isEmpty {
            let count = min(buffer.count, pending.count)
            pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: count) }
            pending.removeFirst(count)
            return count
        }
        return try base.read(into: buffer)
    }
}
