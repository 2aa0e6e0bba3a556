/// A figure a query, a statistic, a threshold or a page names: one entry of the one
/// vocabulary of figures (``all``), with the name it has in URLs, JSON and the OpenAPI
/// document, its unit, which way is better, its label, how it is read from a report and,
/// for the figures the collector keeps per-visit statistics of, the ratio those statistics
/// sum and the permanent storage id they are kept under.
///
/// Every report ``Metric`` is a figure of the whole visit (`hitchRatio`) and, derived from
/// it, of the visit's motion report (`motion.hitchRatio`, ``inMotion``); the registry adds
/// the figures no report key has (``frozenFramesPerThousand``). Shaped like
/// ``QueryDimension``: a list of values, so each figure is defined once and everything that
/// lists figures derives from ``all``.
public struct Figure: Sendable, Hashable, CustomStringConvertible {
    /// Which report of a visit a figure reads.
    public enum Scope: Sendable, Hashable {
        /// The whole visit.
        case whole
        /// The visit's motion report (scrolling or animating).
        case motion
    }

    /// The bands of a figure in its unit: good below ``warning``, warning up to and
    /// including ``critical``, critical above.
    public struct Bands: Sendable, Hashable {
        /// Values at or above this are no longer good.
        public var warning: Double
        /// Values above this are critical.
        public var critical: Double

        /// Bands with these limits, in the figure's unit.
        public init(warning: Double, critical: Double) {
            self.warning = warning
            self.critical = critical
        }
    }

    /// A figure as the ratio of two sums over visits (value = Σ numerator / Σ denominator),
    /// which the collector's per-visit statistics keep under ``storageID``.
    public struct Ratio: Sendable {
        /// The figure's permanent storage id, like a protobuf field number: how stored
        /// layouts that do not spell out names refer to it. Never changed or reused; a new
        /// figure with a ratio takes the next unused id.
        public let storageID: Int
        /// The numerator of one report, in the figure's unit × the denominator's.
        let numerator: @Sendable (FrameReport) -> Double
        /// The denominator of one report (seconds, hours or frames).
        let denominator: @Sendable (FrameReport) -> Double

        /// The report's numerator and denominator, or `nil` when the denominator is not above zero.
        public func parts(of report: FrameReport) -> (numerator: Double, denominator: Double)? {
            let below = self.denominator(report)
            return below > 0 ? (self.numerator(report), below) : nil
        }
    }

    /// The name in URLs, JSON, SQL and the OpenAPI document (`hitchRatio`, `motion.hitchRatio`).
    public let name: String
    /// The report metric the figure is made of (``Metric/frozenFrames`` for frozen frames per thousand).
    public let metric: Metric
    /// Which report of a visit the figure reads.
    public let scope: Scope
    /// The unit as printed after numbers (`ms/s`, `s/h`, `FPS`, `s`, `count`, `fraction`, `per 1000 frames`).
    public let unit: String
    /// Which way is better.
    public let direction: Metric.Direction
    /// The label for headings, tiles and trend titles ("Hitch ratio in motion").
    public let label: String
    /// The label with the unit, for column heads ("Hitch ratio (ms/s)", "Average FPS",
    /// "Frozen per 1000 frames").
    public let labelWithUnit: String
    /// The ratio the per-visit statistics sum, or `nil` for a figure without them.
    public let ratio: Ratio?
    /// The bands that apply when an app sets none, in ``unit``, or `nil` for none.
    public let defaultBands: Bands?
    /// The largest limit an app's bands may set, in ``unit`` (a limit above it could never
    /// be reached), or `nil` for a figure an app cannot set bands for.
    public let bandMaximum: Double?
    /// The value of one report of the figure's ``scope``, in ``unit``; `nil` without data.
    let read: @Sendable (FrameReport) -> Double?

    /// The figure's value for a visit's (or merged visits') reports, in ``unit``; `nil`
    /// without data (no motion report for a motion figure).
    public func value(whole: FrameReport, motion: FrameReport?) -> Double? {
        switch scope {
        case .whole: read(whole)
        case .motion: motion.flatMap(read)
        }
    }

    /// The visit's numerator and denominator of ``ratio``, or `nil` for a figure without a
    /// ratio or a visit without a denominator (no frames, or no motion for a motion figure).
    public func parts(whole: FrameReport, motion: FrameReport?) -> (numerator: Double, denominator: Double)? {
        guard let ratio else { return nil }
        switch scope {
        case .whole: return ratio.parts(of: whole)
        case .motion: return motion.flatMap(ratio.parts(of:))
        }
    }

    /// Whether a larger value is worse; `nil` for figures that are neither.
    public var higherIsWorse: Bool? { direction.higherIsWorse }

    /// A value written for people with its unit, as the report metric writes it (`12.3 ms/s`,
    /// `16.7 ms`); `2.5 per 1000 frames` for a figure with a unit of its own.
    public func format(_ value: Double) -> String {
        unit == metric.unit.symbol ? metric.format(value) : Metric.decimal(value, digits: 1) + " " + unit
    }

    /// The band of `value` under ``defaultBands``, or `nil` without a value or bands.
    public func band(of value: Double?) -> Band? {
        guard let value, let defaultBands else { return nil }
        return value < defaultBands.warning ? .good : value <= defaultBands.critical ? .warning : .critical
    }

    /// Figures are the same when their names are.
    public static func == (a: Figure, b: Figure) -> Bool { a.name == b.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The name.
    public var description: String { name }
}
