import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every upload of the SDK shares (visits to `POST /v1/events`, MetricKit payloads to
/// `POST /v1/metrickit`): the session, the request's headers and the length of a wait (the
/// backoff is ``UploadStateMachine/backoff(afterFailures:rules:jitter:)``).
enum UploadRequest {
    /// An ephemeral session whose requests and resources time out after
    /// ``DeliveryConfiguration/requestTimeout``.
    static func session(_ configuration: DeliveryConfiguration) -> URLSession {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.requestTimeout
        return URLSession(configuration: sessionConfiguration)
    }

    /// A `POST` of gzip JSON to `endpoint` with the ingest key.
    static func post(to endpoint: URL, ingestKey: String, timeout: Double) -> URLRequest {
        var request = URLRequest(url: endpoint, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("Bearer \(ingestKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        return request
    }

    /// `seconds` as a `Duration`, within 0 and a year: `Duration` would trap on a value past
    /// its range, and no wait here is meant to be longer (`Retry-After` is capped at an hour).
    static func wait(_ seconds: Double) -> Duration {
        guard seconds.isFinite else { return seconds > 0 ? .seconds(365 * 86_400) : .zero }   // NaN: no wait
        return .seconds(min(max(seconds, 0), 365 * 86_400))
    }
}

/// How an uploader's requests travel: over a `URLSession` (``session(_:)``), or, in tests,
/// through a function that answers as a collector would, without a network.
struct UploadTransport: Sendable {
    /// Sends the request with the body; returns the answer's body and response, or throws
    /// what `URLSession.upload(for:from:)` throws.
    let upload: @Sendable (URLRequest, Data) async throws -> (Data, URLResponse)

    /// Requests through `session`.
    static func session(_ session: URLSession) -> UploadTransport {
        UploadTransport { request, body in try await session.upload(for: request, from: body) }
    }
}
