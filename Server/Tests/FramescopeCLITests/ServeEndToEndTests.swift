import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FramescopeCore
import FramescopeSimulation
import FramescopeProcessTesting
import Testing

/// A real `framescope serve` process on loopback with a real SQLite file.
final class ServerProcess {
    let server: LineReadingProcess
    let port: Int
    /// The process, for its identifier and termination.
    var process: Process { server.process }

    init(arguments: [String]) throws {
        server = try LineReadingProcess(product: "framescope", arguments: ["serve", "--port", "0"] + arguments)
        // The first line names the bound port.
        let text = server.nextLine() ?? ""
        guard let range = text.range(of: "http://127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            server.process.terminate()
            throw ServerError.noPort(text)
        }
        self.port = port
    }

    enum ServerError: Error { case noPort(String) }

    func stop() {
        process.interrupt()
        process.waitUntilExit()
    }

    func request(_ path: String, method: String = "GET", key: String, body: Data? = nil) async throws -> (Int, Data) {
        try await Self.request(port: port, path, method: method, key: key, body: body)
    }

    static func request(port: Int, _ path: String, method: String = "GET", key: String, body: Data? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

@Suite("framescope serve, end to end", .serialized)
struct ServeEndToEndTests {
    @Test("Ingest through a real server, restart it, and the data is still there")
    func ingestRestartQuery() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        #expect(created.exitCode == 0, "\(created.stderr)")
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        #expect(keys["app"] == "shop")
        let ingestKey = try #require(keys["ingestKey"])
        let readKey = try #require(keys["readKey"])

        var workload = SyntheticWorkload(profile: .moderate, duration: 5, seed: 3)
        let report = PipelineSimulator(display: .fixed(hz: 60), seed: 3).run(&workload).analyze()
        let batch = EventBatch(batchId: "e2e-1", app: AppInfo(id: "shop", version: "1.0", build: "1"),
                               device: DeviceInfo(model: "iPhone14,5", osName: "iOS", osVersion: "18.1", maxRefreshRate: 60),
                               events: [ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: Date().timeIntervalSince1970 - 600),
                                                         duration: 6, context: VisitContext(network: .wifi, lowPowerMode: false),
                                                         report: report.whole, motion: report.motion)])

        let first = try ServerProcess(arguments: ["--db", db])
        let (status, body) = try await first.request("/v1/events", method: "POST", key: ingestKey, body: try JSONEncoder().encode(batch))
        #expect(status == 202, "\(String(decoding: body, as: UTF8.self))")
        let (forbidden, _) = try await first.request("/v1/apps/shop/screens", key: ingestKey)
        #expect(forbidden == 403)
        first.stop()

