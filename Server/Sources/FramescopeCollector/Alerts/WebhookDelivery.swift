import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Sends one webhook POST and answers the response's status code.
public protocol WebhookTransport: Sendable {
    /// POSTs `body` to `url` with `headers`, waiting at most `timeout` for the whole
    /// exchange; returns the HTTP status code.
    /// - Throws: When no response came (refused, reset, timed out).
    func post(url: String, body: [UInt8], headers: [(String, String)], timeout: Duration) async throws -> Int
}

/// The real transport: async-http-client with redirects refused (a webhook answers
/// itself; following a redirect could send the alert somewhere the admin never named),
/// a 5 s connect timeout, and at most 64 KiB of response body read.
///
/// The whole exchange is bounded by the `timeout` of ``post(url:body:headers:timeout:)``:
/// async-http-client's own deadline ends when the response's head arrives, so a receiver
/// that sends a head and then stalls its body would otherwise hold the alert service (and
/// every app's deliveries behind it) for ever. The status is taken from the head; the body
/// is read only until the deadline.
public final class HTTPWebhookTransport: WebhookTransport {
    let client: HTTPClient

    /// A transport with a client of its own; call ``shutdown()`` when done.
    public init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(10)),
                                                     decompression: .disabled)
        // A refused connection is a failed attempt at once (the backoff spaces the retries),
        // not one async-http-client keeps trying until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the client's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// POSTs with async-http-client; the status of the answer's head is returned, and its
    /// body is read (up to 64 KiB, until the deadline) and dropped.
    public func post(url: String, body: [UInt8], headers: [(String, String)], timeout: Duration) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let client = self.client
        let sent = request
        let response = try await Self.before(deadline) {
            try await client.execute(sent, timeout: .milliseconds(max(1, milliseconds)))
        }
        let status = Int(response.status.code)
        _ = try? await Self.before(deadline) { try await response.body.collect(upTo: 64 * 1024) }
        return status
    }

    /// `operation`'s result if it finishes before `deadline`; otherwise it is cancelled and
    /// ``WebhookTimeout`` is thrown.
    static func before<T: Sendable>(_ deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(until: deadline, clock: ContinuousClock())
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else { throw WebhookTimeout() }
            return result
        }
    }
}

/// A webhook's answer did not come within the delivery's timeout.
public struct WebhookTimeout: Error, Sendable, CustomStringConvertible {
    /// An error.
    public init() {}
    /// "timed out".
    public var description: String { "timed out" }
}

/// Delivers pending alerts to their webhooks: a signed POST of ``WebhookPayload``, retried
/// with exponential backoff, and after ``maximumAttempts`` failures the delivery is marked
/// ``DeliveryState/undelivered`` for that webhook.
///
/// A 2xx answer delivers; anything else (another status, a refused connection, a timeout)
/// is a failed attempt. Each attempt is recorded as it ends, so a restart resumes a
/// delivery with the attempts it has left. Waits go through ``sleep`` so tests need not wait.
public struct WebhookDelivery: Sendable {
    /// Where deliveries are read and recorded.
    public var store: any AlertStore
    /// What sends the POSTs.
    public var transport: any WebhookTransport
    /// The collector's address as a receiver reaches it, for the payload's links (`https://collector.example.com`).
    public var publicURL: String
    /// POSTs per delivery before it is marked undelivered.
    public var maximumAttempts: Int
    /// The wait before the second attempt; each later wait doubles it (1, 2, 4, 8 s by default).
    public var initialBackoff: Duration
    /// The longest one POST may take, response included.
    public var timeout: Duration
    /// How the deliverer waits between attempts (`Task.sleep`; tests pass one that returns at once).
    public var sleep: @Sendable (Duration) async throws -> Void
    /// The current time, Unix seconds.
    public var clock: @Sendable () -> Double
    /// Where failures are logged.
    public var logger: Logger

