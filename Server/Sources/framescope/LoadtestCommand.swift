import ArgumentParser
import AsyncHTTPClient
import Foundation
import FramescopeCore
import FramescopeSimulation
import NIOCore

/// `framescope loadtest`: sends simulated batches to a collector at a fixed rate and
/// reports what it achieved.
struct LoadtestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadtest",
        abstract: "Send simulated screen visits to a collector on this machine at a fixed rate.",
        discussion: """
            Open loop: batch n is due at start + n × batch-size / rate, whether or not earlier \
            batches were answered, and its acknowledgement latency is measured from that due \
            time, so a server that falls behind shows it in the latency instead of hiding it \
            (no coordinated omission). At most --concurrency requests are in flight; a batch \
            that waits for a free slot waits on the clock. Prints achieved events/s and \
            latency percentiles; with a terminal on stderr, progress every second. Reports go \
            in their compact binary form, as the SDK sends them, unless --json-reports. Only \
            loopback URLs are accepted, and --duration is at most 600 s.
            """
    )

    @Option(help: ArgumentHelp("The collector's base URL (loopback only).", valueName: "url"))
    var url = "http://127.0.0.1:8080"

    @Option(help: ArgumentHelp("An ingest key of the app to send to.", valueName: "key"))
    var key: String

    @Option(help: ArgumentHelp("The id of the app the key belongs to.", valueName: "id"))
    var app = "demo"

    @Option(help: ArgumentHelp("Target events per second.", valueName: "n"))
    var rate = 10_000

    @Option(help: ArgumentHelp("Seconds to send for (1–600).", valueName: "s"))
    var duration = 10.0

    @Option(help: ArgumentHelp("Events per batch (1–1000).", valueName: "n"))
    var batchSize = 100

    @Option(help: ArgumentHelp("Most requests in flight at once.", valueName: "n"))
    var concurrency = 64

    @Option(help: ArgumentHelp("Times a batch is sent again after a 503, a 429 or no answer, as the SDK does (after Retry-After, at most 5 s, or 0.25 s doubling).",
                               valueName: "n"))
    var retries = 0

    @Flag(help: "Send reports as JSON objects instead of their compact base64 binary form (what the SDK sends).")
    var jsonReports = false

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    enum OutputFormat: String, ExpressibleByArgument {
        case text, json
    }

    mutating func validate() throws {
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host else {
            throw ValidationError("--url must be an http:// URL such as http://127.0.0.1:8080")
        }
        guard ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) else {
            throw ValidationError("--url must point at this machine (127.0.0.1, localhost or ::1); the load generator refuses other hosts")
        }
        if !(1...1_000_000).contains(rate) { throw ValidationError("--rate must be 1–1000000 events per second") }
        if !(duration >= 1 && duration <= 600) { throw ValidationError("--duration must be 1–600 seconds") }
        if !(1...1000).contains(batchSize) { throw ValidationError("--batch-size must be 1–1000") }
        if !(1...4096).contains(concurrency) { throw ValidationError("--concurrency must be 1–4096") }
        if !(0...1000).contains(retries) { throw ValidationError("--retries must be 0–1000") }
    }

    func run() async throws {
        let endpoint = url.hasSuffix("/") ? url + "v1/events" : url + "/v1/events"
        let templates = try LoadBatchTemplates(app: app, batchSize: batchSize, now: Date().timeIntervalSince1970, compactReports: !jsonReports)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)))
        let summary: LoadSummary
        do {
            summary = try await drive(client: client, endpoint: endpoint, templates: templates)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
        if isatty(STDERR_FILENO) == 1 { writeToStandardError("\n") }
        switch format {
        case .text: print(summary.text)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        }
        if summary.acknowledged == 0 {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(url): no batch was acknowledged\(summary.errorText)")
        }
    }

    /// Sends every due batch and collects the answers.
    private func drive(client: HTTPClient, endpoint: String, templates: LoadBatchTemplates) async throws -> LoadSummary {
        let interval = Double(batchSize) / Double(rate)
        let total = Int((duration / interval).rounded(.down))
        let clock = ContinuousClock()
        let start = clock.now
        let runId = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        var recorder = LoadRecorder()
        let progress = isatty(STDERR_FILENO) == 1
        var lastProgress = start

        await withTaskGroup(of: LoadOutcome.self) { group in
            var inFlight = 0
            for index in 0..<total {
                let due = start.advanced(by: .seconds(Double(index) * interval))
                while inFlight >= concurrency, let outcome = await group.next() {
                    inFlight -= 1
                    recorder.record(outcome)
                }
                if clock.now < due { try? await clock.sleep(until: due) }
                let body = templates.body(index: index, runId: runId)
                var request = HTTPClientRequest(url: endpoint)
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(key)")
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(body)
                inFlight += 1
                let retries = self.retries
                group.addTask {
                    var attempt = 0
                    var backoff = 0.25
                    while true {
                        var status = 0
                        var retryAfter: Double?
                        do {
                            let response = try await client.execute(request, timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 20)
                            status = Int(response.status.code)
                            retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
                        } catch {
                            status = 0
                        }
                        guard [0, 429, 503].contains(status), attempt < retries else {
                            return LoadOutcome(status: status, latency: Double((clock.now - due) / .milliseconds(1)) / 1000, retries: attempt)
                        }
                        attempt += 1
                        try? await Task.sleep(for: .seconds(min(5, max(0, retryAfter ?? backoff))))
                        backoff = min(5, backoff * 2)
                    }
                }
                if progress, clock.now - lastProgress >= .seconds(1) {
                    lastProgress = clock.now
                    let elapsed = Double((clock.now - start) / .milliseconds(1)) / 1000
                    writeToStandardError(String(format: "\r%6.1f s  %9.0f events/s acknowledged  p99 %7.1f ms  errors %d ",
                                                elapsed, Double(recorder.acknowledged * batchSize) / max(elapsed, 0.001),
                                                (recorder.latencies.value(atQuantile: 0.99) ?? 0) * 1000, recorder.failed))
                }
            }
            for await outcome in group { recorder.record(outcome) }
        }
        let elapsed = Double((clock.now - start) / .milliseconds(1)) / 1000
        return LoadSummary(url: url, targetEventsPerSecond: rate, batchSize: batchSize, concurrency: concurrency, seconds: elapsed,
                           batchesSent: total, acknowledged: recorder.acknowledged,
                           achievedEventsPerSecond: Double(recorder.acknowledged * batchSize) / max(elapsed, 0.001), retriedRequests: recorder.retried,
                           latencyMilliseconds: LoadSummary.Latency(recorder.latencies), failures: recorder.failures,
                           bodyBytes: templates.body(index: 0, runId: runId).readableBytes)
    }
}