        let second = try ServerProcess(arguments: ["--db", db])
        defer { second.stop() }
        let (queryStatus, data) = try await second.request("/v1/apps/shop/screens", key: readKey)
        #expect(queryStatus == 200)
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let screens = try #require(json["screens"] as? [[String: Any]])
        #expect(screens.count == 1)
        #expect(screens.first?["visits"] as? Int == 1)
        let stored = try #require(screens.first?["report"] as? [String: Any])
        #expect(stored["droppedFrames"] as? Int == report.whole.droppedFrames)
        let (again, repeatBody) = try await second.request("/v1/events", method: "POST", key: ingestKey, body: try JSONEncoder().encode(batch))
        #expect(again == 202)
        #expect(String(decoding: repeatBody, as: UTF8.self).contains("\"duplicate\":true"))
    }

    /// Creates an app in a fresh database and returns the database path and keys.
    func freshApp(_ directory: TemporaryDirectory) throws -> (db: String, ingestKey: String, readKey: String) {
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        return (db, try #require(keys["ingestKey"]), try #require(keys["readKey"]))
    }

    /// Sends batches of 5 visits from `senders` concurrent tasks until the server stops
    /// answering; `interrupt` signals it once `after` batches were acknowledged (or 120 s
    /// passed, on a very slow machine). Returns the ids that got a 202.
    func streamUntilStopped(_ server: ServerProcess, ingestKey: String, senders: Int = 6, after: Int,
                            interrupt: @escaping @Sendable (Int32) -> Void) async throws -> (acknowledged: [String], bodies: [String: Data]) {
        var workload = SyntheticWorkload(profile: .moderate, duration: 3, seed: 5)
        let report = PipelineSimulator(display: .fixed(hz: 60), seed: 5).run(&workload).analyze()
        let start = Date().timeIntervalSince1970 - 900
        let event = ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: start), duration: 4,
                                     context: VisitContext(network: .wifi, lowPowerMode: false), report: report.whole, motion: report.motion)
        func body(_ id: String) throws -> Data {
            try JSONEncoder().encode(EventBatch(batchId: id, app: AppInfo(id: "shop", version: "1.0", build: "1"),
                                                device: DeviceInfo(model: "iPhone14,5", osName: "iOS", osVersion: "18.1", maxRefreshRate: 60),
                                                events: Array(repeating: event, count: 5)))
        }
        let pid = server.process.processIdentifier
        let port = server.port
        let counter = AcknowledgementCounter()
        return try await withThrowingTaskGroup(of: [(String, Data)].self) { group in
            for sender in 0..<senders {
                group.addTask {
                    var acknowledged: [(String, Data)] = []
                    for index in 0..<100_000 {
                        let id = "s\(sender)-\(index)"
                        let data = try body(id)
                        guard let (status, _) = try? await ServerProcess.request(port: port, "/v1/events", method: "POST", key: ingestKey, body: data) else { break }
                        if status == 202 {
                            acknowledged.append((id, data))
                            await counter.add()
                        }
                    }
                    return acknowledged
                }
            }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(120)
                while await counter.count < after, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                interrupt(pid)
                return []
            }
            var all: [(String, Data)] = []
            for try await part in group { all += part }
            return (all.map(\.0), Dictionary(all, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// Restarts on `db` and checks that every acknowledged batch is stored (re-sending it answers duplicate) and counted once.
    func expectAllStored(db: String, ingestKey: String, readKey: String, acknowledged: [String], bodies: [String: Data]) async throws {
        let restarted = try ServerProcess(arguments: ["--db", db])
        defer { restarted.stop() }
        let (status, data) = try await restarted.request("/v1/apps/shop/screens", key: readKey)
        #expect(status == 200)
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let visits = (json["screens"] as? [[String: Any]])?.first?["visits"] as? Int ?? 0
        #expect(visits >= 5 * acknowledged.count, "\(visits) visits for \(acknowledged.count) acknowledged batches")
        #expect(visits % 5 == 0, "a batch is stored whole or not at all")
        for id in acknowledged {
            let body: Data = try #require(bodies[id])
            let (again, answer) = try await restarted.request("/v1/events", method: "POST", key: ingestKey, body: body)
            #expect(again == 202)
            #expect(String(decoding: answer, as: UTF8.self).contains("\"duplicate\":true"), "batch \(id) was acknowledged but is not stored")
        }
    }

    @Test("SIGKILL during a stream of ingests: every acknowledged batch is there after restart, once")
    func killDuringIngest() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try freshApp(directory)
        let server = try ServerProcess(arguments: ["--db", db])
        let (acknowledged, bodies) = try await streamUntilStopped(server, ingestKey: ingestKey, after: 30) { pid in kill(pid, SIGKILL) }
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .uncaughtSignal)
        #expect(acknowledged.count >= 30, "the stream was running when the server died")
        try await expectAllStored(db: db, ingestKey: ingestKey, readKey: readKey, acknowledged: acknowledged, bodies: bodies)
    }

    @Test("SIGTERM during a stream of ingests: the server finishes in-flight requests, exits 0, and keeps every acknowledged batch")
    func gracefulShutdown() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try freshApp(directory)
        let server = try ServerProcess(arguments: ["--db", db])
        let (acknowledged, bodies) = try await streamUntilStopped(server, ingestKey: ingestKey, after: 30) { pid in kill(pid, SIGTERM) }
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0)
        #expect(acknowledged.count >= 30)
        try await expectAllStored(db: db, ingestKey: ingestKey, readKey: readKey, acknowledged: acknowledged, bodies: bodies)
    }

    @Test("apps list and revoke; a revoked key is refused")
    func appsCommands() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        #expect(try CLI.run(["apps", "create", "Shop", "--db", db]).stdout.contains("ingest key: fsi_"))
        #expect(try CLI.run(["apps", "list", "--db", db]).stdout.contains("active"))
        #expect(try CLI.run(["apps", "revoke", "shop", "--db", db]).exitCode == 0)
        #expect(try CLI.run(["apps", "list", "--db", db]).stdout.contains("revoked"))
        #expect(try CLI.run(["apps", "revoke", "nope", "--db", db]).exitCode == 65)
    }

    @Test("apps rotate: a new read key ends the old one at once; a new ingest key keeps the old one for its grace days; /metrics needs the admin token file")
    func rotateAndAdmin() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        let read = try CLI.run(["apps", "rotate", "shop", "--key", "read", "--db", db, "--format", "json"])
        #expect(read.exitCode == 0, "\(read.stderr)")
        let newRead = try #require((JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any])?["key"] as? String)
        let ingest = try CLI.run(["apps", "rotate", "shop", "--key", "ingest", "--grace-days", "7", "--db", db])
        #expect(ingest.stdout.contains("new ingest key: fsi_") && ingest.stdout.contains("keeps working until"), "\(ingest.stdout)")
        #expect(try CLI.run(["apps", "rotate", "nope", "--key", "read", "--db", db]).exitCode == 65)
        #expect(try CLI.run(["apps", "rotate", "shop", "--key", "read", "--grace-days", "3", "--db", db]).exitCode == 64)

        let tokenFile = directory.url.appendingPathComponent("admin-token").path
        try "admin-token-0123456789abcdef\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let server = try ServerProcess(arguments: ["--db", db, "--admin-token-file", tokenFile])
        defer { server.stop() }
        #expect(try await server.request("/v1/apps/shop/screens", key: try #require(keys["readKey"])).0 == 401)
        #expect(try await server.request("/v1/apps/shop/screens", key: newRead).0 == 200)
        // The old ingest key still sends during its grace period.
        #expect(try await server.request("/v1/events", method: "POST", key: try #require(keys["ingestKey"]), body: Data("{}".utf8)).0 == 400)
        #expect(try await server.request("/metrics", key: newRead).0 == 401)
        #expect(try await server.request("/metrics", key: "admin-token-0123456789abcdef").0 == 200)
        let short = try CLI.run(["serve", "--db", db, "--port", "0", "--admin-token-file", "/nonexistent/token"])
        #expect(short.exitCode == 74)
    }
}

