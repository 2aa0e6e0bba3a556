import Hummingbird

/// An error the collector answers with a status and a JSON body naming the field:
/// `{"error": {"code": "…", "field": "…", "message": "…"}}`.
public struct CollectorError: Error, HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable, machine-readable code (`invalid_json`, `unauthorized`, …): a ``Code``'s raw value.
    public var code: String
    /// The request field at fault, as a JSON path (`events[3].report.frames`), if any.
    public var field: String?
    /// What is wrong, for a person.
    public var message: String
    /// Extra response headers (`Retry-After`).
    public var headers: HTTPFields

    /// Creates an error with a code given as text: for test doubles that stand in for a
    /// part outside the collector; the collector's own errors name a declared ``Code``
    /// (``init(_:_:field:message:headers:)``).
    init(_ status: HTTPResponse.Status, code: String, field: String? = nil, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.field = field
        self.message = message
        self.headers = headers
    }

    /// Encodes `{"error": {"code", "field", "message"}}` with the status and headers.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try context.responseEncoder.encode(ErrorBody(error: .init(code: code, field: field, message: message)), from: request, context: context)
        response.status = status
        response.headers.append(contentsOf: headers)
        return response
    }
}

/// The JSON shape of every error answer.
struct ErrorBody: Codable, Sendable {
    struct Detail: Codable, Sendable {
        var code: String
        var field: String?
        var message: String
    }
    var error: Detail
}
