import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every upload of the SDK shares (visits to `POST /v1/events`, MetricKit payloads to
/// `POST /v1/metrickit`): the session, the request's headers, the backoff and the length of
/// a wait.
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

    /// The wait after the `failures`-th failure in a row: `initial × 2^(failures − 1)`,
    /// capped at ``DeliveryConfiguration/maximumRetryDelay``, minus a random part of up to
    /// half (so devices that failed together do not retry together), in seconds.
    static func backoff(afterFailures failures: Int, _ configuration: DeliveryConfiguration) -> Double {
        let exponent = Double(min(max(failures - 1, 0), 30))
        let ceiling = min(configuration.maximumRetryDelay, configuration.initialRetryDelay * pow(2, exponent))
        return ceiling * Double.random(in: 0.5...1)
    }

    /// `seconds` as a `Duration`, within 0 and a year: `Duration` would trap on a value past
    /// its range, and no wait here is meant to be longer (`Retry-After` is capped at an hour).
    static func wait(_ seconds: Double) -> Duration {
        guard seconds.isFinite else { return seconds > 0 ? .seconds(365 * 86_400) : .zero }   // NaN: no wait
        return .seconds(min(max(seconds, 0), 365 * 86_400))
    }
}