/// One batch's last answer: HTTP status (0 when no answer came), seconds from due time to
/// that answer, and how many times it was sent again before it.
struct LoadOutcome: Sendable {
    var status: Int
    var latency: Double
    var retries = 0
}

/// Counts answers and keeps acknowledgement latencies in the engine's log histogram (≤ 0.79 % error).
struct LoadRecorder {
    var acknowledged = 0
    var failed = 0
    var retried = 0
    var failures: [String: Int] = [:]
    var latencies = DurationHistogram()

    mutating func record(_ outcome: LoadOutcome) {
        retried += outcome.retries
        if outcome.status == 202 {
            acknowledged += 1
            latencies.record(seconds: outcome.latency)
        } else {
            failed += 1
            failures[outcome.status == 0 ? "no answer" : "HTTP \(outcome.status)", default: 0] += 1
        }
    }
}

/// What a load test achieved.
struct LoadSummary: Codable {
    struct Latency: Codable {
        var p50: Double?
        var p90: Double?
        var p99: Double?
        var max: Double?

        init(_ histogram: DurationHistogram) {
            p50 = histogram.value(atQuantile: 0.5).map { $0 * 1000 }
            p90 = histogram.value(atQuantile: 0.9).map { $0 * 1000 }
            p99 = histogram.value(atQuantile: 0.99).map { $0 * 1000 }
            max = histogram.value(atQuantile: 1).map { $0 * 1000 }
        }
    }

    var url: String
    var targetEventsPerSecond: Int
    var batchSize: Int
    var concurrency: Int
    var seconds: Double
    var batchesSent: Int
    var acknowledged: Int
    var achievedEventsPerSecond: Double
    /// Requests sent again after a 503, a 429 or no answer (`--retries`).
    var retriedRequests = 0
    var latencyMilliseconds: Latency
    var failures: [String: Int]
    var bodyBytes: Int

    var errorText: String {
        failures.isEmpty ? "" : " (" + failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
    }

