import Foundation
import FramescopeCollector
import FramescopeCore

/// The filters every dashboard page takes from its URL, so that a view is a link.
///
/// `days` (1, 7, 14, 30 or 90; default 30) ends at the current hour's end; `interval`
/// is `day` or `hour` (hours only up to 14 days); a filter per rollup dimension of the
/// registry (``QueryDimension/rollupDimensions``) and one on a declared tag
/// (`tag.KEY=VALUE`, ``DeclaredTags``), as in the query API.
public struct DashboardFilters: Sendable, Hashable {
    /// The ranges the range menu offers, in days.
    public static let dayChoices = [1, 7, 14, 30, 90]

    /// Days up to now.
    public var days = 30
    /// Trend bucket length.
    public var interval = BucketInterval.day
    /// The filter on each rollup dimension (``QueryDimension/rollupDimensions``), as text.
    public var values: [QueryDimension: String] = [:]
    /// The overview's "break down by" choice (`by=thermalState`): the figures per value of
    /// this dimension; the network when not given or not a dimension.
    public var breakdown = QueryDimension.network
    /// The filter on a declared tag (`tag.experiment=B`), `nil` for any value.
    public var tag: TagFilter?
    /// The overview's break-down by a declared tag (`by=tag.experiment`), which takes the
    /// place of ``breakdown``; `nil` for a dimension.
    public var breakdownTag: String?
    /// The app's declared tag keys (read once per page): the filter bar's tag menus and the
    /// break-down's tag choices.
    public var declaredTags: [String] = []
    /// What a filter menu's search box holds, by menu name (`find.appVersion=3.1` under
    /// `appVersion`, `find.tag.experiment=B` under `tag.experiment`): the menu then offers
    /// the values with the most visits that contain it. Not part of ``queryString(_:)``:
    /// a link keeps the filters, not the searches.
    public var searches: [String: String] = [:]

    /// The parameter prefix of a menu's search box.
    public static let searchPrefix = "find."

    /// The filter on `dimension` as text, `nil` for any value.
    public subscript(dimension: QueryDimension) -> String? { values[dimension] }

    /// Filters from URL query parameters; unknown or malformed values fall back to the
    /// defaults (a dimension's value is cut to 128 characters and must be one it takes). A
    /// tag filter or break-down counts only for a key in `declaredTags` (the first such
    /// filter by key); a break-down by a tag other than the filtered one falls back to the
    /// network, since one tag's rollups answer a query.
    public init(parameters: [String: String], declaredTags: [String] = []) {
        self.declaredTags = declaredTags
        if let text = parameters["days"], let days = Int(text), Self.dayChoices.contains(days) { self.days = days }
        if parameters["interval"] == "hour", days <= 14 { interval = .hour }
        if let text = parameters["by"], let dimension = QueryDimension(queryName: text), dimension.isRollupDimension { breakdown = dimension }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) {
            guard tag == nil, let key = DeclaredTags.key(inParameter: name), declaredTags.contains(key), !value.isEmpty,
                  DeclaredTags.problem(value: value) == nil else { continue }
            tag = TagFilter(key: key, value: value)
        }
        if let text = parameters["by"], let key = DeclaredTags.key(inParameter: text), declaredTags.contains(key),
           tag == nil || tag?.key == key {
            breakdownTag = key
        }
        for dimension in QueryDimension.rollupDimensions {
            guard let text = parameters[dimension.queryName], !text.isEmpty else { continue }
            let value = String(text.prefix(128))
            if dimension.problem(with: value) == nil { values[dimension] = value }
        }
        for (name, text) in parameters where name.hasPrefix(Self.searchPrefix) {
            let menu = String(name.dropFirst(Self.searchPrefix.count))
            let search = String(text.trimmingCharacters(in: .whitespaces).prefix(64))
            let isMenu = QueryDimension(queryName: menu).map { $0.values == .text && $0.isRollupDimension } ?? false
                || DeclaredTags.key(inParameter: menu).map { declaredTags.contains($0) } ?? false
            if isMenu, !search.isEmpty { searches[menu] = search }
        }
    }

    /// The time range, ending at the end of the current hour.
    public func range(now: Double) -> (from: Double, to: Double) {
        let to = (now / 3600).rounded(.up) * 3600
        return (to - Double(days) * 86_400, to)
    }

    /// The collector query for these filters.
    public func query(now: Double, screen: String? = nil) -> ScreenQuery {
        let (from, to) = range(now: now)
        var query = ScreenQuery(from: from, to: to)
        query[.screen] = screen
        for (dimension, value) in values { query[dimension] = value }
        query.tag = tag
        return query
    }

    /// The URL query that reproduces these filters plus `extra` (`?days=30&appVersion=3.1.0`).
    public func queryString(_ extra: [(String, String)] = []) -> String {
        var pairs: [(String, String)] = [("days", String(days))]
        if interval == .hour { pairs.append(("interval", "hour")) }
        for dimension in QueryDimension.rollupDimensions {
            if let value = values[dimension] { pairs.append((dimension.queryName, value)) }
        }
        if let tag { pairs.append((DeclaredTags.parameterPrefix + tag.key, tag.value)) }
        pairs += extra
        return "?" + pairs.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }

    /// Whether any rollup dimension or a tag is filtered.
    public var isFiltered: Bool { !values.isEmpty || tag != nil }

    /// The break-down choice as the `by` parameter writes it (`network`, `tag.experiment`).
    public var breakdownParameter: String {
        breakdownTag.map { DeclaredTags.parameterPrefix + $0 } ?? breakdown.queryName
    }
}

/// Percent-encodes everything but the unreserved URL characters (RFC 3986).
func percentEncode(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreservedURLCharacters) ?? text
}

private let unreservedURLCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
