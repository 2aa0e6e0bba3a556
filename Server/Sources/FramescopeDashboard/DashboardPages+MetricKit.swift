import FramescopeCollector
import FramescopeCore

extension DashboardPages {
    /// The overview's comparison of Apple's figures (MetricKit payloads) with the SDK's,
    /// per app version.
    struct MetricKitSection {
        var rows: [MetricKitRow]
        /// Said when a screen filter is set: MetricKit has no screens.
        var screenNote: String?
        /// Said under the table when it shows only the versions with the most payloads.
        var note: String? = nil
        /// The heading of Framescope's figure: "Hitch ratio in motion (Framescope)".
        var framescopeRatioHeader = Figure.motionHitchRatio.label + " (Framescope)"
    }

    /// One app version: Apple's figures and the SDK's nearest ones, as text and raw numbers
    /// (for the page's data attributes).
    struct MetricKitRow {
        var version: String
        var payloads: String
        var appleRatio: String
        var appleRatioRaw: String
        var framescopeRatio: String
        var framescopeRatioRaw: String
        var appleHangs: String
        var framescopeHangs: String
    }

    /// The section for `apple`'s versions beside the SDK's groups of the same versions;
    /// `nil` when no MetricKit payload matches the filters.
    static func metricKitSection(apple: [MetricKitVersionSummary], framescope: [RollupAggregate], screenFiltered: Bool) -> MetricKitSection? {
        guard !apple.isEmpty else { return nil }
        // The versions with the most payloads, in version order.
        let kept = Set(apple.indices.sorted { apple[$0].payloads > apple[$1].payloads }.prefix(DashboardLimits.tableRows))
        let shown = apple.indices.filter { kept.contains($0) }.map { apple[$0] }
        let rows = shown.map { summary in
            let sdk = framescope.first { $0.dimensionValue == summary.appVersion }
            let ratio = sdk.flatMap { QueryFigure(.motionHitchRatio).value(of: $0.rollup) }
            return MetricKitRow(
                version: summary.appVersion.isEmpty ? "(not named)" : summary.appVersion,
                payloads: groupThousands(summary.payloads),
                appleRatio: formatFigure(summary.scrollHitchTimeRatio, unit: Figure.motionHitchRatio.unit)
                    + (summary.scrollHitchTimeRatioPayloads > 0 ? " (\(groupThousands(summary.scrollHitchTimeRatioPayloads)))" : ""),
                appleRatioRaw: summary.scrollHitchTimeRatio.map { String($0) } ?? "",
                framescopeRatio: formatFigure(ratio, unit: Figure.motionHitchRatio.unit),
                framescopeRatioRaw: ratio.map { String($0) } ?? "",
                appleHangs: groupThousands(summary.hangDiagnostics) + (summary.histogramHangs > 0 ? " · \(groupThousands(summary.histogramHangs)) in histograms" : ""),
                framescopeHangs: sdk.map { groupThousands($0.rollup.report.hangs) } ?? "–")
        }
        let leftOut = apple.count - shown.count
        return MetricKitSection(rows: rows, screenNote: screenFiltered ? "MetricKit has no screens: Apple's figures are the whole app's, Framescope's those of the screen chosen." : nil,
                                note: leftOut > 0 ? "Showing the \(groupThousands(shown.count)) app versions with the most payloads; \(groupThousands(leftOut)) more are left out: choose one in the filters." : nil)
    }
}
