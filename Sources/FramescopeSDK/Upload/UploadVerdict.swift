import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What becomes of an upload's payload (a batch of visits, a MetricKit payload) after one
/// attempt: the one place that sorts HTTP statuses and network errors, for every upload the
/// SDK makes, so that visits and MetricKit payloads follow the same rules.
enum UploadVerdict<Answer: Sendable>: Sendable {
    /// The collector stored it (or had already): delete it.
    case delivered(Answer)
    /// The collector refused the payload itself, naming what is wrong (400, 413, 422 with
    /// its JSON error). A batch of visits can never be accepted then: delete it and count
    /// it. A MetricKit payload is Apple's, not the SDK's, and is deleted only when `error`
    /// says its bytes are not a payload at all: each queue's ``RefusalRule`` decides.
    case refused(status: Int, error: ErrorAnswer)
    /// The configuration or the path is wrong (401, 403, 404, 410, another 4xx, a 3xx, a
    /// 2xx that is not the collector's answer): keep every payload and back off. The
    /// message says what to check.
    case misconfigured(String)
    /// Try again after a backoff, or after `retryAfter` seconds. `countsAgainstBatch`:
    /// whether the failure can be the payload's own fault (it reached the collector, or a
    /// proxy in front of it, and failed there), and so counts toward
    /// ``DeliveryConfiguration/attemptsBeforeMovingBack`` and
    /// ``DeliveryConfiguration/maximumAttempts``.
    case retry(reason: String, retryAfter: Double?, countsAgainstBatch: Bool)

    /// The collector's error answer, `{"error": {"code", "field", "message"}}`.
    struct ErrorAnswer: Decodable, Sendable, CustomStringConvertible {
        struct Detail: Decodable, Sendable {
            var code: String
            var field: String?
            var message: String
        }
        var error: Detail

        /// `code (field): message`.
        var description: String {
            "\(error.code)\(error.field.map { " (\($0))" } ?? ""): \(error.message)"
        }
    }

    /// What an HTTP answer means for the payload.
    /// - Parameters:
    ///   - retryAfter: The `Retry-After` header, obeyed on 429 and 503.
    ///   - now: The wall clock, for a `Retry-After` given as a date.
    ///   - maximumRetryAfter: The longest `Retry-After` obeyed, in seconds.
    ///   - what: The expected answer, for the message when a 2xx is not it.
    ///   - answer: Reads a 2xx body as the collector's answer, or nil when it is not.
    static func judge(status: Int, retryAfter: String?, body: Data, now: Date, maximumRetryAfter: Double,
                      what: String, answer: (Data) -> Answer?) -> UploadVerdict {
        let collectorError = try? JSONDecoder().decode(ErrorAnswer.self, from: body)
        let said = collectorError.map { ": \($0)" } ?? (body.isEmpty ? "" : " (\(excerpt(body)))")
        switch status {
        case 200..<300:
            guard let answer = answer(body) else {
                return .misconfigured("HTTP \(status), but the body is not \(what)\(said); "
                    + "check that `collector` is the Framescope collector's base URL and that nothing on the way answers for it")
            }
            return .delivered(answer)
        case 429, 503:
            let wait = retryAfter.flatMap { parseRetryAfter($0, now: now) }.map { min($0, maximumRetryAfter) }
            return .retry(reason: "HTTP \(status)\(said)", retryAfter: wait, countsAgainstBatch: false)
        case 408, 500..<600:
            return .retry(reason: "HTTP \(status)\(said)", retryAfter: nil, countsAgainstBatch: true)
        case 400, 413, 422:
            guard let collectorError else {
                // Not the collector's verdict (a proxy's page): perhaps the payload, perhaps not.
                return .retry(reason: "HTTP \(status)\(said), not from the collector", retryAfter: nil, countsAgainstBatch: true)
            }
            if let field = collectorError.error.field, isEnvelopeField(field) {
                // The app, the device or the sample rate: the SDK's configuration (or a
                // collector older than the SDK), not the visits. Keep them for a fixed one.
                return .misconfigured("HTTP \(status)\(said); the collector refuses what the SDK says of the app or the device: "
                    + "check the configuration's `app` and `device`, and that the collector is at least as new as the SDK")
            }
            return .refused(status: status, error: collectorError)
        default:
            return .misconfigured("HTTP \(status)\(said); \(advice(status: status))")
        }
    }

    /// Whether the collector's error names a field of a batch's envelope (`app.version`,
    /// `device.model`, `sampleRate`, `batchId`), which every batch of the SDK shares.
    static func isEnvelopeField(_ field: String) -> Bool {
        field.hasPrefix("app.") || field == "app" || field.hasPrefix("device.") || field == "device"
            || field == "sampleRate" || field == "batchId"
    }

    /// What to check after a status that says the configuration or the path is wrong.
    private static func advice(status: Int) -> String {
        switch status {
        case 401: "the ingest key is unknown or revoked: check `ingestKey`"
        case 403: "the collector refuses this key for this app: check `ingestKey` and `app.id` (or leave `app` out)"
        case 404, 410: "no ingest endpoint at this URL: check that `collector` is the collector's base URL"
        default: "the collector, or something in front of it, refuses the request: check `collector` and `ingestKey`"
        }
    }

    /// What a request that got no HTTP answer means: a collector out of reach (no network,
    /// no such host, nothing listening, TLS refused) counts against no payload; a timeout or
    /// a connection lost mid-request can be the payload's doing and counts.
    static func judge(_ error: any Error) -> UploadVerdict {
        let reason = "network: \(error.localizedDescription)"
        guard let urlError = error as? URLError else {
            return .retry(reason: reason, retryAfter: nil, countsAgainstBatch: false)
        }
        switch urlError.code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .internationalRoamingOff,
             .dataNotAllowed, .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .clientCertificateRequired, .cancelled:
            return .retry(reason: reason, retryAfter: nil, countsAgainstBatch: false)
        default:
            return .retry(reason: reason, retryAfter: nil, countsAgainstBatch: true)
        }
    }

    /// Sends `request` with `body` through `transport` and judges the answer.
    static func send(_ request: URLRequest, body: [UInt8], via transport: UploadTransport, what: String,
                     answer: (Data) -> Answer?) async -> UploadVerdict {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await transport.upload(request, Data(body))
        } catch {
            return judge(error)
        }
        guard let http = response as? HTTPURLResponse else {
            return .retry(reason: "no HTTP response", retryAfter: nil, countsAgainstBatch: false)
        }
        return judge(status: http.statusCode, retryAfter: http.value(forHTTPHeaderField: "Retry-After"), body: data,
                     now: Date(), maximumRetryAfter: 3600, what: what, answer: answer)
    }

    /// `Retry-After` as seconds from `now`: a number of seconds or an HTTP date (RFC 9110).
    static func parseRetryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return Double(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// The start of a body as one line of text, at most 120 characters.
    private static func excerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(120), as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
