import Foundation
import HummingbirdWSClient

/// The Chrome DevTools protocol over one WebSocket, one call at a time: a call's reply is
/// matched by its `id`; events that arrive meanwhile are kept for ``waitForEvent(_:session:)``.
/// Messages are JSON objects (`JSONSerialization`); none is large but the trace chunks
/// of `IO.read`, which ``ChromeRecorder`` asks for in 1 MiB pieces.
struct DevToolsSession {
    private var inbound: WebSocketInboundMessageStream.AsyncIterator
    private let outbound: WebSocketOutboundWriter
    private var nextID = 1
    private var events: [[String: Any]] = []

    /// The largest message read, in bytes: an `IO.read` chunk of 1 MiB, escaped.
    static let maximumMessageBytes = 16 << 20

    init(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) {
        self.inbound = inbound.messages(maxSize: Self.maximumMessageBytes).makeAsyncIterator()
        self.outbound = outbound
    }

    /// Sends `method` with `params` (to the page `session` when given) and returns the
    /// reply's `result`.
    /// - Throws: ``RecordingError/protocol(_:)`` for an error reply or a closed connection.
    mutating func call(_ method: String, _ params: [String: Any] = [:], session: String? = nil) async throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        let data = try JSONSerialization.data(withJSONObject: message)
        try await outbound.write(.text(String(decoding: data, as: UTF8.self)))
        while true {
            let reply = try await next(waitingFor: method)
            if reply["id"] as? Int == id {
                if let error = reply["error"] as? [String: Any] {
                    throw RecordingError.protocol("\(method): \(error["message"] as? String ?? "error") (\(error["code"] ?? ""))")
                }
                return reply["result"] as? [String: Any] ?? [:]
            }
            if reply["method"] != nil { events.append(reply) }
        }
    }

    /// The next event called `method` (from the page `session` when given), kept or to come.
    mutating func waitForEvent(_ method: String, session: String? = nil) async throws -> [String: Any] {
        if let index = events.firstIndex(where: { $0["method"] as? String == method && (session == nil || $0["sessionId"] as? String == session) }) {
            return events.remove(at: index)["params"] as? [String: Any] ?? [:]
        }
        while true {
            let message = try await next(waitingFor: method)
            if message["method"] as? String == method, session == nil || message["sessionId"] as? String == session {
                return message["params"] as? [String: Any] ?? [:]
            }
            if message["method"] != nil { events.append(message) }
        }
    }

    private mutating func next(waitingFor what: String) async throws -> [String: Any] {
        while let message = try await inbound.next() {
            let data: Data
            switch message {
            case let .text(text): data = Data(text.utf8)
            case let .binary(buffer): data = Data(buffer.readableBytesView)
            }
            if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] { return object }
        }
        throw RecordingError.protocol("the browser closed the connection while Framescope waited for \(what)")
    }
}
