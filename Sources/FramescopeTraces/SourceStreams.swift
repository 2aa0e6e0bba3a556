import FramescopeCore

/// The analyses of a recording's sources (``TraceSource``), each apart, and the choice of
/// the one reported: the one the selector (`--process`) names, else the best ranked
/// (``chosen``). A recording that names no source has one stream.
struct SourceStreams {
    private let configuration: AnalyzerConfiguration
    /// How the recording's ticks are measured; set once the format is known, before any
    /// event.
    var timing: TickTiming = .displayLink {
        didSet { streams[0] = stream(refreshInterval: configuration.refreshInterval, variableCadence: false) }
    }
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
    /// What the recording says about itself, for whichever source is reported.
    private var metadata: [RecordingMetadata] = []

    /// Most sources analyzed at once; past it the recording must name one.
    static let maximumSources = 256

    init(configuration: AnalyzerConfiguration, refreshRateOverride: Double?, selector: String?, file: String) {
        self.configuration = configuration
        self.refreshRateOverride = refreshRateOverride
        self.selector = selector
        self.file = file
        streams = []
        streams = [stream(refreshInterval: configuration.refreshInterval, variableCadence: false)]
    }

    /// A new stream measured with this recording's configuration, override and timing.
    private func stream(refreshInterval: Double?, variableCadence: Bool) -> StreamAnalysis {
        StreamAnalysis(configuration: configuration, refreshRateOverride: refreshRateOverride, refreshInterval: refreshInterval,
                       variableCadence: variableCadence, timing: timing)
    }

    /// Routes the next event, read on `line`, to its source's stream.
    mutating func take(_ event: TraceEvent, line: Int) throws(TraceError) {
        if case let .metadata(key, value) = event {
            metadata.append(RecordingMetadata(key: key, value: value))
            return
        }
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
        index[source] = streams.count
        current = streams.count
        streams.append(stream(refreshInterval: streams[0].refreshInterval, variableCadence: source.variableCadence))
        sources.append(source)
    }

    /// The chosen stream's index: the unsourced stream when no source was seen; else, among
    /// sourced streams, an application that showed a frame before any system process
    /// (``TraceSource/Role``), then the most frames wanted (shown and missed: a game that
    /// presents faster than the display loses frames, the compositor beside it none), then
    /// the most shown, then the first to appear.
    private var chosen: Int? {
        guard streams.count > 1 else { return selector != nil && !skipped.isEmpty ? nil : 0 }
        return ranked.first
    }

    /// The sourced streams, best first (see ``chosen``).
    private var ranked: [Int] {
        func key(_ index: Int) -> (Int, Int, Int) {
            let stream = streams[index]
            let application = sources[index]?.role == .application && stream.ticks > 0
            return (application ? 1 : 0, stream.ticks + stream.missed, stream.ticks)
        }
        return (1..<streams.count).sorted { key($0) > key($1) || (key($0) == key($1) && $0 < $1) }
    }

    /// `1687 shown, 22 not`: the frames a source showed and missed.
    private func shown(_ index: Int) -> String {
        let stream = streams[index]
        return "\(stream.ticks) shown" + (stream.missed > 0 ? ", \(stream.missed) not" : "")
    }

    /// The chosen source's report, with notes on its analysis and one line that says which
    /// source was read, which were not (with what each showed) and how to choose another.
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
        var report = try streams[chosen].finish(file: file)
        report.metadata = metadata
        if let source = sources[chosen] {
            let others = ranked.filter { $0 != chosen }
            var line = "read \(source.describedWithRole): frames \(shown(chosen))"
            if selector != nil { line += " (chosen with --process)" }
            if !others.isEmpty {
                let listed = others.prefix(5).map { "\(sources[$0]?.describedWithRole ?? "") \(shown($0))" }
                line += "; not read: \(listed.joined(separator: ", "))\(others.count > 5 ? ", and \(others.count - 5) more" : "")"
            }
            if !skipped.isEmpty {
                line += "; left out by --process: \(skipped.prefix(5).joined(separator: ", "))\(skipped.count > 5 ? ", …" : "")"
            }
            if others.isEmpty && skipped.isEmpty {
                line += "; the only source in the recording"
            } else {
                line += "; choose another with --process NAME or PID"
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
        var report = streams[chosen].partialReport()
        report?.metadata = metadata
        return report
    }
}
