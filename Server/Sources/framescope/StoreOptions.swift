import ArgumentParser
import Foundation
import FramescopeClickHouse
import FramescopeCollector

/// Where the collector keeps its data, as every command that opens the store takes it:
/// `--store sqlite:PATH` or `--store clickhouse://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?cluster=NAME]`,
/// or `--db PATH`, the short form of `--store sqlite:PATH`.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The store: sqlite:PATH, or clickhouse://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?cluster=NAME].", valueName: "location"))
    var store: String?

    @Option(help: ArgumentHelp("The SQLite database file (short for --store sqlite:PATH).", valueName: "path"))
    var db: String?

    /// The store named, parsed.
    enum Location {
        case sqlite(String)
        case clickhouse(ClickHouseLocation)
    }

    mutating func validate() throws {
        if store != nil && db != nil { throw ValidationError("give --store or --db, not both") }
        if let store { _ = try Self.parse(store) }
    }

    /// The location, with `fallback` as the SQLite file when no option names one.
    /// - Throws: `ValidationError` when neither option is given and there is no fallback.
    func location(fallback: String? = nil) throws -> Location {
        if let store { return try Self.parse(store) }
        if let path = db ?? fallback { return .sqlite(path) }
        throw ValidationError("name the store: --store sqlite:PATH or --store clickhouse://…, or --db PATH")
    }

    /// What messages call the store: the file, or the ClickHouse location without its password.
    func name(fallback: String? = nil) -> String {
        switch try? location(fallback: fallback) {
        case .sqlite(let path): path
        case .clickhouse(let location): location.description
        case nil: store ?? db ?? fallback ?? "the store"
        }
    }

    static func parse(_ text: String) throws -> Location {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ValidationError("--store sqlite:PATH names no file") }
            return .sqlite(path)
        }
        if text.hasPrefix("clickhouse://") {
            do { return .clickhouse(try ClickHouseLocation(parsing: text)) } catch {
                throw ValidationError("--store: \(error.message)")
            }
        }
        throw ValidationError("--store must start with sqlite: or clickhouse://")
    }

    /// Opens (and migrates) the store, or fails with exit 74 naming it.
    /// - Parameters:
    ///   - backgroundCheckpoints: SQLite's WAL checkpoints on a connection of their own (`serve`).
    ///   - cardinality: The per-app, per-day limits on distinct dimension values.
    func open(fallback: String? = nil, backgroundCheckpoints: Bool = false, cardinality: CardinalityLimits = CardinalityLimits()) async throws -> any CollectorStore {
        let location = try location(fallback: fallback)
        do {
            switch location {
            case .sqlite(let path):
                return try SQLiteStore(path: path, backgroundCheckpoints: backgroundCheckpoints, cardinality: cardinality)
            case .clickhouse(let clickhouse):
                return try await ClickHouseStore(client: ClickHouseClient(location: clickhouse), cardinality: cardinality)
            }
        } catch {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(name(fallback: fallback)): cannot open the database: \(error)")
        }
    }
}
