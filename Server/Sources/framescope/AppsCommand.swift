import ArgumentParser
import Foundation
import FramescopeCollector
import FramescopeCore

/// `framescope apps`: the collector's apps and their keys.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Create, list, rotate and revoke the collector's apps and their keys; show and set their thresholds; their webhooks and regression alerts.",
        subcommands: [CreateApp.self, ListApps.self, RotateKey.self, RevokeApp.self, Thresholds.self, Webhooks.self, Alerts.self, Tags.self]
    )

    struct CreateApp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create an app and print its ingest key, read key and admin key (shown only once)."
        )
        @Argument(help: "The app's name; its id is derived from it.") var name: String
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format.") var format: OutputFormat = .table

        func run() async throws {
            let store = try await storeOptions.open()
            let credentials: AppCredentials
            do {
                credentials = try await store.createApp(name: name, id: nil)
            } catch {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "cannot create app '\(name)': \(error)")
            }
            switch format {
            case .json: print(try encodeJSON(credentials))
            case .table:
                print("app: \(credentials.app)\ningest key: \(credentials.ingestKey)\nread key: \(credentials.readKey)\nadmin key: \(credentials.adminKey)")
                print("The keys are stored hashed and cannot be shown again.")
            }
        }
    }

    struct ListApps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the apps.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format.") var format: OutputFormat = .table

        func run() async throws {
            let apps = try await storeOptions.open().apps()
            switch format {
            case .json: print(try encodeJSON(apps))
            case .table:
                var table = TextTable(header: ["app", "name", "created", "status"])
                table.rows = apps.map { [$0.app, $0.name, $0.createdAt, $0.revoked ? "revoked" : "active"] }
                print(table.render())
            }
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Replace an app's ingest, read or admin key and print the new one (shown only once).",
            discussion: """
                --key read ends the old read key and every dashboard session it opened at once \
                (for a leaked read key; ingest is untouched). --key ingest keeps the old ingest \
                key working for --grace-days (default 30), so apps already shipped keep delivering \
                while a build with the new key rolls out; --grace-days 0 ends it now. --key admin \
                ends the old admin key at once; an app created before admin keys existed gets its \
                first one this way.
                """
        )
        enum Kind: String, ExpressibleByArgument, CaseIterable { case ingest, read, admin }
        @Argument(help: "The app id.") var app: String
        @Option(help: "Which key to replace: ingest, read or admin.") var key: Kind
        @Option(help: ArgumentHelp("Days the old ingest key keeps working.", valueName: "days"))
        var graceDays: Double = AccessLifetimes.ingestKeyGrace / 86_400
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format.") var format: OutputFormat = .table

        mutating func validate() throws {
            guard graceDays >= 0 && graceDays <= 365 else { throw ValidationError("--grace-days must be 0–365") }
            if key != .ingest && graceDays != AccessLifetimes.ingestKeyGrace / 86_400 && graceDays != 0 {
                throw ValidationError("--grace-days applies to --key ingest; a \(key.rawValue) key ends at once")
            }
        }

        func run() async throws {
            let now = Date().timeIntervalSince1970
            let grace = key == .ingest ? graceDays * 86_400 : 0
            let kind: KeyGrant.Kind = switch key {
            case .ingest: .ingest
            case .read: .read
            case .admin: .admin
            }
            guard let newKey = try await storeOptions.open().rotateKey(app: app, kind: kind, gracePeriod: grace, now: now) else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "no active app '\(app)' in \(storeOptions.name())")
            }
            let until = ISO8601.format(unixSeconds: now + grace)
            switch format {
            case .json:
                struct Rotated: Encodable { var app: String; var kind: String; var key: String; var oldKeyValidUntil: String? }
                print(try encodeJSON(Rotated(app: app, kind: key.rawValue, key: newKey, oldKeyValidUntil: key == .ingest ? until : nil)))
            case .table:
                print("app: \(app)\nnew \(key.rawValue) key: \(newKey)")
                print(key == .ingest && grace > 0 ? "The old ingest key keeps working until \(until)." : "The old \(key.rawValue) key no longer works.")
                print("The key is stored hashed and cannot be shown again.")
            }
        }
    }

    struct RevokeApp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke an app's keys (its data stays).")
        @Argument(help: "The app id.") var app: String
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            guard try await storeOptions.open().revokeApp(app) else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())")
            }
            print("revoked the keys of \(app)")
        }
    }
}
