import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns every error into the collector's JSON error shape, and refuses a request whose
/// `Transfer-Encoding` cannot frame a body (``TransferCoding``) before any route runs.
///
/// Log levels: a refusal the client caused is `info`; a 5xx is `error`. A malformed HTTP
/// message (NIO's parser error, from reading the body) is passed on unchanged, so that
/// Hummingbird answers it 400 and closes the connection, and logged at `info`.
struct ErrorShapeMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    /// Logs a refused request with the context's request id (`hb.request.id`), its code and
    /// field: at `error` for a 5xx the collector is answerable for, at `info` for what the
    /// client caused (a 4xx, and 501 for a coding it asked for that the collector lacks).
    static func log(_ error: CollectorError, _ request: Request, _ context: CollectorRequestContext) {
        let ours = error.status.code >= 500 && error.status != .notImplemented
        context.logger.log(level: ours ? .error : .info, "request refused", metadata: [
            "method": .string(request.method.rawValue), "path": .string(request.uri.path), "status": .stringConvertible(error.status.code),
            "code": .string(error.code), "field": .string(error.field ?? ""),
        ])
    }

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        if let refused = TransferCoding.problem(in: request.headers) {
            Self.log(refused, request, context)
            throw refused
        }
        do {
            return try await next(request, context)
        } catch {
            if Self.isHTTPParserError(error) {
                context.logger.info("request refused", metadata: [
                    "method": .string(request.method.rawValue), "path": .string(request.uri.path), "status": "400",
                    "code": "malformed_http", "error": .string(String(describing: error)),
                ])
                throw error
            }
            let shaped = Self.shape(error, request, context)
            Self.log(shaped, request, context)
            throw shaped
        }
    }

    /// Whether `error` is NIO's `HTTPParserError`: the bytes after the request head are not
    /// HTTP/1.1 (a bad chunk size, a `Transfer-Encoding` the parser refuses).
    ///
    /// Named by its type's name because the collector does not link `NIOHTTP1` itself (only
    /// Hummingbird does); Hummingbird matches the type to answer 400 and close.
    static func isHTTPParserError(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)) == "NIOHTTP1.HTTPParserError"
    }

    /// The collector error for any error a route threw: a store's (``StoreError``, a
    /// driver's ``StoreErrorConvertible`` or ``StoreErrorCandidate``: SQLite's `SQLITE_FULL`) as
    /// ``StoreError/collectorError`` maps it; unknown errors become a 500 that reveals nothing.
    static func shape(_ error: any Error, _ request: Request, _ context: CollectorRequestContext) -> CollectorError {
        switch error {
        case let error as CollectorError:
            return error
        case let error as StoreError:
            return error.collectorError
        case let error as any StoreErrorConvertible:
            return error.storeError.collectorError
        case let error as HTTPError:
            return CollectorError(error.status, .http(error.status),
                                  message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        case is NIOTooManyBytesError:
            return CollectorError(.contentTooLarge, .bodyTooLarge, message: "the request body is larger than the collector accepts")
        default:
            // A driver's error that stands for a store error (SQLite's `SQLITE_FULL`: the disk,
            // or the database's size limit, is full; the transaction was rolled back, so
            // nothing of the batch was kept and the device may send it again).
            if let known = (error as? any StoreErrorCandidate)?.storeErrorIfKnown { return known.collectorError }
            context.logger.error("unhandled error", metadata: ["error": .string(String(describing: error))])
            return CollectorError(.internalServerError, .`internal`, message: "internal error")
        }
    }
}

/// Answers a request for a known path with a method it does not serve with 405 and
/// `Allow`, instead of Hummingbird's 404.
///
/// Added after every route, so it wraps only the router's not-found responder; it knows
/// the paths from the router's own route table, and covers any method (schemathesis
/// also sends `QUERY`).
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    /// Path patterns (`/v1/apps/:app/screens`) split into components, with their allowed methods.
    let patterns: [(components: [Substring], allowed: String)]

    init(routes: [(method: String, path: String)]) {
        var methods: [String: Set<String>] = [:]
        for route in routes { methods[route.path, default: []].insert(route.method) }
        patterns = methods.map { path, served in
            (path.split(separator: "/"), served.sorted().joined(separator: ", "))
        }
    }

    /// The methods `path` allows, or `nil` for a path no route serves.
    func allowed(path: String) -> String? {
        let parts = path.split(separator: "/")
        return patterns.first { pattern in
            pattern.components.count == parts.count
                && zip(pattern.components, parts).allSatisfy { ($0.hasPrefix(":") || ($0.hasPrefix("{") && $0.hasSuffix("}"))) ? !$1.isEmpty : $0 == $1 }
        }?.allowed
    }

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let allowed = allowed(path: request.uri.path) else { throw error }
            throw CollectorError(.methodNotAllowed, .methodNotAllowed, message: "use \(allowed) on this path", headers: [.allow: allowed])
        }
    }
}
