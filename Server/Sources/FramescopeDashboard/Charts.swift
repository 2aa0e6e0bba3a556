import Foundation
import FramescopeCore

/// A line chart over time buckets, drawn as inline SVG: y axis with ticks and the unit,
/// x labels, one polyline per series (broken where a bucket has no data), a dot per
/// point with a `<title>` tooltip and `data-value`, optional threshold lines, a legend.
public struct LineChart: Sendable {
    /// One line.
    public struct Series: Sendable {
        /// Legend text.
        public var name: String
        /// One value per label; `nil` where the bucket has no data.
        public var values: [Double?]

        /// Creates a series.
        public init(name: String, values: [Double?]) {
            self.name = name
            self.values = values
        }
    }

    /// A horizontal reference line (Apple's hitch-ratio thresholds).
    public struct Threshold: Sendable {
        /// Where, in the chart's unit.
        public var value: Double
        /// What it means ("warning").
        public var label: String
    }

    /// What the chart shows, for screen readers and the tooltip prefix.
    public var title: String
    /// The unit of every value (`ms/s`).
    public var unit: String
    /// The x labels, one per bucket ("Nov 3").
    public var labels: [String]
    /// The lines.
    public var series: [Series]
    /// Reference lines.
    public var thresholds: [Threshold] = []

    /// Creates a chart.
    public init(title: String, unit: String, labels: [String], series: [Series], thresholds: [Threshold] = []) {
        self.title = title
        self.unit = unit
        self.labels = labels
        self.series = series
        self.thresholds = thresholds
    }

    /// Whether any series has a value.
    public var hasData: Bool { series.contains { $0.values.contains { $0 != nil } } }

    /// The chart as an `<svg>` element, `width` × `height` user units, scaling to its container.
    public func svg(width: Double = 640, height: Double = 220) -> String {
        let left = 56.0, right = 12.0, top = 22.0, bottom = 30.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let values = series.flatMap { $0.values.compactMap { $0 } }
        let maximum = max(values.max() ?? 0, thresholds.map(\.value).max() ?? 0) * 1.05
        let ticks = niceTicks(maximum: maximum)
        let top_ = ticks.last ?? 1
        func x(_ index: Int) -> Double { left + (labels.count > 1 ? Double(index) / Double(labels.count - 1) * plotWidth : plotWidth / 2) }
        func y(_ value: Double) -> Double { top + plotHeight - value / top_ * plotHeight }

        var out = #"<svg class="chart line-chart" viewBox="0 0 \#(coordinate(width)) \#(coordinate(height))" role="img" aria-label="\#(escapeMarkup(title)) (\#(escapeMarkup(unit)))" xmlns="http://www.w3.org/2000/svg">"#
        out += "<title>\(escapeMarkup(title)) (\(escapeMarkup(unit)))</title>"
        out += #"<text class="unit" x="4" y="12">\#(escapeMarkup(unit))</text>"#
        for tick in ticks {
            out += #"<line class="grid" x1="\#(coordinate(left))" x2="\#(coordinate(width - right))" y1="\#(coordinate(y(tick)))" y2="\#(coordinate(y(tick)))"/>"#
            out += #"<text class="tick" x="\#(coordinate(left - 6))" y="\#(coordinate(y(tick) + 4))" text-anchor="end">\#(formatFigure(tick))</text>"#
        }
        for threshold in thresholds where threshold.value <= top_ {
            out += #"<line class="threshold" x1="\#(coordinate(left))" x2="\#(coordinate(width - right))" y1="\#(coordinate(y(threshold.value)))" y2="\#(coordinate(y(threshold.value)))"><title>\#(escapeMarkup(threshold.label)): \#(formatFigure(threshold.value, unit: unit))</title></line>"#
            out += #"<text class="threshold-label" x="\#(coordinate(width - right - 2))" y="\#(coordinate(y(threshold.value) - 3))" text-anchor="end">\#(escapeMarkup(threshold.label))</text>"#
        }
        let every = max(1, Int((Double(labels.count) / 8).rounded(.up)))
        for (index, label) in labels.enumerated() where index % every == 0 {
            out += #"<text class="tick" x="\#(coordinate(x(index)))" y="\#(coordinate(height - 10))" text-anchor="middle">\#(escapeMarkup(label))</text>"#
        }
        for (number, line) in series.enumerated() {
            var path = ""
            var drawing = false
            for (index, value) in line.values.enumerated() {
                guard let value else { drawing = false; continue }
                path += (drawing ? " L" : " M") + "\(coordinate(x(index))) \(coordinate(y(value)))"
                drawing = true
            }
            out += #"<g class="series s\#(number % 6)" data-series="\#(escapeMarkup(line.name))">"#
            if !path.isEmpty { out += #"<path d="\#(path.dropFirst())"/>"# }
            for (index, value) in line.values.enumerated() {
                guard let value, index < labels.count else { continue }
                out += #"<circle class="point" cx="\#(coordinate(x(index)))" cy="\#(coordinate(y(value)))" r="3" data-label="\#(escapeMarkup(labels[index]))" data-value="\#(value)"><title>\#(escapeMarkup(line.name)), \#(escapeMarkup(labels[index])): \#(formatFigure(value, unit: unit))</title></circle>"#
            }
            out += "</g>"
        }
        if series.count > 1 {
            var legendX = left
            for (number, line) in series.enumerated() {
                out += #"<g class="legend s\#(number % 6)"><rect x="\#(coordinate(legendX))" y="4" width="10" height="10"/><text x="\#(coordinate(legendX + 14))" y="13">\#(escapeMarkup(line.name))</text></g>"#
                legendX += 24 + Double(line.name.count) * 7
            }
        }
        return out + "</svg>"
    }
}

/// A tiny trend line for table cells, with a `<title>` naming the range of values.
public struct Sparkline: Sendable {
    /// One value per bucket; `nil` where there is no data.
    public var values: [Double?]
    /// The unit, for the tooltip.
    public var unit: String