@Suite("framescope loadtest", .serialized)
struct LoadtestTests {
    @Test("loadtest sends at the asked rate to a real collector and reports acknowledgements and latency percentiles")
    func loadtest() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Load", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let result = try await CLI.runOnThread(["loadtest", "--url", "http://127.0.0.1:\(server.port)", "--key", try #require(keys["ingestKey"]),
                                  "--app", "load", "--rate", "200", "--duration", "2", "--batch-size", "10", "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let summary = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(summary["batchesSent"] as? Int == 40)
        #expect(summary["acknowledged"] as? Int == 40)
        let achieved = try #require(summary["achievedEventsPerSecond"] as? Double)
        // Paced: never faster than asked. How close it comes to the rate is a figure of the
        // machine (a starved CI run is slower), measured by the load generator's own runs.
        #expect(achieved > 0 && achieved <= 210, "\(achieved) events/s")
        let latency = try #require(summary["latencyMilliseconds"] as? [String: Double])
        #expect(try #require(latency["p50"]) <= #require(latency["p99"]))
        let (status, data) = try await server.request("/v1/apps/load/screens", key: try #require(keys["readKey"]))
        #expect(status == 200)
        let screens = try #require((JSONSerialization.jsonObject(with: data) as? [String: Any])?["screens"] as? [[String: Any]])
        #expect(screens.compactMap { $0["visits"] as? Int }.reduce(0, +) == 400)

        let refused = try CLI.run(["loadtest", "--url", "http://example.com", "--key", "k"])
        #expect(refused.exitCode == 64)
        #expect(refused.stderr.contains("--url must point at this machine"))
        let wrongKey = try CLI.run(["loadtest", "--url", "http://127.0.0.1:\(server.port)", "--key", "fsi_wrong", "--rate", "50", "--duration", "1", "--batch-size", "10"])
        #expect(wrongKey.exitCode == 74)
        #expect(wrongKey.stderr.contains("HTTP 401"))
    }
}

/// Counts acknowledged batches across the streaming tasks.
actor AcknowledgementCounter {
    private(set) var count = 0

    func add() { count += 1 }
}
