import Foundation
import FramescopeCore
import FramescopeJSON

/// An app's raw events over an ``EventQuery`` in start-time order, read from the store a
/// chunk at a time: the next hour that has events, its keys, then up to ``chunkSize``
/// events per read. Memory stays at one hour's keys (16 bytes an event) and one chunk,
/// and reads grow with the hours that hold events, whatever the range.
///
/// ```swift
/// for try await event in EventExport(store: store, app: "shop", query: query, after: nil) {
///     write(EventExport.ndjsonLine(event))
/// }
/// ```
public struct EventExport: AsyncSequence, Sendable {
    /// Events fetched per read.
    public static let chunkSize = 500

    let store: any EventStore
    let app: String
    let query: EventQuery
    let after: RawEventKey?

    /// The export of `app`'s events matching `query`, resuming after `after` when given.
    public init(store: any EventStore, app: String, query: EventQuery, after: RawEventKey?) {
        self.store = store
        self.app = app
        self.query = query
        self.after = after
    }

    /// Walks the hours of the range.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let export: EventExport
        var hour: Int64
        let lastHour: Int64
        var after: RawEventKey?
        var keys: [RawEventKey] = []
        var keyIndex = 0
        var buffer: [StoredEvent] = []
        var bufferIndex = 0

        /// The next event, or `nil` after the last.
        public mutating func next() async throws -> StoredEvent? {
            while true {
                if bufferIndex < buffer.count {
                    defer { bufferIndex += 1 }
                    return buffer[bufferIndex]
                }
                if keyIndex < keys.count {
                    let chunk = Array(keys[keyIndex..<Swift.min(keyIndex + EventExport.chunkSize, keys.count)])
                    keyIndex += chunk.count
                    buffer = try await export.store.rawEvents(app: export.app, keys: chunk)
                    bufferIndex = 0
                    continue
                }
                try Task.checkCancellation()
                // Empty hours are skipped in one read: a range of ten thousand years over a
                // month of events reads about as often as that month alone.
                guard let next = try await export.store.firstRawEventHour(app: export.app, from: hour, through: lastHour) else { return nil }
                hour = next
                keys = try await export.store.rawEventKeys(app: export.app, query: export.query, hour: hour,
                                                           after: after.flatMap { $0.hour == hour ? $0 : nil })
                keyIndex = 0
                hour += 1
            }
        }
    }

    /// An iterator from the cursor's hour (or the range's first) to the range's last hour.
    public func makeAsyncIterator() -> AsyncIterator {
        let first = RawEventKey.hour(of: query.screens.from)
        let start = after.map { Swift.max($0.hour, first) } ?? first
        // `to` is exclusive: an export ending exactly on the hour does not read the next one.
        let last = RawEventKey.hour(of: query.screens.to.nextDown)
        return AsyncIterator(export: self, hour: start, lastHour: last, after: after)
    }

    /// One line of the NDJSON export: `{"cursor", "receivedAt", "batchId", "appVersion",
    /// "osVersion", "deviceModel", "event"}` with the event's JSON exactly as ingested, and a
    /// line feed.
    public static func ndjsonLine(_ event: StoredEvent) -> String {
        "{\"cursor\":\(JSONText.quote(event.key.cursor)),\"receivedAt\":\(JSONText.quote(ISO8601.format(unixSeconds: event.receivedAt)))"
            + ",\"batchId\":\(JSONText.quote(event.batchId)),\"appVersion\":\(JSONText.quote(event[.appVersion]))"
            + ",\"osVersion\":\(JSONText.quote(event[.osVersion])),\"deviceModel\":\(JSONText.quote(event[.deviceModel]))"
            + ",\"event\":\(event.payload)}\n"
    }
}