    /// Creates a sparkline.
    public init(values: [Double?], unit: String) {
        self.values = values
        self.unit = unit
    }

    /// The sparkline as a 100 × 24 `<svg>`.
    public func svg() -> String {
        let present = values.compactMap { $0 }
        guard let high = present.max(), let low = present.min() else { return "" }
        let span = max(high, 1e-9)
        var path = ""
        var drawing = false
        for (index, value) in values.enumerated() {
            guard let value else { drawing = false; continue }
            let x = values.count > 1 ? Double(index) / Double(values.count - 1) * 96 + 2 : 50
            let y = 22 - value / span * 20
            path += (drawing ? " L" : " M") + "\(coordinate(x)) \(coordinate(y))"
            drawing = true
        }
        return #"<svg class="sparkline" viewBox="0 0 100 24" role="img" aria-label="trend from \#(formatFigure(low, unit: unit)) to \#(formatFigure(high, unit: unit))" xmlns="http://www.w3.org/2000/svg"><title>daily: \#(formatFigure(low, unit: unit)) to \#(formatFigure(high, unit: unit))</title><path d="\#(path.dropFirst())" data-points="\#(present.count)"/></svg>"#
    }
}

/// The frame-duration distribution of a merged report as bars on a logarithmic
/// millisecond axis, with p50, p90, p95 and p99 marked.
public struct DurationDistributionChart: Sendable {
    /// The merged histogram.
    public var histogram: DurationHistogram

    /// Creates the chart.
    public init(histogram: DurationHistogram) {
        self.histogram = histogram
    }

    /// Bars: lower edge and upper edge in ms and the share of frames (0–1), over log-spaced bins.
    public func bins(count: Int = 36) -> [(low: Double, high: Double, share: Double)] {
        guard histogram.count > 0, let first = histogram.buckets.first, let last = histogram.buckets.last else { return [] }
        let lowest = max(DurationHistogram.lowerBound(ofBucket: first.index) * 1000, 0.1)
        let highest = max(DurationHistogram.lowerBound(ofBucket: last.index + 1) * 1000, lowest * 1.01)
        let logLow = log(lowest), logHigh = log(highest)
        var shares = [Double](repeating: 0, count: count)
        for bucket in histogram.buckets {
            let ms = DurationHistogram.representativeValue(ofBucket: bucket.index) * 1000
            let position = Int(((log(max(ms, lowest)) - logLow) / (logHigh - logLow) * Double(count)).rounded(.down))
            shares[min(max(position, 0), count - 1)] += Double(bucket.count) / Double(histogram.count)
        }
        return (0..<count).map { index in
            (exp(logLow + (logHigh - logLow) * Double(index) / Double(count)), exp(logLow + (logHigh - logLow) * Double(index + 1) / Double(count)), shares[index])
        }
    }

