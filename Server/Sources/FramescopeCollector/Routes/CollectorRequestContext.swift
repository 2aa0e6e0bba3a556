import Hummingbird

/// The request context of the collector's routes.
public struct CollectorRequestContext: RequestContext {
    /// Hummingbird's per-request storage (logger with request id, parameters).
    public var coreContext: CoreRequestContextStorage
    /// The key the request was authenticated with, set by the route group's authenticator
    /// (``IngestKeyAuthenticator``, ``ReadKeyAuthenticator``); `nil` on open routes.
    public var grant: KeyGrant?

    /// Creates a context for one request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// The authenticated app.
    /// - Throws: 401 on a route without an authenticator (a wiring mistake, never the client's).
    func authenticatedApp() throws -> String {
        guard let grant else {
            throw CollectorError(.unauthorized, .unauthorized, field: "Authorization", message: "send 'Authorization: Bearer <key>'")
        }
        return grant.app
    }
}
