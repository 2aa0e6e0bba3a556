import ArgumentParser
import Foundation
import FramescopeCollector
import FramescopeCore

extension AppsCommand {
    /// `framescope apps tags APP [--add KEY | --remove KEY]`: lists, declares or removes the
    /// tag keys whose values are rollup dimensions for an app (``DeclaredTags``), on the
    /// database directly.
    struct Tags: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tags",
            abstract: "List an app's declared tag keys, declare one, or remove one.",
            discussion: """
                Every tag a device sends is kept in the raw events (framescope export filters on \
                any of them). The values of a declared key are also a rollup dimension: a filter \
                (tag.KEY=VALUE) on every read route and in the dashboard, and a break-down on the \
                overview, counting visits stored from the declaration on. An app declares at most \
                \(DeclaredTags.maximumKeys) keys; each keeps \(DeclaredTags.defaultDailyValueLimit) \
                distinct values a day before new ones count as (other); visits without the tag \
                count as (none). Removing a key stops its rollups and keeps what they hold.
                """
        )
        @Argument(help: "The app id.") var app: String
        @Option(help: ArgumentHelp("Declare this tag key.", valueName: "key")) var add: String?
        @Option(help: ArgumentHelp("Stop rolling up this tag key.", valueName: "key")) var remove: String?
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format (json: as the API answers).") var format: OutputFormat = .table

        mutating func validate() throws {
            if add != nil && remove != nil { throw ValidationError("give --add or --remove, not both") }
            if let add, let problem = DeclaredTags.problem(key: add) { throw ValidationError("--add: \(problem)") }
        }

        func run() async throws {
            let store = try await storeOptions.open()
            if let add {
                let declared: Bool?
                do {
                    declared = try await store.declareTagKey(app: app, key: add, now: Date().timeIntervalSince1970)
                } catch let error as TagKeyError {
                    throw CLIFailure(exitCode: CLIFailure.usage, message: "--add: \(error.message)")
                }
                guard let declared else { throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())") }
                print(declared ? "declared tag key '\(add)' for \(app): its values are rolled up from now on"
                               : "tag key '\(add)' was already declared for \(app)")
                return
            }
            if let remove {
                guard try await store.removeTagKey(app: app, key: remove) else {
                    throw CLIFailure(exitCode: CLIFailure.dataError, message: "app '\(app)' has no declared tag key '\(remove)' in \(storeOptions.name())")
                }
                print("removed tag key '\(remove)' of \(app): its rollups so far are kept")
                return
            }
            guard let keys = try await store.tagKeys(app: app) else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())")
            }
            switch format {
            case .json: print(try encodeJSON(TagKeysResponse(keys)))
            case .table:
                var table = TextTable(header: ["key", "declared"])
                table.rows = keys.map { [$0.key, ISO8601.format(unixSeconds: $0.declaredAt)] }
                print(table.render())
            }
        }
    }
}