    /// A deliverer.
    /// - Parameters:
    ///   - maximumAttempts: POSTs before a delivery is given up (default 5).
    ///   - initialBackoff: The first wait between attempts (default 1 s), doubled after each.
    ///   - timeout: The limit of one POST (default 10 s).
    public init(store: any AlertStore, transport: any WebhookTransport, publicURL: String, maximumAttempts: Int = 5,
                initialBackoff: Duration = .seconds(1), timeout: Duration = .seconds(10),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                logger: Logger = Logger(label: "framescope.alerts")) {
        self.store = store
        self.transport = transport
        self.publicURL = publicURL
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialBackoff = initialBackoff
        self.timeout = timeout
        self.sleep = sleep
        self.clock = clock
        self.logger = logger
    }

    /// The wait before attempt `attempt` (2 for the second): ``initialBackoff`` × 2^(attempt − 2).
    public func backoff(beforeAttempt attempt: Int) -> Duration {
        initialBackoff * (1 << min(20, max(0, attempt - 2)))
    }

    /// Delivers every pending delivery (at most `limit` of them), one after another; returns
    /// how many ended delivered and how many undelivered. A webhook that used up every
    /// attempt of one delivery in this pass gets no more attempts in it (its other
    /// deliveries wait, pending, for the next pass), so one dead receiver does not hold the
    /// other apps' alerts for minutes per alert.
    public func deliverPending(limit: Int = 1000) async throws -> (delivered: Int, undelivered: Int) {
        var delivered = 0
        var undelivered = 0
        var unreachable: Set<Int64> = []
        for pending in try await store.pendingDeliveries(limit: limit) where !unreachable.contains(pending.webhook) {
            if Task.isCancelled { break }
            switch try await deliver(pending) {
            case .delivered: delivered += 1
            case .undelivered:
                undelivered += 1
                unreachable.insert(pending.webhook)
            case .pending: break
            }
        }
        return (delivered, undelivered)
    }

    /// Whether the delivery's webhook still exists (a webhook removed during a pass gets no
    /// more POSTs, as `DELETE …/webhooks/{id}` promises).
    func webhookExists(_ pending: PendingDelivery) async throws -> Bool {
        try await store.webhooks(app: pending.alert.app)?.contains { $0.id == pending.webhook } ?? false
    }

    /// Attempts one delivery until it succeeds or has used ``maximumAttempts``; records
    /// each attempt and returns the state it ends in (``DeliveryState/pending`` only when
    /// cancelled between attempts).
    public func deliver(_ pending: PendingDelivery) async throws -> DeliveryState {
        let body = try WebhookPayload(pending.alert, publicURL: publicURL).encoded()
        let headers = [("Content-Type", "application/json"), ("User-Agent", "Framescope-Webhook/1"),
                       ("X-Framescope-Event", "regression"), ("X-Framescope-Delivery", "\(pending.alert.id)-\(pending.webhook)"),
                       ("X-Framescope-Signature", WebhookPayload.signature(of: body, secret: pending.secret))]
        var attempts = pending.attempts
        while attempts < maximumAttempts {
            if attempts > pending.attempts {
                do { try await sleep(backoff(beforeAttempt: attempts + 1)) } catch { return .pending }
            }
            guard try await webhookExists(pending) else { return .pending }
            attempts += 1
            let failure: String
            do {
                let status = try await transport.post(url: pending.url, body: body, headers: headers, timeout: timeout)
                if (200..<300).contains(status) {
                    try await store.recordDelivery(alert: pending.alert.id, webhook: pending.webhook, state: .delivered, attempts: attempts, lastError: nil, now: clock())
                    return .delivered
                }
                failure = "HTTP \(status)"
            } catch {
                failure = Self.describe(error)
            }
            let state: DeliveryState = attempts >= maximumAttempts ? .undelivered : .pending
            try await store.recordDelivery(alert: pending.alert.id, webhook: pending.webhook, state: state, attempts: attempts, lastError: failure, now: clock())
            logger.warning("webhook delivery failed", metadata: [
                "alert": .stringConvertible(pending.alert.id), "webhook": .stringConvertible(pending.webhook),
                "attempt": .stringConvertible(attempts), "error": .string(failure),
            ])
        }
        return .undelivered
    }

    /// A failed attempt in a few words, never the URL's query (it may hold a token).
    static func describe(_ error: any Error) -> String {
        if error is WebhookTimeout { return "timed out" }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            default: return "no response (\(String(describing: error).prefix(120)))"
            }
        }
        return "no response (\(String(describing: type(of: error))))"
    }
}
