import ArgumentParser
import AsyncHTTPClient
import Foundation
import FramescopeCore
import NIOCore

/// `framescope export`: an app's raw events from a collector, as NDJSON (or CSV) on
/// standard output or into a file, resumed from the last complete line when the connection
/// breaks.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Download an app's raw events from a collector (NDJSON, or CSV with --csv).",
        discussion: """
            Streams GET /v1/apps/APP/events with the app's read key. Each NDJSON line is one \
            visit exactly as the device sent it, with its batch's context, receipt time and a \
            cursor; `framescope analyze events.ndjson` reads the file back. A broken \
            connection is resumed after the last complete line (up to --retries times).
            """
    )

    @Option(help: "The collector's base URL (http://host:port).")
    var url: String

    @Option(help: ArgumentHelp("The app's read key; default: the FRAMESCOPE_READ_KEY environment variable.", valueName: "key"))
    var key: String?

    @Option(help: "The app id.")
    var app: String

    @Option(help: ArgumentHelp("Start of the range (ISO 8601); default: 30 days before --to.", valueName: "time"))
    var from: String?

    @Option(help: ArgumentHelp("End of the range (ISO 8601, exclusive); default: now.", valueName: "time"))
    var to: String?

    @Option(help: ArgumentHelp("Only visits with this value of a dimension (repeatable): \(QueryDimension.all.map(\.queryName).joined(separator: ", ")).",
                               valueName: "name=value"))
    var filter: [String] = []
    @Option(help: ArgumentHelp("Only visits with this tag (repeatable).", valueName: "key=value")) var tag: [String] = []

    @Option(help: ArgumentHelp("Resume after this cursor (from an earlier export's last line).", valueName: "cursor"))
    var after: String?

    @Flag(help: "CSV of headline figures per visit instead of NDJSON.")
    var csv = false

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @Option(help: "Times to resume after a broken connection.")
    var retries = 5

    mutating func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme), parsed.host != nil else {
            throw ValidationError("--url must be an http or https URL such as http://127.0.0.1:8080")
        }
        if key == nil { key = ProcessInfo.processInfo.environment["FRAMESCOPE_READ_KEY"] }
        if key?.isEmpty ?? true { throw ValidationError("give the app's read key with --key or FRAMESCOPE_READ_KEY") }
        for item in tag where !item.contains("=") || item.hasPrefix("=") {
            throw ValidationError("--tag takes key=value, not '\(item)'")
        }
        if !(0...100).contains(retries) { throw ValidationError("--retries must be 0–100") }
        _ = try Self.filters(filter)
    }

    /// The dimension filters of `items` (`NAME=VALUE` each), validated by the registry
    /// (``QueryDimension``): a known name, a value it takes, each name once.
    /// - Throws: `ValidationError` naming the item.
    static func filters(_ items: [String]) throws -> [(dimension: QueryDimension, value: String)] {
        var filters: [(dimension: QueryDimension, value: String)] = []
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw ValidationError("--filter takes name=value, not '\(item)'") }
            guard let dimension = QueryDimension(queryName: String(parts[0])) else {
                throw ValidationError("--filter: unknown dimension '\(parts[0])'; use one of \(QueryDimension.all.map(\.queryName).joined(separator: ", "))")
            }
            let value = String(parts[1])
            if let problem = dimension.problem(with: value) { throw ValidationError("--filter: \(problem)") }
            guard !filters.contains(where: { $0.dimension == dimension }) else {
                throw ValidationError("--filter: \(dimension.queryName) is given twice; a visit has one value")
            }
            filters.append((dimension, value))
        }
        return filters
    }

    /// The query string of the request, every value percent-encoded.
    func queryItems(after cursor: String?) -> [URLQueryItem] {
        var items: [URLQueryItem] = []
        func add(_ name: String, _ value: String?) { if let value { items.append(URLQueryItem(name: name, value: value)) } }
        add("from", from)
        add("to", to)
        for (dimension, value) in (try? Self.filters(filter)) ?? [] { add(dimension.queryName, value) }
        for item in tag {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            add("tag." + String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        add("after", cursor)
        return items
    }

    func run() async throws {
        let sink = try ExportSink(path: output)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await download(client: client, sink: sink)
        } catch is ExportSink.ReaderClosed {
            try? await client.shutdown()
            return
        } catch {
            try? await client.shutdown()
            sink.finishProgress()
            throw error
        }
        try await client.shutdown()
        sink.finishProgress()
    }

    /// Streams the export into `sink`, resuming after the last complete line on a broken connection.
    private func download(client: HTTPClient, sink: ExportSink) async throws {
        var cursor = after
        var attempt = 0
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        while true {
            var components = URLComponents(string: "\(base)/v1/apps/\(app.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? app)/events")
            components?.queryItems = queryItems(after: cursor)
            // URLQueryItem leaves `+` alone, which servers read as a space.
            let query = components?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            components?.percentEncodedQuery = query
            guard let address = components?.string else { throw CLIFailure(exitCode: CLIFailure.usage, message: "\(url): cannot build the export's URL") }
            var request = HTTPClientRequest(url: address)
            request.headers.add(name: "Authorization", value: "Bearer \(key ?? "")")
            if csv { request.headers.add(name: "Accept", value: "text/csv") }
            do {
                let response = try await client.execute(request, timeout: .seconds(60))
                guard response.status == .ok else {
                    let body = try await response.body.collect(upTo: 1 << 16)
                    throw CLIFailure(exitCode: response.status.code == 400 ? CLIFailure.usage : CLIFailure.ioError,
                                     message: "\(url): \(response.status.code) \(String(buffer: body))")
                }
                // Each resumed CSV stream starts with the header again: keep only the first.
                var skipHeader = csv && sink.lines > 0
                for try await chunk in response.body {
                    sink.write(chunk) { line in
                        if skipHeader { skipHeader = false; return false }
                        return true
                    }
                    if let last = sink.lastCursor(csv: csv) { cursor = last }
                    // Written as it arrives: memory holds one chunk, whatever the export's size.
                    try sink.flush()
                }
                try sink.flush()
                if sink.hasPartialLine {
                    throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(url): the export ended inside a line")
                }
                return
            } catch let failure as CLIFailure {
                throw failure
            } catch let closed as ExportSink.ReaderClosed {
                throw closed
            } catch {
                // A broken stream: drop the partial line and resume after the last whole one.
                sink.dropPartialLine()
                try sink.flush()
                attempt += 1
                guard attempt <= retries else {
                    throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(url): \(error); \(sink.lines) lines written, resume with --after \(cursor ?? "(none)")")
                }
                writeToStandardError("framescope: \(url): \(error); resuming after \(cursor ?? "the start") (\(attempt) of \(retries))\n")
                try await Task.sleep(for: .seconds(min(8, 0.5 * Double(1 << min(attempt, 4)))))
            }
        }
    }
}
