import ArgumentParser
import Foundation
import FramescopeCollector

/// `framescope apps`: the collector's apps and their keys.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Create, list and revoke the collector's apps and their keys.",
        subcommands: [CreateApp.self, ListApps.self, RevokeApp.self]
    )

    struct CreateApp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create an app and print its ingest key and read key (shown only once)."
        )
        @Argument(help: "The app's name; its id is derived from it.") var name: String
        @Option(help: ArgumentHelp("The SQLite database file.", valueName: "path")) var db: String
        @Option(help: "Output format.") var format: OutputFormat = .table

        func run() async throws {
            let store = try openStore(db)
            let credentials: AppCredentials
            do {
                credentials = try await store.createApp(name: name, id: nil)
            } catch {
                writeToStandardError("framescope: cannot create app '\(name)': \(error)\n")
                throw ExitCode(CLIFailure.dataError)
            }
            switch format {
            case .json: print(try encodeJSON(credentials))
            case .table: print("app: \(credentials.app)\ningest key: \(credentials.ingestKey)\nread key: \(credentials.readKey)\nThe keys are stored hashed and cannot be shown again.")
            }
        }
    }

    struct ListApps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the apps.")
        @Option(help: ArgumentHelp("The SQLite database file.", valueName: "path")) var db: String
        @Option(help: "Output format.") var format: OutputFormat = .table

        func run() async throws {
            let apps = try await openStore(db).apps()
            switch format {
            case .json: print(try encodeJSON(apps))
            case .table:
                var table = TextTable(header: ["app", "name", "created", "status"])
                table.rows = apps.map { [$0.app, $0.name, $0.createdAt, $0.revoked ? "revoked" : "active"] }
                print(table.render())
            }
        }
    }

    struct RevokeApp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke an app's keys (its data stays).")
        @Argument(help: "The app id.") var app: String
        @Option(help: ArgumentHelp("The SQLite database file.", valueName: "path")) var db: String

        func run() async throws {
            guard try await openStore(db).revokeApp(app) else {
                writeToStandardError("framescope: no app '\(app)' in \(db)\n")
                throw ExitCode(CLIFailure.dataError)
            }
            print("revoked the keys of \(app)")
        }
    }
}

/// Opens the collector's database, or fails with exit 74.
func openStore(_ path: String) throws -> SQLiteStore {
    do {
        return try SQLiteStore(path: path)
    } catch {
        writeToStandardError("framescope: \(path): cannot open the database: \(error)\n")
        throw ExitCode(CLIFailure.ioError)
    }
}
