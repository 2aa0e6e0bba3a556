import Foundation
import FramescopeCore
import FramescopeProcessTesting
import FramescopeSimulation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import NIOCore
import Testing

@Suite("framescope export and analyze of an export", .serialized)
struct ExportCLITests {
    @Test("export from a real collector, then analyze it: the per-screen figures equal the collector's")
    func exportThenAnalyze() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Load", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        let readKey = try #require(keys["readKey"])
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)"
        let sent = try await CLI.runOnThread(["loadtest", "--url", url, "--key", try #require(keys["ingestKey"]), "--app", "load",
                                "--rate", "150", "--duration", "2", "--batch-size", "10"])
        #expect(sent.exitCode == 0, "\(sent.stderr)")

        let file = directory.url.appendingPathComponent("events.ndjson").path
        let exported = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--output", file])
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 300)
        #expect(lines.allSatisfy { $0.hasPrefix(#"{"cursor":""#) })

        let analyzed = try CLI.run(["analyze", file, "--format", "json"])
        #expect(analyzed.exitCode == 0, "\(analyzed.stderr)")
        let report = try JSONDecoder().decode(RecordingReport.self, from: Data(analyzed.stdout.utf8))
        let (status, data) = try await server.request("/v1/apps/load/screens", key: readKey)
        #expect(status == 200)
        struct Screens: Decodable {
            struct Screen: Decodable { var screen: String; var visits: Int; var report: FrameReport; var motion: FrameReport? }
            var screens: [Screen]
        }
        let screens = try JSONDecoder().decode(Screens.self, from: data).screens
        // One segment per screen that moved: that screen's motion, as the collector merged it.
        let moved = screens.filter { $0.motion != nil }
        #expect(!moved.isEmpty)
        #expect(report.segments.map(\.label) == moved.map(\.screen))
        for (segment, screen) in zip(report.segments, moved) {
            #expect(segment.report.frames == screen.motion?.frames)
            #expect(segment.report.droppedFrames == screen.motion?.droppedFrames)
            #expect(segment.report.hitchTimeNanoseconds == screen.motion?.hitchTimeNanoseconds)
        }
        #expect(report.whole.frames == screens.map(\.report.frames).reduce(0, +))
        #expect(report.whole.hitchTimeNanoseconds == FrameReport.merged(screens.map(\.report)).hitchTimeNanoseconds)

        // The same through a pipe, as CSV, and resumed after a cursor.
        let csv = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--csv"])
        #expect(csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == 301)
        let cursor = String(lines[99].dropFirst(11).prefix { $0 != "\"" })
        let rest = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--after", cursor])
        #expect(rest.stdout.split(separator: "\n") == Array(lines.dropFirst(100)))

        // Refusals: a wrong key (74), a filter the collector refuses (64), a bad cursor (64).
        let wrongKey = try CLI.run(["export", "--url", url, "--key", "fsr_wrong", "--app", "load"])
        #expect(wrongKey.exitCode == 74 && wrongKey.stderr.contains("401"))
        let badFilter = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--filter", "thermalState=warm"])
        #expect(badFilter.exitCode == 64 && badFilter.stderr.contains("thermalState must be one of"))
        let unknownFilter = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--filter", "colour=red"])
        #expect(unknownFilter.exitCode == 64 && unknownFilter.stderr.contains("unknown dimension 'colour'"))
        // Filters the registry knows reach the collector: exactly the lines that match both.
        let filtered = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--filter", "network=wifi", "--filter", "lowPower=false"])
        #expect(filtered.exitCode == 0, "\(filtered.stderr)")
        let expectedLines = lines.filter { $0.contains(#""network":"wifi""#) && $0.contains(#""lowPowerMode":false"#) }
        #expect(filtered.stdout.split(separator: "\n") == expectedLines && !expectedLines.isEmpty && expectedLines.count < lines.count)
        let badCursor = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--after", "zz"])
        #expect(badCursor.exitCode == 64 && badCursor.stderr.contains("after"))
        let badTag = try CLI.run(["export", "--url", url, "--key", readKey, "--app", "load", "--tag", "novalue"])
        #expect(badTag.exitCode == 64)
    }

    @Test("A connection cut mid-line is resumed after the last whole line: no line lost, none repeated")
    func resumeAfterCut() async throws {
        let lines = (1...6).map { #"{"cursor":"000000000000000\#($0)-\#($0)","event":{"n":\#($0)}}"# + "\n" }
        let requests = RequestLog()
        let router = Router()
        router.get("/v1/apps/shop/events") { request, _ -> Response in
            let after = request.uri.queryParameters["after"].map(String.init)
            await requests.add(after ?? "")
            let start = after.flatMap { cursor in lines.firstIndex { $0.contains(cursor) } }.map { $0 + 1 } ?? 0
            let first = start == 0
            let body = ResponseBody { writer in
                if first {
                    // Two whole lines and half of the third, then the connection breaks.
                    try await writer.write(ByteBuffer(string: lines[0] + lines[1] + String(lines[2].prefix(20))))
                    throw CancellationError()
                }
                try await writer.write(ByteBuffer(string: lines[start...].joined()))
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
        }
        let port = PortBox()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in await port.set(channel.localAddress?.port ?? 0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            var bound = 0
            for _ in 0..<200 where bound == 0 {
                try await Task.sleep(for: .milliseconds(25))
                bound = await port.value
            }
            // On a thread of its own: this server answers from the cooperative pool, which a
            // blocking wait here would shrink to one thread (two cores) or none.
            let result = try await CLI.runOnThread(["export", "--url", "http://127.0.0.1:\(bound)", "--key", "fsr_x", "--app", "shop"])
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.stdout == lines.joined())
            #expect(result.stderr.contains("resuming after 0000000000000002-2"))
            let sent = await requests.all
            #expect(sent == ["", "0000000000000002-2"], "cursors sent: \(sent); stderr: \(result.stderr)")
            group.cancelAll()
        }
    }

    actor RequestLog {
        var all: [String] = []
        func add(_ value: String) { all.append(value) }
    }

    actor PortBox {
        var value = 0
        func set(_ port: Int) { value = port }
    }
}

@Suite("The export of legal but unusual JSON (issue 30, item 7)", .serialized)
struct ExportOfUnusualJSONTests {
    @Test("A pretty-printed event and one with a 5 MiB unknown member export as one line each, and analyze counts both visits")
    func prettyAndHugeUnknownMember() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        let created = try CLI.run(["apps", "create", "Shop", "--db", db, "--format", "json"])
        let keys = try #require(JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
        let (ingestKey, readKey) = (try #require(keys["ingestKey"]), try #require(keys["readKey"]))
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }

        var workload = SyntheticWorkload(profile: .moderate, duration: 4, seed: 5)
        let report = PipelineSimulator(display: .fixed(hz: 60), seed: 5).run(&workload).analyze()
        let event = ScreenVisitEvent(screen: "Feed", startedAt: ISO8601.format(unixSeconds: Date().timeIntervalSince1970 - 900), duration: 5,
                                     context: VisitContext(network: .wifi, lowPowerMode: false), report: report.whole, motion: report.motion)
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let pretty = String(decoding: try encoder.encode(event), as: UTF8.self)
        #expect(pretty.split(separator: "\n").count > 10, "pretty-printed over many lines")
        encoder.outputFormatting = [.sortedKeys]
        var second = event
        second.screen = "Search"
        let compact = String(decoding: try encoder.encode(second), as: UTF8.self)
        let huge = "{\"unknown\":\"" + String(repeating: "x", count: 5 << 20) + "\"," + compact.dropFirst()
        let body = "{\"batchId\":\"unusual\",\"app\":{\"id\":\"shop\",\"version\":\"1.0\",\"build\":\"1\"},"
            + "\"device\":{\"model\":\"iPhone14,5\",\"osName\":\"iOS\",\"osVersion\":\"18.1\",\"maxRefreshRate\":60},"
            + "\"events\":[\n" + pretty + ",\n" + huge + "\n]}"
        let gzipped = try gzip(Data(body.utf8))
        #expect(gzipped.count < 4 << 20, "sent within the 4 MiB body limit")
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/v1/events")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(ingestKey)", forHTTPHeaderField: "Authorization")
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = gzipped
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 202, "\(String(decoding: data, as: UTF8.self))")

        let file = directory.url.appendingPathComponent("events.ndjson").path
        let exported = try await CLI.runOnThread(["export", "--url", "http://127.0.0.1:\(server.port)", "--key", readKey, "--app", "shop", "--output", file])
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 2, "one line per event")
        #expect(text.utf8.count < 20_000, "the unknown member is not stored")
        let analyzed = try CLI.run(["analyze", file, "--format", "json"])
        #expect(analyzed.exitCode == 0, "\(analyzed.stderr)")
        let recording = try JSONDecoder().decode(RecordingReport.self, from: Data(analyzed.stdout.utf8))
        #expect(recording.whole.frames == report.whole.frames * 2, "both visits counted")
    }

    /// `data` compressed with gzip by the system's `gzip`.
    func gzip(_ data: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(data)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return result
    }
}
