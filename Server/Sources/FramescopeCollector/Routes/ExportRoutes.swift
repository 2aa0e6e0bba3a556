import Foundation
import FramescopeCore
import Hummingbird
import NIOCore

/// `GET /v1/apps/{app}/events`: the app's raw events, streamed in start-time order with the
/// read key (``ReadKeyAuthenticator``):
/// - NDJSON (`application/x-ndjson`, the default): one line per event,
///   ``EventExport/ndjsonLine(_:)``, each with the `cursor` to resume after;
/// - CSV (`Accept: text/csv`): one row per visit of headline figures,
///   ``EventExport/csvRow(_:decoder:)``.
///
/// Parameters: `from`, `to` and the filters of every read route (``screenQuery(_:now:)``),
/// plus `tag.KEY=VALUE` (up to 8), `after` (a cursor) and `limit`.
struct ExportRoutes: Sendable {
    let store: any AppAccess & EventStore
    let clock: @Sendable () -> Double

    /// Bytes gathered before a write to the connection.
    static let flushBytes = 64 << 10

    func addRoutes(to router: Router<CollectorRequestContext>) {
        let group = router.group("/v1/apps/:app").add(middleware: ReadKeyAuthenticator(store: store, clock: clock))
        group.get("events") { request, context -> Response in
            let app = try context.authenticatedApp()
            let parameters = request.uri.queryParameters
            let query = try eventQuery(parameters, now: clock())
            var after: RawEventKey?
            if let text = parameters["after"] {
                guard let key = RawEventKey(cursor: String(text)) else {
                    throw CollectorError(.badRequest, .invalidParameter, field: "after", message: "after must be a cursor from an earlier export line")
                }
                after = key
            }
            let limit = try integerParameter(parameters, name: "limit", default: Int.max, range: 1...Int.max)
            let csv = request.headers[.accept].map { $0.contains("text/csv") } ?? false
            // The first read happens before the status is sent, so a store that fails
            // answers 5xx rather than an empty 200.
            var iterator = EventExport(store: store, app: app, query: query, after: after).makeAsyncIterator()
            let first = try await iterator.next()
            let start = iterator
            let body = ResponseBody { writer in
                var iterator = start
                var buffer = ByteBuffer()
                let decoder = JSONDecoder()
                if csv { buffer.writeString(EventExport.csvHeader) }
                var written = 0
                var next = first
                while let event = next, written < limit {
                    buffer.writeString(csv ? EventExport.csvRow(event, decoder: decoder) : EventExport.ndjsonLine(event))
                    written += 1
                    if buffer.readableBytes >= Self.flushBytes {
                        try await writer.write(buffer)
                        buffer.clear()
                    }
                    next = written < limit ? try await iterator.next() : nil
                }
                if buffer.readableBytes > 0 { try await writer.write(buffer) }
                try await writer.finish(nil)
            }
            var headers = HTTPFields()
            headers[.contentType] = csv ? "text/csv; charset=utf-8" : "application/x-ndjson"
            if csv { headers[.contentDisposition] = "attachment; filename=\"\(app)-events.csv\"" }
            return Response(status: .ok, headers: headers, body: body)
        }
    }
}

/// The export's query from URL parameters: ``screenQuery(_:now:)`` plus `tag.KEY=VALUE`
/// filters, each checked as the wire format checks tags.
func eventQuery(_ parameters: Parameters, now: Double) throws -> EventQuery {
    var query = EventQuery(screens: try screenQuery(parameters, now: now))
    for (field, key, value) in try tagParameters(parameters) {
        query.tags[key] = value
        guard query.tags.count <= EventQuery.maximumTagFilters else {
            throw CollectorError(.badRequest, .invalidParameter, field: field, message: "at most \(EventQuery.maximumTagFilters) tag filters")
        }
    }
    return query
}