    var text: String {
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "–" }
        return """
            target:        \(targetEventsPerSecond) events/s in batches of \(batchSize) (\(bodyBytes / batchSize) bytes per event), at most \(concurrency) in flight
            sent:          \(batchesSent) batches in \(String(format: "%.1f", seconds)) s
            acknowledged:  \(acknowledged) batches, \(String(format: "%.0f", achievedEventsPerSecond)) events/s
            latency:       p50 \(ms(latencyMilliseconds.p50)), p90 \(ms(latencyMilliseconds.p90)), p99 \(ms(latencyMilliseconds.p99)), max \(ms(latencyMilliseconds.max))
            failed:        \(batchesSent - acknowledged)\(errorText)
            retried:       \(retriedRequests) requests
            """
    }
}

/// Request bodies for the load test: a few batches of simulated visits, encoded once,
/// whose batch id is patched in place for each request.
struct LoadBatchTemplates {
    /// The encoded batches with a fixed-width placeholder id.
    private let bodies: [[UInt8]]
    /// Where the placeholder sits in each body.
    private let idOffsets: [Int]
    /// Where the installation id's placeholder sits in each body.
    private let deviceOffsets: [Int]
    static let placeholder = "LOADTEST-ID-" + String(repeating: "x", count: 36)
    static let devicePlaceholder = "LOADTEST-DEVICE-" + String(repeating: "x", count: 8)
    /// Installations the requests come from, in turn: a fleet, so a sharded store spreads them.
    static let devices = 1000

    /// Encodes 8 batches of `batchSize` visits drawn from one simulated day of the demo
    /// fleet, with start times in the hour before `now`.
    init(app: String, batchSize: Int, now: Double, compactReports: Bool) throws {
        let fleet = FleetSimulation.demo(appId: app, start: now - 86_400, days: 1, deviceCount: 30, seed: 99)
        let visits = fleet.batches().flatMap { batch in batch.events.map { (batch, $0) } }
        guard let (first, _) = visits.first else { throw ValidationError("the fleet simulation produced no visits") }
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = compactReports
        var bodies: [[UInt8]] = []
        var offsets: [Int] = []
        var deviceOffsets: [Int] = []
        let marker = Array(Self.placeholder.utf8)
        let deviceMarker = Array(Self.devicePlaceholder.utf8)
        let device = DeviceInfo(model: first.device.model, osName: first.device.osName, osVersion: first.device.osVersion,
                                maxRefreshRate: first.device.maxRefreshRate, installationId: Self.devicePlaceholder)
        for template in 0..<8 {
            var events: [ScreenVisitEvent] = []
            for index in 0..<batchSize {
                var event = visits[(template * batchSize + index) % visits.count].1
                event.startedAt = ISO8601.format(unixSeconds: now - 3600 + Double(index * 3600 / max(batchSize, 1)))
                events.append(event)
            }
            let batch = EventBatch(batchId: Self.placeholder, app: first.app, device: device, events: events)
            let bytes = Array(try encoder.encode(batch))
            guard let offset = bytes.firstRange(of: marker)?.lowerBound else { throw ValidationError("cannot find the batch id in the encoded batch") }
            guard let deviceOffset = bytes.firstRange(of: deviceMarker)?.lowerBound else {
                throw ValidationError("cannot find the installation id in the encoded batch")
            }
            bodies.append(bytes)
            offsets.append(offset)
            deviceOffsets.append(deviceOffset)
        }
        self.bodies = bodies
        idOffsets = offsets
        self.deviceOffsets = deviceOffsets
    }

    /// The body of request `index` with the batch id `lt-<runId>-<index, zero-padded>` and
    /// the installation id `lt-device-<index mod devices, zero-padded>`, each exactly as long
    /// as its placeholder, in place.
    func body(index: Int, runId: String) -> ByteBuffer {
        let slot = index % bodies.count
        var bytes = bodies[slot]
        let prefix = Array("lt-\(runId)-".utf8)
        let number = Array(String(index).utf8)
        let width = Self.placeholder.utf8.count
        let id = prefix + Array(repeating: UInt8(ascii: "0"), count: max(0, width - prefix.count - number.count)) + number
        bytes.replaceSubrange(idOffsets[slot]..<(idOffsets[slot] + width), with: id.prefix(width))
        // The installation: one of a fleet of `devices`, by the request's number.
        let deviceWidth = Self.devicePlaceholder.utf8.count
        let deviceNumber = Array(String(index % Self.devices).utf8)
        let deviceId = Array("lt-device-".utf8) + Array(repeating: UInt8(ascii: "0"), count: max(0, deviceWidth - 10 - deviceNumber.count)) + deviceNumber
        bytes.replaceSubrange(deviceOffsets[slot]..<(deviceOffsets[slot] + deviceWidth), with: deviceId.prefix(deviceWidth))
        return ByteBuffer(bytes: bytes)
    }
}

