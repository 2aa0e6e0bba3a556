/// A figure that a recording's own tool printed (Android's "Janky frames", Instruments'
/// hitch total), kept beside Framescope's measurement of the same recording so that the
/// two can be compared (`docs/traces.md` says, per tool, how their definitions differ).
///
/// ```swift
/// ToolFigure(tool: "gfxinfo", label: "50th percentile", value: 19, unit: "ms",
///            metrics: [.frameDurationP50], framescope: 19)
/// ```
public struct ToolFigure: Sendable, Hashable, Codable {
    /// The tool that printed the figure ("gfxinfo", "Instruments").
    public var tool: String
    /// The tool's own name for the figure, as it printed it ("Janky frames").
    public var label: String
    /// The figure, in ``unit``.
    public var value: Double
    /// The unit of ``value`` and ``framescope``: "frames", "ms", "%", "count" or "s".
    public var unit: String
    /// Framescope's metrics that measure the nearest thing in the same report (for
    /// "Janky frames", `slowFrames` and `frozenFrames`); empty when none does.
    public var metrics: [Metric]
    /// Framescope's own figure for the same thing, in ``unit``, when it is computed from
    /// the tool's data exactly (a percentile of the tool's own histogram by Framescope's
    /// nearest-rank rule); `nil` when the metrics' values in the report stand for it.
    public var framescope: Double?

    /// Creates a figure.
    public init(tool: String, label: String, value: Double, unit: String, metrics: [Metric] = [], framescope: Double? = nil) {
        self.tool = tool
        self.label = label
        self.value = value
        self.unit = unit
        self.metrics = metrics
        self.framescope = framescope
    }
}
