import ArgumentParser
import Foundation
import FramescopeCollector
import FramescopeDashboard
import FramescopeDemo
import Hummingbird
import Logging

/// `framescope serve`: the collector.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the collector: ingest events from devices and answer queries.",
        discussion: """
            Stores events in an embedded SQLite file (--db, framescope.sqlite by default) or in \
            ClickHouse, one server or a cluster (--store clickhouse://…; docs/scaling.md). With --demo, creates the demo app \
            (id 'demo') if it is missing, fills it with four weeks of simulated fleet data, and \
            prints its keys. Raw events older than --retention-days are deleted in the background; \
            rollups stay. Stops gracefully on SIGTERM or SIGINT: in-flight requests finish and \
            their batches are committed first. Connections are limited (--max-connections, from the \
            descriptor limit) and closed when idle (--idle-timeout); request bodies must keep a pace \
            (docs/security.md, "Limits and their defaults").
            """
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @OptionGroup var storeOptions: StoreOptions

    /// The SQLite file used when neither --store nor --db names the store.
    static let defaultDatabase = "framescope.sqlite"

    @Flag(help: "Create and fill the demo app with simulated data, and print its keys.")
    var demo = false

    @Option(help: ArgumentHelp("Days raw events are kept; rollups are kept for good.", valueName: "days"))
    var retentionDays = 30.0

    @Option(help: ArgumentHelp("Ingest requests per second allowed per ingest key (bursts of twice that).", valueName: "n"))
    var rateLimit = IngestLimits().requestsPerSecond

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel = "info"

    @Option(help: ArgumentHelp("Distinct screens an app may create per day; more fold into '(other)'.", valueName: "n"))
    var maxScreensPerDay = CardinalityLimits().screens

    @Option(help: ArgumentHelp("Distinct app versions, and distinct OS versions, an app may create per day; more fold into '(other)'.",
                               valueName: "n"))
    var maxValuesPerDay = CardinalityLimits().appVersions

    @Option(help: ArgumentHelp("Distinct device models an app may create per day; more fold into '(other)'.", valueName: "n"))
    var maxDeviceModelsPerDay = CardinalityLimits().deviceModels

    @Option(help: ArgumentHelp("Distinct screens an app may have across the 32-day window; a new one beyond folds into '(other)'.", valueName: "n"))
    var maxScreensInWindow = CardinalityLimits().screensInWindow

    @Option(help: ArgumentHelp("Distinct app versions, and distinct OS versions, an app may have across the 32-day window; more fold into '(other)'.",
                               valueName: "n"))
    var maxValuesInWindow = CardinalityLimits().appVersionsInWindow

    @Option(help: ArgumentHelp("Distinct device models an app may have across the 32-day window; more fold into '(other)'.", valueName: "n"))
    var maxDeviceModelsInWindow = CardinalityLimits().deviceModelsInWindow

    @Option(help: ArgumentHelp("Distinct values of each declared tag an app may have across the 32-day window; more fold into '(other)'.", valueName: "n"))
    var maxTagValuesInWindow = CardinalityLimits().tagValuesInWindow

    @Flag(help: "Run no retention or alert jobs: for every collector but one that share a ClickHouse store (docs/scaling.md).")
    var noJobs = false

    @Flag(help: "A reverse proxy in front terminates TLS and sets X-Forwarded-Proto: mark dashboard cookies Secure when it says https.")
    var trustProxy = false

    @Option(help: ArgumentHelp("A file holding the admin token that GET /metrics requires (or set FRAMESCOPE_ADMIN_TOKEN); without one, /metrics is off.",
                               valueName: "path"))
    var adminTokenFile: String?

    @Option(help: ArgumentHelp("The collector's address as webhook receivers and browsers reach it, for the links in regression alerts (default http://HOST:PORT).",
                               valueName: "url"))
    var publicURL: String?

    @Option(help: ArgumentHelp("Connections open at once; at the limit the one idle longest is closed to make room (default: the descriptor limit, ulimit -n, less \(ConnectionLimits.reservedDescriptors)).",
                               valueName: "n"))
    var maxConnections: Int?

    @Option(help: ArgumentHelp("Seconds a connection may wait for a complete request head, or pause within a body, before it is closed.",
                               valueName: "seconds"))
    var idleTimeout = ConnectionLimits.defaultIdleTimeout

    mutating func validate() throws {
        if let publicURL, let problem = WebhookURL.problem(publicURL) {
            throw ValidationError("--public-url: \(problem.message.replacingOccurrences(of: "url ", with: "it "))")
        }
        if let publicURL, publicURL.contains("?") {
            throw ValidationError("--public-url: the collector's base URL takes no query (links to /dashboard/… are appended to it)")
        }
        if !(0...65535).contains(port) { throw ValidationError("--port must be 0–65535") }
        if !(retentionDays > 0 && retentionDays <= 36_500) { throw ValidationError("--retention-days must be more than 0 and at most 36500") }
        if !(rateLimit > 0 && rateLimit <= 1_000_000) { throw ValidationError("--rate-limit must be more than 0 and at most 1000000") }
        if !(1...1_000_000).contains(maxScreensPerDay) { throw ValidationError("--max-screens-per-day must be 1–1000000") }
        if !(1...1_000_000).contains(maxValuesPerDay) { throw ValidationError("--max-values-per-day must be 1–1000000") }
        if !(1...1_000_000).contains(maxDeviceModelsPerDay) { throw ValidationError("--max-device-models-per-day must be 1–1000000") }
        for (name, value, daily) in [("--max-screens-in-window", maxScreensInWindow, maxScreensPerDay),
                                     ("--max-values-in-window", maxValuesInWindow, maxValuesPerDay),
                                     ("--max-device-models-in-window", maxDeviceModelsInWindow, maxDeviceModelsPerDay),
                                     ("--max-tag-values-in-window", maxTagValuesInWindow, 1)] where !(daily...1_000_000).contains(value) {
            // A window limit below the daily one would fold values a single day admits.
            throw ValidationError("\(name) must be \(daily)–1000000 (at least the daily limit)")
        }
        if !(idleTimeout >= 1 && idleTimeout <= 3_600) { throw ValidationError("--idle-timeout must be 1–3600 seconds") }
        if let maxConnections {
            let descriptors = ConnectionLimits.descriptorLimit()
            let most = descriptors.map { ConnectionLimits.defaultMaximumConnections(descriptorLimit: $0) } ?? 1_000_000
            if !(1...most).contains(maxConnections) {
                throw ValidationError("--max-connections must be 1–\(most)"
                    + (descriptors.map { " (the descriptor limit, \($0), less \(ConnectionLimits.reservedDescriptors) kept for the store); raise it with ulimit -n first" } ?? ""))
            }
        }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        var cardinality = CardinalityLimits()
        cardinality.screens = maxScreensPerDay
        cardinality.appVersions = maxValuesPerDay
        cardinality.osVersions = maxValuesPerDay
        cardinality.deviceModels = maxDeviceModelsPerDay
        cardinality.screensInWindow = maxScreensInWindow
        cardinality.appVersionsInWindow = maxValuesInWindow
        cardinality.osVersionsInWindow = maxValuesInWindow
        cardinality.deviceModelsInWindow = maxDeviceModelsInWindow
        cardinality.tagValuesInWindow = maxTagValuesInWindow
        let store = try await storeOptions.open(fallback: Self.defaultDatabase, backgroundCheckpoints: true, cardinality: cardinality)
        var lines: [String] = []
        if demo {
            let (credentials, ingested) = try await DemoData.prepare(store: store)
            lines.append("demo app: \(credentials.app) — \(DemoData.appName)\(ingested > 0 ? ", \(ingested) simulated screen visits loaded" : "")")
            lines.append("ingest key: \(credentials.ingestKey)")
            lines.append("read key: \(credentials.readKey)")
            lines.append("admin key: \(credentials.adminKey) (the app's settings: thresholds, webhooks)")
        }
        var logger = Logger(label: "framescope.collector")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let dashboard: DashboardPages
        do {
            dashboard = try DashboardPages(store: store, hangsTimeLimit: HangsResponse.timeLimit)
        } catch {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "cannot load the dashboard: \(error)")
        }
        let adminToken: String?
        if let adminTokenFile {
            guard let text = try? String(contentsOfFile: adminTokenFile, encoding: .utf8) else {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(adminTokenFile): cannot read the admin token")
            }
            adminToken = text.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            adminToken = ProcessInfo.processInfo.environment["FRAMESCOPE_ADMIN_TOKEN"]
        }
        if let adminToken, adminToken.utf8.count < 16 {
            throw ValidationError("the admin token must be at least 16 characters")
        }
        var limits = IngestLimits()
        limits.requestsPerSecond = rateLimit
        limits.burst = 2 * rateLimit
        let collector = Collector(store: store, limits: limits, adminToken: adminToken, hangsTimeLimit: HangsResponse.timeLimit, additionalRoutes: { router in
            DashboardRoutes(pages: dashboard, trustProxy: trustProxy).register(on: router)
        })
        let descriptors = ConnectionLimits.descriptorLimit()
        let connectionLimits = ConnectionLimits(maximumConnections: maxConnections ?? ConnectionLimits.defaultMaximumConnections(descriptorLimit: descriptors),
                                                idleTimeout: idleTimeout)
        lines.append("connections: at most \(connectionLimits.maximumConnections)"
            + (descriptors.map { " (descriptor limit \($0))" } ?? "") + ", idle timeout \(Self.seconds(connectionLimits.idleTimeout)) s")
        let connections = ConnectionGuard(limits: connectionLimits, logger: logger)
        let announcement = lines
        let host = self.host
        let app = Application(
            responder: connections.responder(wrapping: collector.router.buildResponder()),
            server: .http1(configuration: .init(additionalChannelHandlers: [connections.makeHandler()],
                                                idleTimeout: .milliseconds(Int64((connectionLimits.idleTimeout * 1_000).rounded())))),
            configuration: .init(address: .hostname(host, port: port), serverName: "framescope",
                                 availableConnectionsDelegate: .maximum(connectionLimits.maximumConnections, logger: logger)),
            services: collector.services(retention: retentionDays * 86_400, publicURL: publicURL ?? "http://\(host):\(port)", jobs: !noJobs, logger: logger),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                var text = announcement
                text.insert("Framescope collector listening on http://\(host):\(bound)", at: 0)
                text.insert("dashboard: http://\(host):\(bound)/dashboard (sign in with the app's read key)", at: 1)
                if announcement.contains(where: { $0.hasPrefix("read key:") }) {
                    text.append("try: curl -H 'Authorization: Bearer <read key>' http://\(host):\(bound)/v1/apps/demo/screens")
                }
                FileHandle.standardOutput.write(Data((text.joined(separator: "\n") + "\n").utf8))
            },
            logger: logger
        )
        try await app.runService()
    }

    /// `seconds` without a trailing `.0`.
    static func seconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
