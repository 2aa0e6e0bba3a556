import Foundation
import FramescopeCore
import Hummingbird

/// The screens query from URL parameters: `from` and `to` (default the last 30 days) and
/// a filter per ``QueryDimension``, each value put into NFC as ingest stores it
/// (``CanonicalText``) and checked against the registry.
func screenQuery(_ parameters: some Sequence<(key: Substring, value: Substring)>, now: Double) throws -> ScreenQuery {
    var values: [String: String] = [:]
    for (key, value) in parameters { values[String(key)] = CanonicalText.nfc(String(value)) }
    func time(_ name: String, default fallback: Double) throws -> Double {
        guard let text = values[name] else { return fallback }
        guard let value = ISO8601.parse(text) else {
            throw CollectorError(.badRequest, .invalidParameter, field: name, message: "\(name) must be an ISO 8601 date or date-time")
        }
        return value
    }
    let to = try time("to", default: now)
    let from = try time("from", default: to - 30 * 86_400)
    guard from < to else { throw CollectorError(.badRequest, .invalidParameter, field: "from", message: "from must be before to") }
    var query = ScreenQuery(from: from, to: to)
    for dimension in QueryDimension.all {
        guard let value = values[dimension.queryName] else { continue }
        if let problem = dimension.problem(with: value) {
            throw CollectorError(.badRequest, .invalidParameter, field: dimension.queryName, message: problem)
        }
        query[dimension] = value
    }
    return query
}

/// A figure named by the parameter `name` (``QueryFigure``), or 400 naming the parameter.
func figureParameter(_ parameters: Parameters, name: String, default fallback: String) throws -> QueryFigure {
    let text = parameters[Substring(name)].map(String.init) ?? fallback
    guard let figure = QueryFigure(name: text) else {
        throw CollectorError(.badRequest, .invalidParameter, field: name,
                             message: "unknown metric '\(text)'; use a report metric such as hitchRatio, hangRate, averageFPS, frameDuration.p95, motion.hitchRatio or frozenFramesPerThousand")
    }
    return figure
}

/// A whole number parameter within `range`, or 400 naming the parameter.
func integerParameter(_ parameters: Parameters, name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
    guard let text = parameters[Substring(name)] else { return fallback }
    guard let value = Int(text), range.contains(value) else {
        throw CollectorError(.badRequest, .invalidParameter, field: name, message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
    }
    return value
}

/// The one tag filter of a read route (`tag.KEY=VALUE`), on a tag key the app declared
/// (``DeclaredTags``), or `nil`; 400 naming the parameter for a malformed key or value, a
/// second tag filter, or an undeclared key (`declared`: the app's keys).
func tagFilter(_ parameters: some Sequence<(key: Substring, value: Substring)>, declared: [String]) throws -> TagFilter? {
    var filter: TagFilter?
    for (field, key, value) in try tagParameters(parameters) {
        guard filter == nil || filter?.key == key else {
            throw CollectorError(.badRequest, .invalidParameter, field: field,
                                 message: "a read route takes one tag filter (the export, GET …/events, takes up to \(EventQuery.maximumTagFilters))")
        }
        guard declared.contains(key) else {
            let list = declared.isEmpty ? "none" : declared.joined(separator: ", ")
            throw CollectorError(.badRequest, .invalidParameter, field: field,
                                 message: "\(key) is not a declared tag key of this app (declared: \(list)); declare it with framescope apps tags APP --add KEY, or filter the raw events with GET …/events")
        }
        filter = TagFilter(key: key, value: value)
    }
    return filter
}

/// Every `tag.KEY=VALUE` parameter as (parameter name, key, value), in order, each key and
/// value put into NFC (``CanonicalText``) and checked as the wire format checks tags (400
/// naming the parameter otherwise).
func tagParameters(_ parameters: some Sequence<(key: Substring, value: Substring)>) throws -> [(field: String, key: String, value: String)] {
    try parameters.compactMap { name, value in
        guard let key = DeclaredTags.key(inParameter: name).map(CanonicalText.nfc) else { return nil }
        let value = CanonicalText.nfc(String(value))
        if let problem = DeclaredTags.problem(key: key) ?? DeclaredTags.problem(value: value) {
            throw CollectorError(.badRequest, .invalidParameter, field: String(name), message: problem)
        }
        return (String(name), key, value)
    }
}
