import Foundation
import FramescopeCore
import FramescopeProcessTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 35 end to end: the Example with only a collector and a key (facts read from this
/// machine, the app from the key, the installation id kept in the queue's folder), and
/// MetricKit payloads forwarded by the SDK through a real collector.
@Suite("The SDK set up by itself: FramescopeExample with a collector and a key", .serialized)
struct SDKSetupEndToEndTests {
    /// `installation <id> sampled; device <model>, <os> <version>` of a run's output.
    static func installationLine(_ output: String) -> (id: String, device: String)? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("installation ") }) else { return nil }
        let words = line.split(separator: " ")
        guard words.count > 2, let device = line.range(of: "; device ") else { return nil }
        return (String(words[1]), String(line[device.upperBound...]))
    }

    /// What a shell command prints, trimmed.
    static func shell(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("With only --collector and --ingest-key the Example delivers under the key's app, with this machine's model and OS; two runs on one queue are one installation")
    func onlyCollectorAndKey() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try ServeEndToEndTests().freshApp(directory)
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let queue = directory.url.appendingPathComponent("queue").path
        let base = ["--collector", "http://127.0.0.1:\(server.port)", "--ingest-key", ingestKey]
        let first = try runExample(base + ["--queue", queue, "--screens", "2", "--seconds", "3"])
        #expect(first.exitCode == 0, "\(first.stdout)\(first.stderr)")
        let second = try runExample(base + ["--queue", queue, "--screens", "2", "--seconds", "3"])
        #expect(second.exitCode == 0, "\(second.stdout)\(second.stderr)")
        // Another installation, sampled at all but a millionth (out only if its point is
        // above 0.999999): its batches say so.
        let other = try runExample(base + ["--screens", "2", "--seconds", "3", "--sample-rate", "0.999999"])
        #expect(other.exitCode == 0, "\(other.stdout)\(other.stderr)")
        let one = try #require(Self.installationLine(first.stdout)), two = try #require(Self.installationLine(second.stdout))
        let three = try #require(Self.installationLine(other.stdout))
        #expect(one.id == two.id && one.id != three.id)
        let stored = try String(contentsOfFile: queue + "/installation-id", encoding: .utf8)
        #expect(stored == one.id)

        let model = try Self.shell("uname -m")
        let osVersion = try Self.shell(". /etc/os-release && printf '%s' \"${VERSION_ID:-}\"")
        #expect(one.device.hasPrefix("\(model), "), "\(one.device)")
        #expect(osVersion.isEmpty || one.device.hasSuffix(" \(osVersion)"), "\(one.device)")
        // Every visit the three runs had accepted, from this machine's model, from two installations.
        let accepted = [first, second, other].map { Self.accepted($0.stdout) }
        #expect(accepted.allSatisfy { $0 >= 1 }, "\(accepted)")
        let (status, data) = try await server.request("/v1/apps/shop/percentiles?deviceModel=\(model)", key: readKey)
        #expect(status == 200)
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["visits"] as? Int == accepted.reduce(0, +), "\(json)")
        #expect(json["devices"] as? Int == 2, "\(json)")
        // Which rates they came at.
        let (ratesStatus, rates) = try await server.request("/v1/apps/shop/sample-rates", key: readKey)
        #expect(ratesStatus == 200)
        let ratesObject = try #require(JSONSerialization.jsonObject(with: rates) as? [String: Any])
        let listed = ratesObject["sampleRates"] as? [[String: Any]] ?? []
        #expect(ratesObject["otherRates"] as? Int == 0, "\(ratesObject)")
        let byRate = Dictionary(uniqueKeysWithValues: listed.compactMap { entry in
            (entry["sampleRate"] as? Double).map { ($0, entry["visits"] as? Int ?? 0) }
        })
        #expect(byRate == [1: accepted[0] + accepted[1], 0.999999: accepted[2]], "\(listed)")
    }

    /// `N` of the run's `accepted by the collector N`.
    static func accepted(_ output: String) -> Int {
        guard let range = output.range(of: "accepted by the collector ") else { return -1 }
        return Int(output[range.upperBound...].prefix { $0.isNumber }) ?? -1
    }

    @Test("MetricKit payloads forwarded by the SDK: kept queued through a 403, delivered once the key is right, in the MetricKit route and the overview's Apple table")
    func metricKitForwarded() async throws {
        let directory = try TemporaryDirectory()
        let (db, ingestKey, readKey) = try ServeEndToEndTests().freshApp(directory)
        let server = try ServerProcess(arguments: ["--db", db])
        defer { server.stop() }
        let queue = directory.url.appendingPathComponent("queue")
        // A real payload of the corpus (an Xcode-simulated diagnostic with a hang), moved to
        // yesterday, and a day's metric payload of the Example's version.
        let yesterday = ISO8601.format(unixSeconds: Date().timeIntervalSince1970 - 86_400).prefix(10)
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus/metrickit/meter_xcode-simulated_ios14_diagnostic-payload.json")
        let diagnostic = try String(contentsOf: corpus, encoding: .utf8)
            .replacingOccurrences(of: "2020-10-10", with: String(yesterday)).replacingOccurrences(of: "2020-10-11", with: String(yesterday))
        let metric = """
        {"timeStampBegin": "\(yesterday) 00:00:00 +0000", "timeStampEnd": "\(yesterday) 23:59:00 +0000",
         "metaData": {"appVersion": "1.0.0", "appBuildVersion": "1", "osVersion": "iPhone OS 17.4 (21E219)", "deviceType": "iPhone16,1"},
         "animationMetrics": {"scrollHitchTimeRatio": "7 ms per s"}}
        """
        let files = [("diagnostic.json", diagnostic), ("metric.json", metric)].map { name, text in
            let url = directory.url.appendingPathComponent(name)
            try? Data(text.utf8).write(to: url)
            return url.path
        }
        let base = ["--collector", "http://127.0.0.1:\(server.port)", "--queue", queue.path, "--screens", "0", "--timeout", "60"]
        // A read key cannot send: 403, and both payloads stay queued (the 403 ends the flush at
        // once; the timeout only bounds a starved run).
        let refused = try runExample(base + ["--ingest-key", readKey, "--metrickit", files[0], "--metrickit", files[1]])
        #expect(refused.exitCode == 1, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("HTTP 403"), "\(refused.stderr)")
        let waiting = try FileManager.default.contentsOfDirectory(atPath: queue.appendingPathComponent("metrickit").path)
        #expect(waiting.count == 2, "\(waiting)")
        // The right key: the next launch delivers both.
        let delivered = try runExample(base + ["--ingest-key", ingestKey])
        #expect(delivered.exitCode == 0, "\(delivered.stdout)\(delivered.stderr)")
        #expect(delivered.stdout.contains("MetricKit payloads delivered 2, waiting 0"), "\(delivered.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: queue.appendingPathComponent("metrickit").path).isEmpty)

        let (status, data) = try await server.request("/v1/apps/shop/metrickit", key: readKey)
        #expect(status == 200)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"appVersion\":\"1.0.0\"") && text.contains("\"scrollHitchTimeRatio\":7"), "\(text)")
        let (hangsStatus, hangs) = try await server.request("/v1/apps/shop/hangs", key: readKey)
        #expect(hangsStatus == 200)
        #expect(String(decoding: hangs, as: UTF8.self).contains("metricKitGroups"))

        // The overview's Apple table, as a browser sees it after signing in with the read key.
        let page = try await Self.overview(port: server.port, readKey: readKey)
        let apple = try #require(page.range(of: "Apple's figures beside Framescope's"))
        let table = page[apple.upperBound...].prefix(4000)
        #expect(table.contains("1.0.0"), "\(table)")
    }

    /// Signs in to the dashboard with `readKey` (the form's CSRF cookie and field) and returns
    /// the app's overview page.
    static func overview(port: Int, readKey: String) async throws -> String {
        let session = URLSession(configuration: .ephemeral)
        let base = "http://127.0.0.1:\(port)"
        let (formData, _) = try await session.data(from: URL(string: "\(base)/dashboard/sign-in")!)
        let form = String(decoding: formData, as: UTF8.self)
        let marker = try #require(form.range(of: "name=\"csrf\" value=\""))
        let token = String(form[marker.upperBound...].prefix { $0 != "\"" })
        var post = URLRequest(url: URL(string: "\(base)/dashboard/sign-in")!)
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.httpBody = Data("key=\(readKey)&csrf=\(token)".utf8)
        _ = try await session.data(for: post)
        let (page, response) = try await session.data(from: URL(string: "\(base)/dashboard/apps/shop")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        return String(decoding: page, as: UTF8.self)
    }
}
