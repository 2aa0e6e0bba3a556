import FramescopeCore

/// One thing a trace says, in order: a declared refresh rate, a tick, a change of
/// segment, frames known only by duration, a figure of the recording's own tool, or
/// which of several sources the events that follow come from.
public enum TraceEvent: Sendable, Hashable {
    /// The trace declares its display's refresh rate, in Hz (`# refreshRate=60`).
    case refreshRate(Double)
    /// The ticks from here on belong to the segment named, or to none (`nil`).
    case segment(String?)
    /// One display tick.
    case tick(FrameTick)
    /// A tick at a vsync that showed no new frame but bounds a run of dropped ones (Chrome:
    /// one refresh before jank that ends an idle spell, the idle vsync right after a drop):
    /// measured as a tick, not counted among the frames a source showed.
    case runEdge(FrameTick)
    /// `count` frames of `duration` seconds whose times are unknown: a bucket of another
    /// tool's frame-time histogram (``FrameAnalyzer/recordFrames(duration:count:refreshInterval:)``).
    case frames(duration: Double, count: Int)
    /// `count` frames shown `lateness` seconds later than due, whose times are unknown: a
    /// tool's list of hitches. Each counts as a frame one refresh interval plus `lateness` long.
    case hitches(lateness: Double, count: Int)
    /// A figure the recording's tool printed of its own, shown beside Framescope's.
    case toolFigure(ToolFigure)
    /// The events from here on, until the next `source`, come from this source (an
    /// application's swap chain, a renderer). Recordings of one source never say it.
    case source(TraceSource)
    /// What the recording's tool wrote about the capture, before its data (CapFrameX's
    /// `//GameName=re2.exe`): kept in the report (``RecordingReport/metadata``).
    case metadata(key: String, value: String)
    /// The source's part of the recording lasted this long, in seconds (a Chrome renderer's
    /// first to last vsync): the report says how much of it was measured
    /// (``RecordingReport/coverage``).
    case span(Double)
    /// The source wanted a frame shown here and none was: a present that never reached the
    /// screen (PresentMon), a vsync whose frame was dropped (Chrome). It counts only to choose
    /// among sources (a source is ranked by the frames it wanted); the ticks around it measure
    /// the drop.
    case missed
    /// The source stopped asking for frames because nothing on its screen changed: the time
    /// until its next tick belongs to no frame (``FrameAnalyzer/skipIdleGap()``).
    case idle
}

/// The trace formats Framescope reads (DESIGN §3).
public enum TraceFormat: String, Sendable, Hashable, CaseIterable {
    /// `timestamp,targetTimestamp[,segment]` lines with an optional `# refreshRate=…` comment.
    case csv
    /// `{"refreshRate": …, "ticks": [{"timestamp": …, "targetTimestamp": …, "segment": …}]}`.
    case json
    /// Android's `dumpsys SurfaceFlinger --latency <layer>`: the refresh period in ns, then
    /// desired, actual and ready times per frame (docs/traces.md).
    case surfaceFlingerLatency = "surfaceflinger-latency"
    /// Android's `dumpsys gfxinfo <package>` summary: its frame-time histogram and its own
    /// figures (docs/traces.md).
    case gfxinfo
    /// Instruments' `xctrace export` XML of a hitch, hang or display table (docs/traces.md).
    case xctrace
    /// PresentMon's CSV (1.x, 2.x, OCAT, CapFrameX): one row per present of each
    /// application's swap chain (docs/traces.md).
    case presentMon = "presentmon"
    /// A Chrome or Perfetto JSON trace (Trace Event Format) with the compositor's frame
    /// events (docs/traces.md).
    case chrome
    /// MetricKit's payload JSON (`MXMetricPayload`, `MXDiagnosticPayload`), one or a list:
    /// its hang diagnostics as frames, Apple's figures beside them (docs/traces.md).
    case metricKit = "metrickit"

    /// How the format's ticks are measured: Framescope's own CSV and JSON hold a display
    /// link's ticks (a screen's first interval is its transition); every other format holds
    /// display times another tool recorded (``TickTiming/recordedDisplayTimes``).
    public var tickTiming: TickTiming {
        switch self {
        case .csv, .json: .displayLink
        case .surfaceFlingerLatency, .gfxinfo, .xctrace, .presentMon, .chrome, .metricKit: .recordedDisplayTimes
        }
    }

    /// The format of a trace whose content begins with `prefix`: gfxinfo when it holds the
    /// dump's banner or a process header; xctrace when it holds `<trace-query-result`;
    /// PresentMon when its first line is PresentMon's header; Chrome when it is a JSON
    /// list or an object that names `"traceEvents"`; MetricKit when an object (or a list's
    /// first object) begins with a payload's key;
    /// SurfaceFlinger latency when
    /// the first line is a whole number alone; JSON when the first
    /// character that is not white space (after a byte-order mark) is `{`; else CSV.
    public static func detect(prefix: some Collection<UInt8>) -> TraceFormat {
        if GfxinfoReader.matches(prefix: prefix) { return .gfxinfo }
        if XctraceReader.matches(prefix: prefix) { return .xctrace }
        if SurfaceFlingerLatencyReader.matches(prefix: prefix) { return .surfaceFlingerLatency }
        if PresentMonReader.matches(prefix: prefix) { return .presentMon }
        if MetricKitParser.matches(prefix: prefix) { return .metricKit }
        if ChromeTraceReader.matches(prefix: prefix) { return .chrome }
        var bytes = prefix.makeIterator()
        var position = 0
        while let byte = bytes.next() {
            defer { position += 1 }
            if position < 3, [0xEF, 0xBB, 0xBF][position] == byte { continue }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            case UInt8(ascii: "{"): return .json
            default: return .csv
            }
        }
        return .csv
    }
}
