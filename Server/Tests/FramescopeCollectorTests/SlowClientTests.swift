import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// A request to `/v1/events` whose body the test feeds through `source`: declaring
/// `length` bytes, or chunked when `length` is nil.
private func streamedRequest(declaring length: Int?) -> (Request, RequestBody.Source) {
    let (body, source) = RequestBody.makeStream()
    var fields: HTTPFields = [.contentType: "application/json"]
    if let length { fields[.contentLength] = String(length) } else { fields[.transferEncoding] = "chunked" }
    return (Request(head: HTTPRequest(method: .post, scheme: "http", authority: "collector", path: "/v1/events", headerFields: fields), body: body), source)
}

/// A whole request to `/v1/events` holding `batch`.
private func wholeRequest(_ batch: EventBatch) throws -> Request {
    let body = ByteBuffer(data: try jsonData(batch))
    let head = HTTPRequest(method: .post, scheme: "http", authority: "collector", path: "/v1/events",
                           headerFields: [.contentType: "application/json", .contentLength: String(body.readableBytes)])
    return Request(head: head, body: RequestBody(buffer: body))
}

/// An error a test ends a fed body with: the client went away.
private struct ClientGone: Error {}

/// `service.accept(request)` while `feed` writes the body into `source`: the answer within
/// 20 s (the body is ended as a gone client after that), or nil when the feeder finished and
/// 20 s more passed without one.
private func accept(_ request: Request, by service: IngestService, feeding source: RequestBody.Source,
                    _ feed: @escaping @Sendable () async -> Void) async -> Result<IngestResponse, any Error>? {
    await withTaskGroup(of: Result<IngestResponse, any Error>?.self) { group in
        group.addTask {
            await outcome(within: 20, giveUp: { source.finish(ClientGone()) }) {
                try await service.accept(request, app: "shop", logger: Logger(label: "test"))
            }
        }
        group.addTask {
            await feed()
            try? await Task.sleep(for: .seconds(20))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// How `work` ended, or `.failure(TimedOut)` when it took more than `seconds`, after
/// which `giveUp` runs (it must make `work` return, by ending its body).
private struct TimedOut: Error {}
private func outcome<T: Sendable>(within seconds: Double, giveUp: @escaping @Sendable () -> Void,
                                  _ work: @escaping @Sendable () async throws -> T) async -> Result<T, any Error> {
    await withTaskGroup(of: Result<T, any Error>?.self) { group in
        group.addTask {
            do { return .success(try await work()) } catch { return .failure(error) }
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            if Task.isCancelled { return nil }
            giveUp()
            return .failure(TimedOut())
        }
        var first: Result<T, any Error>?
        for await next in group {
            guard let next else { continue }
            if first == nil {
                first = next
                group.cancelAll()
            }
        }
        return first ?? .failure(TimedOut())
    }
}

/// These tests race real deadlines (the body pace) against real sleeps in the cooperative
/// pool; in the whole parallel run on two cores other suites' blocking calls starve that
/// pool for minutes (the fresh-clone CI saw every guard expire), so they run in a test
/// process of their own: scripts/test runs them after the main run with
/// `FRAMESCOPE_ISOLATED_TIMING=1`.
@Suite("Slow request bodies", .serialized, .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_ISOLATED_TIMING"] != nil,
                                                    "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --filter SlowBodyTests"))
struct SlowBodyTests {
    static let now = CollectorRouteTests.now

    /// An ingest service on a fresh store with the app `shop`.
    func service(pace: BodyPace = BodyPace()) async throws -> (IngestService, TemporaryStore) {
        let temporary = try TemporaryStore()
        _ = try await temporary.store.createApp(name: "Shop", id: "shop")
        return (IngestService(store: temporary.store, clock: { Self.now }, pace: pace), temporary)
    }

    @Test("32 bodies declaring 4 MiB and 32 chunked ones, one byte in each, hold 64 bytes of the budget; a normal batch is accepted meanwhile")
    func tricklingBodiesDoNotReserve() async throws {
        let (service, temporary) = try await service()
        let logger = Logger(label: "test")
        #expect(service.limits.maximumBytesInFlight == 128 << 20 && service.limits.maximumBodyBytes == 4 << 20)
        await withTaskGroup(of: Void.self) { group in
            var sources: [RequestBody.Source] = []
            for index in 0..<64 {
                let (request, source) = streamedRequest(declaring: index < 32 ? 4 << 20 : nil)
                sources.append(source)
                group.addTask { _ = try? await service.accept(request, app: "shop", logger: logger) }
                await source.yield(ByteBuffer(string: "{"))
            }
            // Bounded wait until every trickling body holds what it has sent.
            var reserved = 0
            for _ in 0..<500 {
                reserved = await service.budget.reserved
                if reserved >= 64 { break }
                try? await Task.sleep(for: .milliseconds(10))
            }
            #expect(reserved == 64, "the budget charged what the bodies declared, not what they sent")
            let normal = await outcome(within: 30, giveUp: {}) {
                try await service.accept(try wholeRequest(makeBatch(id: "normal", start: Self.now - 600)), app: "shop", logger: logger)
            }
            switch normal {
            case let .success(answer): #expect(answer.accepted == 3 && !answer.duplicate)
            case let .failure(error): Issue.record("a normal batch was refused while others trickled: \(error)")
            }
            for source in sources { source.finish(ClientGone()) }
        }
        #expect(await service.budget.reserved == 0)
        _ = temporary
    }

    @Test("A body that stops after its first byte is answered 408 body_too_slow with Connection: close, and gives its byte back")
    func stalledBody() async throws {
        let (service, temporary) = try await service(pace: BodyPace(grace: 0.05, minimumRate: 100, maximumSeconds: 5))
        let (request, source) = streamedRequest(declaring: 1_000)
        await source.yield(ByteBuffer(string: "{"))
        let result = await outcome(within: 20, giveUp: { source.finish(ClientGone()) }) {
            try await service.accept(request, app: "shop", logger: Logger(label: "test"))
        }
        source.finish()
        switch result {
        case .success: Issue.record("a stalled body was accepted")
        case let .failure(error as CollectorError):
            #expect(error.status == .requestTimeout && error.code == "body_too_slow")
            #expect(error.headers[.connection] == "close")
            #expect(error.message.contains("1 bytes"), "\(error.message)")
        case let .failure(error): Issue.record("no deadline on the body: \(error)")
        }
        #expect(await service.budget.reserved == 0)
        _ = temporary
    }

    @Test("A body that keeps the rate but is still arriving after maximumSeconds is answered 408")
    func wholeBodyLimit() async throws {
        let (service, temporary) = try await service(pace: BodyPace(grace: 0.01, minimumRate: 1, maximumSeconds: 0.3))
        let (request, source) = streamedRequest(declaring: 1 << 20)
        let result = await accept(request, by: service, feeding: source) {
            // 100 bytes every 20 ms, far above 1 byte/s, for up to 10 s.
            for _ in 0..<500 where !Task.isCancelled {
                await source.yield(ByteBuffer(repeating: UInt8(ascii: " "), count: 100))
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        source.finish()
        if case let .failure(error as CollectorError)? = result {
            #expect(error.status == .requestTimeout && error.code == "body_too_slow")
        } else {
            Issue.record("no whole-body limit: \(String(describing: result))")
        }
        #expect(await service.budget.reserved == 0)
        _ = temporary
    }

    @Test("A body declaring more than maximumBodyBytes is refused 413 before a byte of it is read")
    func declaredTooLarge() async throws {
        let (service, temporary) = try await service()
        let (request, source) = streamedRequest(declaring: (4 << 20) + 1)
        let result = await outcome(within: 20, giveUp: { source.finish(ClientGone()) }) {
            try await service.accept(request, app: "shop", logger: Logger(label: "test"))
        }
        source.finish()
        if case let .failure(error as CollectorError) = result {
            #expect(error.status == .contentTooLarge && error.code == "body_too_large")
        } else {
            Issue.record("not refused before reading: \(result)")
        }
        #expect(await service.budget.reserved == 0)
        _ = temporary
    }

    @Test("A chunked body that grows past maximumBodyBytes is refused 413 and gives back what it held")
    func chunkedTooLarge() async throws {
        let (service, temporary) = try await service()
        let (request, source) = streamedRequest(declaring: nil)
        let result = await accept(request, by: service, feeding: source) {
            for _ in 0..<80 where !Task.isCancelled { await source.yield(ByteBuffer(repeating: UInt8(ascii: " "), count: 64 << 10)) }
        }
        source.finish()
        if case let .failure(error as CollectorError)? = result {
            #expect(error.status == .contentTooLarge && error.code == "body_too_large")
        } else {
            Issue.record("a 5 MiB chunked body was not refused: \(String(describing: result))")
        }
        #expect(await service.budget.reserved == 0)
        _ = temporary
    }

    @Test("The pace's deadline: grace plus one second per minimumRate bytes, never past maximumSeconds",
          arguments: [(0, 10.0), (3, 10.0029296875), (20_480, 30.0), (112_640, 120.0), (4 << 20, 120.0)])
    func deadline(received: Int, seconds: Double) {
        #expect(BodyPace().deadline(received: received) == seconds)
    }
}

/// Collects the level of every line logged.
private final class LevelLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(Logger.Level, String)] = []
    func append(_ level: Logger.Level, _ message: String) { lock.withLock { lines.append((level, message)) } }
    var levels: [Logger.Level] { lock.withLock { lines.map(\.0) } }
    var all: [(Logger.Level, String)] { lock.withLock { lines } }
}

private struct LevelLogHandler: LogHandler {
    let log: LevelLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { log.append(event.level, event.message.description) }
}

@Suite("Malformed framing and a full disk")
struct FramingAndFullDiskTests {
    static let now = CollectorRouteTests.now

    /// A collector on `temporary`'s store with the app `shop`, logging into `log`.
    private func withCollector(_ temporary: TemporaryStore, log: LevelLog,
                       _ body: @escaping @Sendable (any TestClientProtocol, AppCredentials) async throws -> Void) async throws {
        let shop = try await temporary.store.createApp(name: "Shop", id: "shop")
        let router = Collector(store: temporary.store, clock: { Self.now }).router
        let logger = Logger(label: "test") { _ in LevelLogHandler(log: log) }
        try await Application(router: router, logger: logger).test(.router) { client in try await body(client, shop) }
    }

    @Test("Transfer-Encoding codings: chunked alone is read; anything else is 400 or 501 and closes", arguments: [
        ("chunked", nil), ("Chunked ", nil), ("xchunked", 400), ("gzip", 400), ("chunked, chunked", 400), ("chunked, gzip", 400),
        ("gzip, chunked", 501), ("identity, chunked", 501),
    ] as [(String, Int?)])
    func codings(value: String, status: Int?) {
        let problem = TransferCoding.problem(in: [.transferEncoding: value])
        #expect(problem?.status.code == status)
        if let problem { #expect(problem.headers[.connection] == "close" && problem.field == "Transfer-Encoding") }
    }

    @Test("Transfer-Encoding: xchunked is answered 400 invalid_transfer_encoding, gzip, chunked 501, with no error-level log line")
    func malformedTransferEncoding() async throws {
        let log = LevelLog()
        let temporary = try TemporaryStore()
        try await withCollector(temporary, log: log) { client, shop in
            let body = ByteBuffer(data: try jsonData(makeBatch(id: "framing", start: Self.now - 600)))
            let bad = try await client.execute(uri: "/v1/events", method: .post,
                                               headers: [.authorization: "Bearer \(shop.ingestKey)", .transferEncoding: "xchunked"], body: body)
            #expect(bad.status == .badRequest)
            #expect(bad.headers[.connection] == "close")
            #expect(try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: bad.body)).error.code == "invalid_transfer_encoding")
            let unsupported = try await client.execute(uri: "/v1/events", method: .post,
                                                       headers: [.authorization: "Bearer \(shop.ingestKey)", .transferEncoding: "gzip, chunked"], body: body)
            #expect(unsupported.status == .notImplemented)
            #expect(try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: unsupported.body)).error.code == "unsupported_transfer_encoding")
        }
        #expect(!log.levels.isEmpty)
        #expect(!log.levels.contains { $0 >= .error }, "\(log.all)")
        _ = temporary
    }

    @Test("A full disk (SQLITE_FULL) is answered 503 store_unavailable with Retry-After, and the batch sent again is stored whole")
    func fullDisk() async throws {
        let log = LevelLog()
        let temporary = try TemporaryStore()
        let store = temporary.store
        try await withCollector(temporary, log: log) { client, shop in
            // The database may not grow: the next page it needs fails with SQLITE_FULL.
            let pages = try await store.database.writeWithoutTransaction { db in
                let pages = try #require(try Int.fetchOne(db, sql: "PRAGMA page_count"))
                try db.execute(sql: "PRAGMA max_page_count = \(pages)")
                return pages
            }
            let body = ByteBuffer(data: try jsonData(makeBatch(id: "disk", count: 20, start: Self.now - 600)))
            let full = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: body)
            #expect(full.status == .serviceUnavailable)
            #expect(full.headers[.retryAfter] == "60")
            #expect(try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: full.body)).error.code == "store_unavailable")
            #expect(try await store.rawEventCount(app: "shop") == 0)
            // Space is freed; the device sends the batch again: it is new, and stored whole.
            try await store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages * 1_000)") }
            let again = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(shop.ingestKey)"], body: body)
            #expect(again.status == .accepted)
            let answer = try JSONDecoder().decode(IngestResponse.self, from: Data(buffer: again.body))
            #expect(answer.accepted == 20 && !answer.duplicate)
            #expect(try await store.rawEventCount(app: "shop") == 20)
        }
        // The full disk is the operator's to fix: logged once, at error, as the refusal.
        #expect(log.all.filter { $0.0 >= .error }.map(\.1) == ["request refused"])
        _ = temporary
    }
}
