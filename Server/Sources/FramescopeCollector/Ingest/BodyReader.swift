import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// Reads a request body within a byte budget and a pace, inflating gzip: what every route
/// that takes a large body from outside uses (`POST /v1/events`, `POST /v1/metrickit`,
/// `POST /v1/apps/{app}/symbols`).
struct BodyReader: Sendable {
    /// Largest body as sent, in bytes.
    var maximumBodyBytes: Int
    /// Largest body after gzip decompression, in bytes.
    var maximumDecompressedBytes: Int
    /// The bytes every request of the route holds at once.
    let budget: ByteBudget
    /// How slowly a body may arrive.
    let pace: BodyPace

    /// Calls `work` with `request`'s body, read and decompressed within the byte budget,
    /// and releases the budget when it returns.
    ///
    /// The budget is charged by bytes actually received, chunk by chunk as they arrive, so
    /// a connection that declares `Content-Length: 4194304` and sends one byte holds one
    /// byte of it, and a chunked body is charged the same way. A body must keep ``pace``
    /// (``receive(_:held:)``). A gzip body also holds ``maximumDecompressedBytes``
    /// while it inflates, then only its inflated size.
    /// - Throws: ``CollectorError``: 413 `body_too_large` for a body that says or turns out
    ///   to be over ``maximumBodyBytes`` (before reading it when it says so),
    ///   415 for an encoding other than gzip (before reading it), 503 `saturated` when
    ///   the budget is full, 408 `body_too_slow`; what `work` throws.
    func withBody<Result: Sendable>(of request: Request, _ work: (ByteBuffer) async throws -> Result) async throws -> Result {
        try await withSizedBody(of: request) { body, _ in try await work(body) }
    }

    /// ``withBody(of:_:)``, with the bytes the body was sent as (gzip as received, plain as
    /// is) handed to `work` beside it.
    func withSizedBody<Result: Sendable>(of request: Request, _ work: (ByteBuffer, Int) async throws -> Result) async throws -> Result {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > maximumBodyBytes {
            throw CollectorError.bodyTooLarge(maximumBodyBytes)
        }
        let gzip: Bool
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity":
            gzip = false
        case "gzip":
            gzip = true
        case let encoding?:
            throw CollectorError(.unsupportedMediaType, .unsupportedEncoding, field: "Content-Encoding",
                                 message: "Content-Encoding '\(encoding)' is not accepted; send plain JSON or gzip")
        }
        // Bytes of the budget this request holds; read by the release after every child
        // task of `receive` has ended, so nothing reserved is ever left behind.
        let held = NIOLockedValueBox(0)
        do {
            let (body, sent) = try await read(request, gzip: gzip, held: held)
            let result = try await work(body, sent)
            await budget.release(held.withLockedValue { $0 })
            return result
        } catch {
            await budget.release(held.withLockedValue { $0 })
            throw error
        }
    }

    /// The body, inflated when `gzip`, and the bytes it was sent as; `held` grows by what is
    /// reserved for it.
    private func read(_ request: Request, gzip: Bool, held: NIOLockedValueBox<Int>) async throws -> (ByteBuffer, Int) {
        let body = try await receive(request.body, held: held)
        let sent = body.readableBytes
        guard gzip else { return (body, sent) }
        guard await budget.reserve(maximumDecompressedBytes) else { throw CollectorError.saturated }
        held.withLockedValue { $0 += maximumDecompressedBytes }
        let inflated = try gunzip(body, limit: maximumDecompressedBytes)
        // The compressed bytes are dropped with `body`: keep only what the inflated body holds.
        let unused = held.withLockedValue { held in
            let unused = max(0, held - inflated.readableBytes)
            held -= unused
            return unused
        }
        await budget.release(unused)
        return (inflated, sent)
    }

    /// The whole of `body`, each chunk reserved from the budget as it arrives, read while
    /// a second task holds it to ``pace``: when the next bytes are not in by
    /// ``BodyPace/deadline(received:)``, the read is cancelled and this throws 408.
    /// - Throws: ``CollectorError``: 413, 503 `saturated`, 408 `body_too_slow`; the
    ///   connection's error when it fails mid-body.
    private func receive(_ body: RequestBody, held: NIOLockedValueBox<Int>) async throws -> ByteBuffer {
        let received = NIOLockedValueBox(0)
        let started = ContinuousClock.now
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var collected = ByteBuffer()
                for try await chunk in body {
                    let count = chunk.readableBytes
                    guard count <= maximumBodyBytes - collected.readableBytes else { throw CollectorError.bodyTooLarge(maximumBodyBytes) }
                    guard await budget.reserve(count) else { throw CollectorError.saturated }
                    held.withLockedValue { $0 += count }
                    received.withLockedValue { $0 += count }
                    if collected.readableBytes == 0 { collected = chunk } else { collected.writeImmutableBuffer(chunk) }
                }
                return collected
            }
            group.addTask {
                while true {
                    let bytes = received.withLockedValue { $0 }
                    let deadline = started.advanced(by: .seconds(pace.deadline(received: bytes)))
                    let now = ContinuousClock.now
                    if now >= deadline {
                        throw CollectorError.bodyTooSlow(pace, received: bytes, seconds: Double((now - started).components.seconds))
                    }
                    try await Task.sleep(until: deadline, clock: .continuous)
                }
            }
            // The first to finish decides: the whole body, or the pace's 408. The other
            // is cancelled, and the group waits for it before returning.
            while let next = try await group.next() {
                if let whole = next {
                    group.cancelAll()
                    return whole
                }
            }
            throw CancellationError()
        }
    }
}
