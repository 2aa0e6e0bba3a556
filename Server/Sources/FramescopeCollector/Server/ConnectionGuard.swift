import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Applies ``ConnectionLimits`` to a Hummingbird server, with the pieces Hummingbird lacks.
///
/// Hummingbird closes idle connections (`HTTP1Channel.Configuration.idleTimeout`) and stops
/// accepting at a number of connections (`MaximumAvailableConnections`); `framescope
/// serve` uses both. What it cannot do, this adds:
/// - **Make room at the limit.** Stopping at the limit alone lets silent sockets hold every
///   slot until their idle timeout, and whoever opens them again at once keeps the
///   collector closed for good. So when a new connection makes the limit, the connection
///   idle longest is closed (``ConnectionTable``); one serving a request never is.
/// - **Close after `Connection: close`.** Hummingbird keeps a connection open after any
///   response; a response that says `Connection: close` (408 for a body too slow, 400 for
///   a malformed `Transfer-Encoding`) is followed by closing the connection once flushed,
///   as RFC 9112 §9.6 asks, instead of reading the rest of a trickled body.
///
/// Install it in two places: ``makeHandler()`` in each connection's pipeline (Hummingbird's
/// `additionalChannelHandlers`) and ``responder(wrapping:)`` around the router.
public final class ConnectionGuard: Sendable {
    /// The limits applied.
    public let limits: ConnectionLimits
    private let logger: Logger
    private let state: NIOLockedValueBox<State>

    private struct State: Sendable {
        var table: ConnectionTable<ObjectIdentifier>
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    /// A guard for `limits`, logging connections closed to make room at `debug`.
    public init(limits: ConnectionLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
        self.state = NIOLockedValueBox(State(table: ConnectionTable(maximum: limits.maximumConnections)))
    }

    /// Connections open now.
    public var openConnections: Int { state.withLockedValue { $0.table.openCount } }
    /// Idle connections closed so far to make room for new ones.
    public var shedConnections: Int { state.withLockedValue { $0.table.shed } }

    /// A handler for one connection's pipeline: it registers the connection, and closes it
    /// after a flushed response that said `Connection: close`.
    public func makeHandler() -> any RemovableChannelHandler {
        ConnectionGuardHandler(connections: self)
    }

    /// `responder`, telling this guard when each connection is serving a request.
    public func responder<Inner: HTTPResponder>(wrapping responder: Inner) -> ConnectionGuardResponder<Inner> {
        ConnectionGuardResponder(inner: responder, connections: self)
    }

    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let victim: (any Channel)? = state.withLockedValue { state in
            state.channels[id] = channel
            return state.table.opened(id).flatMap { state.channels[$0] }
        }
        channel.closeFuture.whenComplete { _ in
            self.state.withLockedValue { state in
                state.table.closed(id)
                state.channels[id] = nil
            }
        }
        if let victim {
            logger.debug("connection limit reached: closing the connection idle longest", metadata: [
                "limit": .stringConvertible(limits.maximumConnections),
            ])
            victim.close(promise: nil)
        }
    }

    func requestStarted(_ channel: any Channel) {
        state.withLockedValue { $0.table.requestStarted(ObjectIdentifier(channel)) }
    }

    func requestEnded(_ channel: any Channel, closeAfterResponse: Bool) {
        state.withLockedValue { $0.table.requestEnded(ObjectIdentifier(channel), closeAfterResponse: closeAfterResponse) }
    }

    func flushed(_ channel: any Channel) -> Bool {
        state.withLockedValue { $0.table.flushed(ObjectIdentifier(channel)) }
    }
}

/// One connection's part of ``ConnectionGuard``: passes every part through untouched.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    let connections: ConnectionGuard

    init(connections: ConnectionGuard) {
        self.connections = connections
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connections.opened(context.channel)
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        if connections.flushed(context.channel) {
            context.close(promise: nil)
        }
    }
}

/// A responder that tells a ``ConnectionGuard`` when each connection serves a request,
/// then answers with the responder it wraps.
public struct ConnectionGuardResponder<Inner: HTTPResponder>: HTTPResponder
where Inner.Context: InitializableFromSource<ApplicationRequestContextSource> {
    /// The request context: the source Hummingbird gives (with the connection), from which
    /// the wrapped responder's own context is made.
    public struct Context: InitializableFromSource {
        /// The connection the request came on.
        public let channel: any Channel
        /// The request's logger (with its request id).
        public let logger: Logger

        /// A context for a request from `source`.
        public init(source: ApplicationRequestContextSource) {
            self.channel = source.channel
            self.logger = source.logger
        }
    }

    let inner: Inner
    let connections: ConnectionGuard

    /// Answers with the wrapped responder, the connection marked as serving a request meanwhile.
    public func respond(to request: Request, context: Context) async throws -> Response {
        let channel = context.channel
        connections.requestStarted(channel)
        do {
            let response = try await inner.respond(to: request, context: Inner.Context(source: .init(channel: channel, logger: context.logger)))
            connections.requestEnded(channel, closeAfterResponse: response.headers[.connection]?.lowercased() == "close")
            return response
        } catch {
            connections.requestEnded(channel, closeAfterResponse: false)
            throw error
        }
    }
}