    /// The chart as an `<svg>`; empty when the histogram is.
    public func svg(width: Double = 1000, height: Double = 280) -> String {
        let bins = bins()
        guard let first = bins.first, let last = bins.last else { return "" }
        let left = 48.0, right = 150.0, top = 20.0, bottom = 30.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let maximum = (bins.map(\.share).max() ?? 1) * 100 * 1.1
        let ticks = niceTicks(maximum: maximum)
        let top_ = ticks.last ?? 100
        let logLow = log(first.low), logHigh = log(last.high)
        func x(_ ms: Double) -> Double { left + (log(ms) - logLow) / (logHigh - logLow) * plotWidth }
        func y(_ percent: Double) -> Double { top + plotHeight - percent / top_ * plotHeight }
        var out = #"<svg class="chart distribution-chart" viewBox="0 0 \#(coordinate(width)) \#(coordinate(height))" role="img" aria-label="Frame-duration distribution (ms, share of frames)" xmlns="http://www.w3.org/2000/svg">"#
        out += "<title>Frame-duration distribution</title>"
        out += #"<text class="unit" x="4" y="12">% of frames</text>"#
        for tick in ticks {
            out += #"<line class="grid" x1="\#(coordinate(left))" x2="\#(coordinate(width - right))" y1="\#(coordinate(y(tick)))" y2="\#(coordinate(y(tick)))"/>"#
            out += #"<text class="tick" x="\#(coordinate(left - 6))" y="\#(coordinate(y(tick) + 4))" text-anchor="end">\#(formatFigure(tick))</text>"#
        }
        for bin in bins where bin.share > 0 {
            let percent = bin.share * 100
            out += #"<rect class="bar" x="\#(coordinate(x(bin.low)))" y="\#(coordinate(y(percent)))" width="\#(coordinate(max(1, x(bin.high) - x(bin.low) - 1)))" height="\#(coordinate(y(0) - y(percent)))" data-share="\#(bin.share)"><title>\#(formatFigure(bin.low, unit: "ms"))–\#(formatFigure(bin.high, unit: "ms")): \#(formatFigure(percent, unit: "%")) of frames</title></rect>"#
        }
        var axisTick = pow(10, log10(first.low).rounded(.up))
        while axisTick <= last.high {
            for factor in [1.0, 2, 5] where axisTick * factor >= first.low && axisTick * factor <= last.high {
                out += #"<text class="tick" x="\#(coordinate(x(axisTick * factor)))" y="\#(coordinate(height - 10))" text-anchor="middle">\#(formatFigure(axisTick * factor, unit: "ms"))</text>"#
            }
            axisTick *= 10
        }
        for (index, (name, quantile)) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)].enumerated() {
            guard let seconds = histogram.value(atQuantile: quantile) else { continue }
            let ms = min(max(seconds * 1000, first.low), last.high)
            // The line at the value; its label in a legend column at the right, one row per percentile.
            let labelY = top + 14 + Double(index) * 16
            out += #"<g class="marker" data-quantile="\#(name)" data-ms="\#(seconds * 1000)"><line x1="\#(coordinate(x(ms)))" x2="\#(coordinate(x(ms)))" y1="\#(coordinate(top))" y2="\#(coordinate(y(0)))"/><text x="\#(coordinate(width - right + 12))" y="\#(coordinate(labelY))">\#(name) \#(formatFigure(seconds * 1000, unit: "ms"))</text><title>\#(name): \#(formatFigure(seconds * 1000, unit: "ms"))</title></g>"#
        }
        return out + "</svg>"
    }
}

/// Horizontal bars, one per group (app version, OS version, …), with the value written beside each.
public struct BarList: Sendable {
    /// One bar.
    public struct Bar: Sendable {
        /// The group's name.
        public var label: String
        /// Its value, `nil` without data.
        public var value: Double?
        /// What it rests on ("1 204 visits").
        public var basis: String
    }

    /// The bars, in display order.
    public var bars: [Bar]
    /// The unit of the values.
    public var unit: String
    /// For screen readers.
    public var title: String

    /// The most characters a label shows; a longer one ends in "…" (the bar's tooltip has it whole).
    static let labelCharacters = 50

    /// `label` cut to ``labelCharacters`` characters, the last of them "…" when cut.
    static func shownLabel(_ label: String) -> String {
        label.count <= labelCharacters ? label : String(label.prefix(labelCharacters - 1)) + "…"
    }

    /// The list as an `<svg>`, 22 units per bar; the label column is as wide as the longest
    /// shown label (about 6.2 units a character at the chart's 11 px), at least 150 units.
    public func svg(width: Double = 1000) -> String {
        let height = Double(bars.count) * 22 + 8
        let maximum = bars.compactMap(\.value).max() ?? 0
        let shownLabels = bars.map { Self.shownLabel($0.label) }
        let longest = shownLabels.map(\.count).max() ?? 0
        let labelWidth = max(150, (Double(longest) * 6.2 + 12).rounded()), valueWidth = 260.0
        let barSpace = width - labelWidth - valueWidth
        var out = #"<svg class="chart bar-list" viewBox="0 0 \#(coordinate(width)) \#(coordinate(height))" role="img" aria-label="\#(escapeMarkup(title))" xmlns="http://www.w3.org/2000/svg"><title>\#(escapeMarkup(title))</title>"#
        for (index, bar) in bars.enumerated() {
            let y = 4 + Double(index) * 22
            let length = maximum > 0 ? (bar.value ?? 0) / maximum * barSpace : 0
            out += #"<g class="bar-row" data-label="\#(escapeMarkup(bar.label))" data-value="\#(bar.value.map { String($0) } ?? "")">"#
            out += #"<text class="bar-label" x="\#(coordinate(labelWidth - 6))" y="\#(coordinate(y + 14))" text-anchor="end">\#(escapeMarkup(shownLabels[index]))</text>"#
            out += #"<rect class="bar" x="\#(coordinate(labelWidth))" y="\#(coordinate(y + 3))" width="\#(coordinate(max(length, 1)))" height="14"><title>\#(escapeMarkup(bar.label)): \#(formatFigure(bar.value, unit: unit)) (\#(escapeMarkup(bar.basis)))</title></rect>"#
            out += #"<text class="bar-value" x="\#(coordinate(labelWidth + length + 6))" y="\#(coordinate(y + 14))">\#(formatFigure(bar.value, unit: unit)) · \#(escapeMarkup(bar.basis))</text></g>"#
        }
        return out + "</svg>"
    }
}
