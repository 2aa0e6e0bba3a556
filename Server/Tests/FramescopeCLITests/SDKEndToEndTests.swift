import Foundation
import FramescopeProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `FramescopeExample` run as a child process; it prints one line per visit stored.
func startExample(_ arguments: [String]) throws -> LineReadingProcess {
    try LineReadingProcess(product: "FramescopeExample", arguments: arguments)
}

/// Runs the built `FramescopeExample` to its end and captures its output and its error.
func runExample(_ arguments: [String]) throws -> CLIResult {
    try CLI.runProduct(builtProduct(named: "FramescopeExample"), arguments)
}

/// The screens of the example's "stored visit N: Screen, …" lines among `lines`.
func storedScreens(_ lines: [String]) -> [String] {
    lines.compactMap { line in
        guard line.hasPrefix("stored visit "), let colon = line.firstIndex(of: ":") else { return nil }
        return line[line.index(after: colon)...].split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

@Suite("The SDK end to end: FramescopeExample against framescope serve", .serialized)
struct SDKEndToEndTests {
    /// Visits per screen as the query API counts them.
    func visitsPerScreen(_ server: ServerProcess, readKey: String) async throws -> [String: Int] {
        let (status, data) = try await server.request("/v1/apps/shop/screens", key: readKey)
        #expect(status == 200)
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let screens = json["screens"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: screens.compactMap { entry in
            (entry["screen"] as? String).map { ($0, entry["visits"] as? Int ?? 0) }
        })
    }

    @Test("FramescopeExample measures, flushes and exits 0 once every visit is acknowledged; the visits are in the query API; visits of exactly the 1 s minimum are kept (the light ones were dropped as 0.98 s)")
    func exampleAgainstServe() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try ServeEndToEndTests().freshApp(directory)
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let example = try startExample(["--collector", "http://127.0.0.1:\(server.port)", "--ingest-key", ingestKey,
                                          "--app", "shop", "--screens", "4", "--seconds", "4", "--batch-events", "3"])
        var lines: [String] = []
        while let line = example.nextLine() { lines.append(line) }
        example.process.waitUntilExit()
        #expect(example.process.terminationStatus == 0, "\(lines)")
        let stored = storedScreens(lines)
        #expect(stored == ["Feed", "Search", "Chat", "Profile"])
        #expect(lines.last?.hasPrefix("delivered: all; visits stored 4, accepted by the collector 4") == true, "\(lines.last ?? "")")
        let counted = try await visitsPerScreen(server, readKey: readKey)
        #expect(counted == ["Feed": 1, "Search": 1, "Chat": 1, "Profile": 1])
    }

    @Test("FramescopeExample with another app's id exits 1 naming the collector's 403; nothing is stored and the visits stay queued")
    func exampleWithWrongApp() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try ServeEndToEndTests().freshApp(directory)
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let queue = directory.url.appendingPathComponent("queue")
        let result = try runExample(["--collector", "http://127.0.0.1:\(server.port)", "--ingest-key", ingestKey,
                                     "--app", "wrong", "--screens", "2", "--seconds", "3", "--batch-events", "1",
                                     "--queue", queue.path])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.exitCode == 1, "\(result.stdout)\(result.stderr)")
        #expect(storedScreens(lines) == ["Feed", "Search"])
        #expect(lines.last?.hasPrefix("delivered: not all; visits stored 2, accepted by the collector 0") == true, "\(lines.last ?? "")")
        #expect(result.stderr.contains("HTTP 403") && result.stderr.contains("wrong_app"), "\(result.stderr)")
        #expect(try await visitsPerScreen(server, readKey: readKey).isEmpty)
        let kept = try FileManager.default.contentsOfDirectory(atPath: queue.path).filter { $0.hasPrefix("batch-") }
        #expect(kept.count == 2, "\(kept)")
    }

    @Test("Killed with SIGKILL while the collector is down, restarted once it is up: every stored visit arrives exactly once")
    func killWhileCollectorDown() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try ServeEndToEndTests().freshApp(directory)
        let queue = directory.url.appendingPathComponent("queue").path

        // Nothing listens on port 9: every upload fails and the batches wait on disk.
        let first = try startExample(["--collector", "http://127.0.0.1:9", "--ingest-key", ingestKey, "--app", "shop",
                                        "--screens", "12", "--seconds", "14", "--queue", queue, "--batch-events", "3"])
        var lines: [String] = []
        while let line = first.nextLine() {
            lines.append(line)
            // Kill right after a visit was stored: batches sealed (3 per batch) and one
            // visit in the journal, while uploads keep failing.
            if storedScreens(lines).count == 4 {
                first.signal(SIGKILL)
                break
            }
        }
        while let line = first.nextLine() { lines.append(line) }
        first.process.waitUntilExit()
        #expect(first.process.terminationReason == .uncaughtSignal)
        let stored = storedScreens(lines)
        #expect(stored.count >= 4)

        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        // The restarted process records nothing new: it delivers what the killed one queued.
        let second = try startExample(["--collector", "http://127.0.0.1:\(server.port)", "--ingest-key", ingestKey,
                                         "--app", "shop", "--screens", "0", "--queue", queue])
        var secondLines: [String] = []
        while let line = second.nextLine() { secondLines.append(line) }
        second.process.waitUntilExit()
        #expect(second.process.terminationStatus == 0, "\(secondLines)")

        var expected: [String: Int] = [:]
        for screen in stored { expected[screen, default: 0] += 1 }
        let counted = try await visitsPerScreen(server, readKey: readKey)
        #expect(counted == expected, "stored before the kill: \(stored)")
        #expect(secondLines.last?.contains("accepted by the collector \(stored.count)") == true, "\(secondLines.last ?? "")")
    }

    @Test("A hang the Example dies in (kill -9) arrives at the next launch as a fatal hang of Checkout, grouped under freezeMainThread() with the symbols uploaded first; its stalls group under renderHeavyFrame(until:)")
    func fatalHangAcrossKill() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try ServeEndToEndTests().freshApp(directory)
        let queue = directory.url.appendingPathComponent("queue")
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let collector = "http://127.0.0.1:\(server.port)"
        // The build's symbols first, as an Xcode build phase uploads them: hangs are then
        // grouped per function as they arrive.
        let upload = try CLI.run(["symbols", "upload", "--app", "shop", "--db", db, builtProduct(named: "FramescopeExample").path])
        #expect(upload.exitCode == 0, "\(upload.stderr)")

        // Visit 2 (Search) stalls its main thread 0.6 s; then the main thread freezes on Checkout.
        let first = try startExample(["--collector", collector, "--ingest-key", ingestKey, "--app", "shop",
                                        "--screens", "3", "--seconds", "6", "--queue", queue.path, "--fatal-hang"])
        var lines: [String] = []
        while let line = first.nextLine() {
            lines.append(line)
            if line.hasPrefix("fatal hang under way") {
                first.signal(SIGKILL)
                break
            }
        }
        first.process.waitUntilExit()
        #expect(first.process.terminationReason == .uncaughtSignal, "\(lines)")
        #expect(lines.last == "fatal hang under way on Checkout", "\(lines)")
        #expect(storedScreens(lines) == ["Feed", "Search", "Chat"])
        let record = queue.appendingPathComponent("hang-in-progress.json")
        #expect(FileManager.default.fileExists(atPath: record.path), "the killed process left its record")

        // The next launch measures nothing and delivers what is queued, the fatal hang with it.
        let second = try startExample(["--collector", collector, "--ingest-key", ingestKey, "--app", "shop",
                                         "--screens", "0", "--queue", queue.path])
        var secondLines: [String] = []
        while let line = second.nextLine() { secondLines.append(line) }
        second.process.waitUntilExit()
        #expect(second.process.terminationStatus == 0, "\(secondLines)")
        #expect(!FileManager.default.fileExists(atPath: record.path))
        #expect(try await visitsPerScreen(server, readKey: readKey) == ["Feed": 1, "Search": 1, "Chat": 1])

        let (status, data) = try await server.request("/v1/apps/shop/hangs?from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z",
                                                      key: readKey)
        #expect(status == 200)
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let groups = json["groups"] as? [[String: Any]] ?? []
        func symbols(_ group: [String: Any]) -> [String] {
            (group["stack"] as? [[String: Any]] ?? []).compactMap { $0["symbol"] as? String }
        }
        let fatal = try #require(groups.first { ($0["fatal"] as? Int ?? 0) > 0 }, "\(groups)")
        #expect(fatal["fatal"] as? Int == 1 && fatal["hangs"] as? Int == 1)
        #expect(fatal["screens"] as? [String] == ["Checkout"])
        #expect(fatal["appVersions"] as? [String] == ["1.0.0"])
        #expect((fatal["signature"] as? String)?.hasSuffix("`freezeMainThread()") == true, "\(fatal["signature"] ?? "")")
        #expect(symbols(fatal).contains("freezeMainThread()"), "\(symbols(fatal))")
        #expect(((fatal["duration"] as? Double) ?? 0) >= 0.3)
        // The 0.6 s stall on Search: sampled in renderHeavyFrame(until:), the Example's own function.
        let stall = try #require(groups.first { ($0["screens"] as? [String]) == ["Search"] }, "\(groups)")
        #expect((stall["signature"] as? String)?.hasSuffix("`renderHeavyFrame(until:)") == true, "\(stall)")
        #expect(stall["fatal"] as? Int == 0)
    }
}
