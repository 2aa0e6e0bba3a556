import Foundation
import FramescopeCollector
import FramescopeCore

/// The Hangs page: the app's hangs grouped by where they happened (the dominant app frame
/// of their sampled stacks), by total hang time, each opening its stack with the share of
/// samples every frame was in; MetricKit's hang diagnostics beside them; the images whose
/// symbols were not uploaded.
extension DashboardPages {
    /// One frame of a group's stack, as the page shows it.
    struct HangFrameRow {
        /// The image's name: its uploaded symbols' where uploaded, else the device's, quoted
        /// and marked unverified.
        var image: String
        var imageVerified: Bool
        /// The image's id, first 8 digits.
        var imageId: String
        /// The function, or `0x…` without symbols.
        var location: String
        var hasSymbol: Bool
        var app: Bool
        /// "80 %".
        var share: String
        /// The share as a whole percentage, for the bar's width.
        var sharePercent: Int
    }

    /// One group.
    struct HangGroupRow {
        /// The dominant frame's function, or the signature without symbols.
        var site: String
        /// Where the dominant frame is: "in Shop" (a name the uploaded symbols gave), or
        /// "in “Shop”, a name devices sent (73d406b3…)"; `nil` without a dominant frame.
        var image: String?
        var signature: String
        var hangs: String
        var fatal: String
        var hasFatal: Bool
        var time: String
        var screens: String
        var versions: String
        var seen: String
        var frames: [HangFrameRow]
    }

    struct HangsPage {
        var page: Chrome
        /// "Hangs", or "Hangs on Search".
        var heading: String
        var groups: [HangGroupRow]
        var hasGroups: Bool
        var metricKitGroups: [HangGroupRow]
        var hasMetricKitGroups: Bool
        /// "Shop (73d406b3…), ShopKit (…)": images whose frames show no function.
        var withoutSymbols: String?
        var summary: String
    }

    /// Groups shown per source.
    static let hangGroupsShown = 50
    /// Images the "no symbols uploaded" notice names; the rest are counted.
    static let imagesNamed = 10

    /// "Shop (73d406b3…), ShopKit (5307fcde…) and 12 more": the images of `answer` without
    /// symbols, at most ``imagesNamed``, the rest counted; `nil` for none.
    static func withoutSymbols(_ answer: HangsResponse) -> String? {
        guard !answer.imagesWithoutSymbols.isEmpty else { return nil }
        let named = answer.imagesWithoutSymbols.prefix(imagesNamed).map { "\($0.name) (\($0.id.prefix(8))…)" }
        let more = answer.imagesWithoutSymbols.count - named.count + answer.moreImagesWithoutSymbols
        return named.joined(separator: ", ") + (more > 0 ? " and \(groupThousands(more)) more" : "")
    }

    /// The Hangs page over `filters` (a declared tag's filter applies as a tag of the
    /// visit), on one `screen` or all.
    public func hangs(app: String, filters: DashboardFilters, now: Double, csrfToken: String = "", screen: String? = nil) async throws -> String {
        let base = "/dashboard/apps/\(percentEncode(app))"
        let screen = screen.flatMap { $0.isEmpty ? nil : $0 }
        var chrome = try await chrome(title: screen.map { "Hangs on \($0)" } ?? "Hangs", app: app, filters: filters, now: now, action: base + "/hangs",
                                      hidden: screen.map { [Hidden(name: "screen", value: $0)] } ?? [], csrfToken: csrfToken)
        chrome.isHangs = true
        let answer = try await queries.hangs(app: app, query: Self.eventQuery(filters.query(now: now, screen: screen)), limit: Self.hangGroupsShown)
        let total = answer.groups.reduce(0) { $0 + $1.hangs }, fatal = answer.groups.reduce(0) { $0 + $1.fatal }
        let time = answer.groups.reduce(0) { $0 + $1.duration }
        let page = HangsPage(
            page: chrome, heading: chrome.title, groups: answer.groups.map(Self.hangRow), hasGroups: !answer.groups.isEmpty,
            metricKitGroups: answer.metricKitGroups.map(Self.hangRow), hasMetricKitGroups: !answer.metricKitGroups.isEmpty,
            withoutSymbols: Self.withoutSymbols(answer),
            summary: "\(groupThousands(total)) hangs (\(groupThousands(fatal)) fatal), \(formatFigure(time, unit: "s")) in all, in \(answer.groups.count) groups")
        return library.render(page, withTemplate: "hangs") ?? ""
    }

    /// The hang query of a page's filters: a declared tag's filter applies to the visit's
    /// tags (a filter on visits without the tag matches no hang's tag, so it is left out).
    static func eventQuery(_ screens: ScreenQuery) -> EventQuery {
        var query = EventQuery(screens: screens)
        if let tag = screens.tag, tag.value != DeclaredTags.none { query.tags[tag.key] = tag.value }
        query.screens.tag = nil
        return query
    }

    /// The SDK's hang groups over `query`, at most `limit`.
    func hangGroups(app: String, query: ScreenQuery, limit: Int) async throws -> [HangsResponse.Group] {
        try await queries.hangs(app: app, query: Self.eventQuery(query), limit: limit).groups
    }

    /// "Feed, Search, Cart, Home, Profile and 12 more": the first five of `values` and a
    /// count of the rest (those beyond `values` included).
    static func listed(_ values: [String], more: Int) -> String {
        let rest = max(0, values.count - 5) + more
        return values.prefix(5).joined(separator: ", ") + (rest > 0 ? " and \(groupThousands(rest)) more" : "")
    }

    static func hangRow(_ group: HangsResponse.Group) -> HangGroupRow {
        HangGroupRow(
            site: group.dominant?.symbol ?? group.signature,
            image: group.dominant.map { $0.imageVerified ? "in \($0.image)" : "in “\($0.image)”, a name devices sent (\($0.imageId.prefix(8))…)" },
            signature: group.signature,
            hangs: groupThousands(group.hangs), fatal: groupThousands(group.fatal), hasFatal: group.fatal > 0,
            time: formatFigure(group.duration, unit: "s"),
            screens: listed(group.screens, more: group.moreScreens),
            versions: listed(group.appVersions, more: group.moreAppVersions),
            seen: group.firstSeen.prefix(10) == group.lastSeen.prefix(10) ? String(group.firstSeen.prefix(10))
                : "\(group.firstSeen.prefix(10)) to \(group.lastSeen.prefix(10))",
            frames: group.stack.map { frame in
                HangFrameRow(image: frame.imageVerified ? frame.image : "“\(frame.image)”", imageVerified: frame.imageVerified,
                             imageId: String(frame.imageId.prefix(8)), location: frame.symbol ?? "0x" + String(frame.offset, radix: 16), hasSymbol: frame.symbol != nil,
                             app: frame.app, share: "\(Int((frame.share * 100).rounded())) %", sharePercent: Int((frame.share * 100).rounded()))
            })
    }
}
