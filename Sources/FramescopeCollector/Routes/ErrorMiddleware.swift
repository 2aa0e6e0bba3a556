import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns every error into the collector's JSON error shape.
struct ErrorShapeMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    /// Logs a refused request with the context's request id (`hb.request.id`), its code and field.
    static func log(_ error: CollectorError, _ request: Request, _ context: CollectorRequestContext) {
        context.logger.log(level: error.status.code >= 500 ? .error : .info, "request refused", metadata: [
            "method": .string(request.method.rawValue), "path": .string(request.uri.path), "status": .stringConvertible(error.status.code),
            "code": .string(error.code), "field": .string(error.field ?? ""),
        ])
    }

    func handle(_ request: Request, context: CollectorRequestContext,
                next: (Request, CollectorRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let shaped = Self.shape(error, request, context)
            Self.log(shaped, request, context)
            throw shaped
        }
    }

    /// The collector error for any error a route threw; unknown errors become a 500 that reveals nothing.
    static func shape(_ error: any Error, _ request: Request, _ context: CollectorRequestContext) -> CollectorError {
        switch error {
        case let error as CollectorError:
            return error
        case let error as any CollectorErrorConvertible:
            return error.collectorError
        case let error as HTTPError:
            return CollectorError(error.status, code: error.status == .notFound ? "not_found" : "http_\(error.status.code)",
                                  message: error.body ?? error.status.reasonPhrase, headers: error.headers)
        case is NIOTooManyBytesError:
            return CollectorError(.contentTooLarge, code: "body_too_large", message: "the request body is larger than the collector accepts")
        default:
            context.logger.error("unhandled error", metadata: ["error": .string(String(describing: error))])
            return CollectorError(.internalServerError, code: "internal", message: "internal error")
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
            throw CollectorError(.methodNotAllowed, code: "method_not_allowed", message: "use \(allowed) on this path", headers: [.allow: allowed])
        }
    }
}
