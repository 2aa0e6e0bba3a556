import FramescopeCore

/// The analysis of one source's events (``TraceSource``; a recording of one source has
/// one): the analyzer, the refresh interval in force, and the ticks held while the rate
/// is inferred from them.
struct StreamAnalysis {
    private var analyzer: FrameAnalyzer
    private let refreshRateOverride: Double?
    private let variableCadence: Bool
    /// The refresh interval in force, in seconds.
    private(set) var refreshInterval: Double?
    private var inference = RefreshRateInference()
    private var inferred: Double?
    // Events held while the rate is being inferred, with the line of the first tick.
    private var waiting: [TraceEvent] = []
    private var firstWaitingLine = 0
    private var toolFigures: [ToolFigure] = []
    private var span: Double?
    /// Ticks taken, to choose among sources.
    private(set) var ticks = 0
    /// Frames the source wanted shown and did not show (``TraceEvent/missed``), to choose
    /// among sources.
    private(set) var missed = 0
    /// What a person should know about this source's analysis (a rate inferred or
    /// assumed), said once the source is chosen.
    private(set) var notes: [String] = []

    /// Ticks held at most while a steady rate is looked for in a source of variable
    /// cadence, before their median interval stands for the rate.
    static let variableCadenceSample = 1_000

    init(configuration: AnalyzerConfiguration, refreshRateOverride: Double?, refreshInterval: Double?, variableCadence: Bool, timing: TickTiming) {
        analyzer = FrameAnalyzer(configuration: configuration, timing: timing)
        self.refreshRateOverride = refreshRateOverride
        self.refreshInterval = refreshRateOverride.map { 1 / $0 } ?? refreshInterval
        self.variableCadence = variableCadence
    }

    /// Takes the next event of this source, read on `line`.
    mutating func take(_ event: TraceEvent, line: Int, file: String) throws(TraceError) {
        if case .tick = event { ticks += 1 }
        if case .missed = event {
            missed += 1
            return
        }
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
        if variableCadence {
            // A display that tears or refreshes at a variable rate can show a steady run of
            // any length by chance: the median of many intervals stands for its rate.
            if waiting.count >= Self.variableCadenceSample { useMedianCadence(file: file) }
        } else if let interval = inference.add(tick.timestamp) {
            refreshInterval = interval
            inferred = 1 / interval
            notes.append("no refresh rate or targetTimestamp given; inferred \(Self.hertz(1 / interval)) from \(RefreshRateInference.steadyIntervals) steady intervals (pass --refresh-rate to set it)")
            flushWaiting()
        } else if waiting.count > TraceReader.maximumWaitingEvents {
            throw TraceReader.noRate(file: file, line: firstWaitingLine)
        }
    }

    /// The report of every event taken.
    /// - Throws: ``TraceError`` when ticks still wait for a rate that cannot be found.
    mutating func finish(file: String) throws(TraceError) -> RecordingReport {
        if !waiting.isEmpty {
            guard variableCadence else { throw TraceReader.noRate(file: file, line: firstWaitingLine) }
            useMedianCadence(file: file)
        }
        return report()
    }

    /// The report of the events taken before an input was cut short, or `nil` when ticks
    /// still wait for a rate.
    mutating func partialReport() -> RecordingReport? {
        guard waiting.isEmpty else { return nil }
        return report()
    }

    private mutating func report() -> RecordingReport {
        analyzer.endSegment()
        var report = analyzer.report()
        report.inferredRefreshRate = inferred
        report.toolFigures = toolFigures
        if let span {
            let coverage = RecordingCoverage(traceSeconds: span, measuredSeconds: report.whole.duration + report.whole.firstDuration)
            report.coverage = coverage
            if let reason = coverage.withholding(.hitchRatio), !notes.contains(where: { $0.hasPrefix("hitchRatio and hangRate withheld") }) {
                notes.append("hitchRatio and hangRate withheld: \(reason) (the source drew nothing the rest of the time); a budget on them fails")
            }
        }
        return report
    }

    /// Measures the held ticks against their median interval (snapped to a common rate):
    /// for a display that tears or refreshes at a variable rate, the frame time the source
    /// kept most of the time.
    private mutating func useMedianCadence(file: String) {
        var intervals: [Double] = []
        var previous: Double?
        for case let .tick(tick) in waiting where tick.timestamp.isFinite {
            if let previous, tick.timestamp > previous, FrameAnalyzer.refreshIntervalRange.contains(tick.timestamp - previous) {
                intervals.append(tick.timestamp - previous)
            }
            previous = max(previous ?? tick.timestamp, tick.timestamp)
        }
        guard let interval = RefreshRateInference.snappedMedian(of: intervals) else {
            // One tick, or none a refresh apart: nothing to take a median of.
            _ = knownInterval()
            flushWaiting()
            return
        }
        refreshInterval = interval
        inferred = 1 / interval
        notes.append("no refresh rate given, and the display may tear or refresh at a variable rate: frames measured against the median interval between the first \(intervals.count + 1) ticks, \(Self.milliseconds(interval)) (\(Self.hertz(1 / interval))); pass --refresh-rate to set it")
        flushWaiting()
    }

    private mutating func flushWaiting() {
        let held = waiting
        waiting = []
        for event in held { apply(event) }
    }

    private mutating func apply(_ event: TraceEvent) {
        switch event {
        case let .refreshRate(hz):
            if refreshRateOverride == nil { refreshInterval = 1 / hz }
        case let .segment(label):
            if let label { analyzer.beginSegment(label) } else { analyzer.endSegment() }
        case let .tick(tick), let .runEdge(tick):
            analyzer.recordTick(timestamp: tick.timestamp, targetTimestamp: tick.targetTimestamp, refreshInterval: refreshInterval)
        case let .frames(duration, count):
            analyzer.recordFrames(duration: duration, count: count, refreshInterval: knownInterval())
        case let .hitches(lateness, count):
            let interval = knownInterval()
            analyzer.recordFrames(duration: interval + lateness, count: count, refreshInterval: interval)
        case let .toolFigure(figure):
            toolFigures.append(figure)
        case .idle:
            analyzer.skipIdleGap()
        case let .span(seconds):
            span = seconds
        case .source, .missed, .metadata:
            break
        }
    }

    /// Frames known only by duration need an interval; without one, 60 Hz, said once.
    private mutating func knownInterval() -> Double {
        if let refreshInterval { return refreshInterval }
        let assumed = 1 / TraceReader.assumedRefreshRate
        refreshInterval = assumed
        notes.append("the recording does not say the display's refresh rate: frames measured at \(Int(TraceReader.assumedRefreshRate)) Hz (pass --refresh-rate to set it)")
        return assumed
    }

    /// A refresh rate for a message: whole Hz when it is one, else one decimal.
    static func hertz(_ hz: Double) -> String {
        let rounded = (hz * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) Hz" : "\(rounded) Hz"
    }

    /// An interval for a message, in ms with two decimals.
    static func milliseconds(_ seconds: Double) -> String {
        let hundredths = (seconds * 100_000).rounded()
        let whole = Int(hundredths / 100)
        let fraction = Int(hundredths) - whole * 100
        return "\(whole).\(fraction < 10 ? "0" : "")\(fraction) ms"
    }
}
