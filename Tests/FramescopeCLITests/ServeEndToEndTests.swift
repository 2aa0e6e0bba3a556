import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FramescopeCore
import Testing

/// A real `framescope serve` process on loopback with a real SQLite file.
final class ServerProcess {
    let process = Process()
    let port: Int
    let output: Pipe

    init(arguments: [String]) throws {
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--port", "0"] + arguments
        output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line names the bound port.
        var text = ""
        let deadline = Date().addingTimeInterval(120)
        while !text.contains("\n"), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let range = text.range(of: "http://127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
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
}
