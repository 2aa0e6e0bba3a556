import FramescopeCore

/// The analyses of a recording's sources (``TraceSource``), each apart, and the choice of
/// the one reported: the one the selector (`--process`) names, else the one with the most
/// ticks. A recording that names no source has one stream.
struct SourceStreams {
    private let configuration: AnalyzerConfiguration
    private let refreshRateOverride: Double?
    private let selector: String?
    private let file: String
    /// Streams in the order their sources first appeared; index 0 is the events before
    /// any source.
    private var streams: [StreamAnalysis]
    private var sources: [TraceSource?] = [nil]
    private var index: [TraceSource: Int] = [:]
    /// The stream events go to now, or `nil` while the selector rules the source out.
    private var current: Int? = 0
    /// Sources the selector ruled out, by name, to list when it names none.
    private var skipped: [String] = []

    /// Most sources analyzed at once; past it the recording must name one.
    static let maximumSources = 256

    init(configuration: AnalyzerConfiguration, refreshRateOverride: Double?, selector: String?, file: String) {
        self.configuration = configuration
        self.refreshRateOverride = refreshRateOverride
        self.selector = selector
        self.file = file
        streams = [StreamAnalysis(configuration: configuration, refreshRateOverride: refreshRateOverride, refreshInterval: configuration.refreshInterval, variableCadence: false)]
    }

    /// Routes the next event, read on `line`, to its source's stream.
    mutating func take(_ event: TraceEvent, line: Int) throws(TraceError) {
        guard case let .source(source) = event else {
            if let current { try streams[current].take(event, line: line, file: file) }
            return
        }
        if let known = index[source] {
            current = known
            return
        }
        if let selector, !source.matches(selector) {
            current = nil
            if skipped.count < Self.maximumSources, !skipped.contains(source.application) { skipped.append(source.application) }
            return
        }
        guard streams.count <= Self.maximumSources else {
            throw TraceError(kind: .data, file: file, line: line, message: "more than \(Self.maximumSources) applications or swap chains; choose one with --process NAME or --process PID")
        }
        // A rate declared before any source holds for every source.
        let stream = StreamAnalysis(configuration: configuration, refreshRateOverride: refreshRateOverride, refreshInterval: streams[0].refreshInterval, variableCadence: source.variableCadence)
        index[source] = streams.count
        current = streams.count
        streams.append(stream)
        sources.append(source)
    }

    /// The chosen stream's index: among sourced streams, the most ticks (the first on a
    /// tie); the unsourced stream when there are none.
    private var chosen: Int? {
        guard streams.count > 1 else { return selector != nil && !skipped.isEmpty ? nil : 0 }
        var best = 1
        for candidate in 2..<streams.count where streams[candidate].ticks > streams[best].ticks { best = candidate }
        return best
    }

    /// The chosen source's report, with notes on its analysis and on the sources left out.
    /// - Throws: ``TraceError`` when the selector names no source, or the chosen stream's
    ///   ticks wait for a rate that cannot be found.
    mutating func finish(note: (String) -> Void) throws(TraceError) -> RecordingReport {
        guard let chosen else {
            let listed = skipped.prefix(10).joined(separator: ", ")
            throw TraceError(kind: .data, file: file, message: "--process \(selector ?? "") names no application in the recording; it has \(listed)\(skipped.count > 10 ? ", …" : "")")
        }
        if let selector, sources.count == 1, skipped.isEmpty {
            note("--process \(selector) is ignored: the recording names no applications")
        }
        let report = try streams[chosen].finish(file: file)
        if let source = sources[chosen] {
            let others = (1..<streams.count).filter { $0 != chosen }.sorted { streams[$0].ticks > streams[$1].ticks }
            var line = "read \(source), \(streams[chosen].ticks) frame\(streams[chosen].ticks == 1 ? "" : "s")"
            if !others.isEmpty {
                let listed = others.prefix(5).map { "\(sources[$0].map(String.init(describing:)) ?? "") \(streams[$0].ticks)" }
                line += "; also in the recording: \(listed.joined(separator: ", "))\(others.count > 5 ? ", …" : ""); choose with --process NAME or PID"
            }
            if !skipped.isEmpty {
                line += "; not read: \(skipped.prefix(5).joined(separator: ", "))\(skipped.count > 5 ? ", …" : "")"
            }
            note(line)
        }
        for message in streams[chosen].notes { note(message) }
        return report
    }

    /// The chosen source's report of the events so far, when none of its ticks wait for a
    /// rate.
    mutating func partialReport() -> RecordingReport? {
        guard let chosen else { return nil }
        return streams[chosen].partialReport()
    }
}
