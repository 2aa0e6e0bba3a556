import ArgumentParser
import Foundation
import FramescopeCollector

extension AppsCommand {
    /// `framescope apps webhooks APP [--add URL | --remove ID]`: lists, adds or removes the
    /// URLs an app's regression alerts are POSTed to, on the database directly (as
    /// `GET`/`POST`/`DELETE /v1/apps/{app}/webhooks` do over HTTP with the admin key).
    struct Webhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webhooks",
            abstract: "List an app's webhooks, add one (printing its secret, once) or remove one.",
            discussion: """
                Each regression alert raised after a webhook is added is POSTed to it as JSON, \
                signed: X-Framescope-Signature: sha256=<hex HMAC-SHA256 of the body keyed with the \
                webhook's secret>. The URL must be http or https (docs/security.md on which \
                addresses to allow). Removing a webhook drops its pending deliveries.
                """
        )
        @Argument(help: "The app id.") var app: String
        @Option(help: ArgumentHelp("Add a webhook with this http or https URL.", valueName: "url")) var add: String?
        @Option(help: ArgumentHelp("Remove the webhook with this id.", valueName: "id")) var remove: Int64?
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format (json: as the API answers).") var format: OutputFormat = .table

        mutating func validate() throws {
            if add != nil && remove != nil { throw ValidationError("give --add or --remove, not both") }
            if let add, let problem = WebhookURL.problem(add) { throw ValidationError("--add: \(problem.message)") }
            if let remove, remove < 1 { throw ValidationError("--remove: a webhook id is a whole number from 1") }
        }

        func run() async throws {
            let store = try await storeOptions.open()
            let now = Date().timeIntervalSince1970
            if let add {
                let created: WebhookCredentials?
                do {
                    created = try await store.addWebhook(app: app, url: add, now: now)
                } catch let error as WebhookURLError {
                    throw CLIFailure(exitCode: CLIFailure.usage, message: "--add: \(error.message)")
                }
                guard let created else { throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())") }
                switch format {
                case .json: print(try encodeJSON(created))
                case .table:
                    print("added webhook \(created.id) to \(app): \(created.url)\nsecret: \(created.secret)")
                    print("The secret signs every delivery (X-Framescope-Signature) and cannot be shown again.")
                }
                return
            }
            if let remove {
                guard try await store.removeWebhook(app: app, id: remove) else {
                    throw CLIFailure(exitCode: CLIFailure.dataError, message: "app '\(app)' has no webhook \(remove) in \(storeOptions.name())")
                }
                print("removed webhook \(remove) of \(app)")
                return
            }
            guard let webhooks = try await store.webhooks(app: app) else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())")
            }
            switch format {
            case .json: print(try encodeJSON(WebhooksResponse(webhooks: webhooks)))
            case .table:
                var table = TextTable(header: ["id", "url", "created"])
                table.rows = webhooks.map { [String($0.id), $0.url, $0.createdAt] }
                print(table.render())
            }
        }
    }

    /// `framescope apps alerts APP [--acknowledge ID]`: lists an app's regression alerts, or
    /// acknowledges one, on the database directly (as `GET /v1/apps/{app}/alerts` and
    /// `POST …/alerts/{id}/acknowledge` do over HTTP).
    struct Alerts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "alerts",
            abstract: "List an app's regression alerts, newest first, or acknowledge one.",
            discussion: """
                The collector raises an alert for each screen and figure that regressed between \
                consecutive app versions, under the app's verdict rules, when it starts and then \
                hourly: once per screen, figure and version pair.
                """
        )
        @Argument(help: "The app id.") var app: String
        @Option(help: ArgumentHelp("Acknowledge the alert with this id.", valueName: "id")) var acknowledge: Int64?
        @Option(help: ArgumentHelp("The most alerts to list.", valueName: "count")) var limit = 100
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format (json: as the API answers).") var format: OutputFormat = .table

        mutating func validate() throws {
            if let acknowledge, acknowledge < 1 { throw ValidationError("--acknowledge: an alert id is a whole number from 1") }
            if !(1...100_000).contains(limit) { throw ValidationError("--limit must be 1–100000") }
        }

        func run() async throws {
            let store = try await storeOptions.open()
            guard try await store.webhooks(app: app) != nil else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())")
            }
            if let acknowledge {
                guard let alert = try await store.acknowledgeAlert(app: app, id: acknowledge, now: Date().timeIntervalSince1970) else {
                    throw CLIFailure(exitCode: CLIFailure.dataError, message: "app '\(app)' has no alert \(acknowledge) in \(storeOptions.name())")
                }
                switch format {
                case .json: print(try encodeJSON(alert))
                case .table: print("acknowledged alert \(alert.id) of \(app) at \(alert.acknowledgedAt ?? "")")
                }
                return
            }
            let alerts = try await store.alerts(app: app, limit: limit)
            switch format {
            case .json: print(try encodeJSON(AlertsResponse(alerts: alerts)))
            case .table:
                var table = TextTable(header: ["id", "screen", "metric", "versions", "change", "interval", "created", "acknowledged", "deliveries"])
                table.rows = alerts.map { alert in
                    let figures = alert.figures
                    let relative = figures.relativeChange.map { String(format: " (%+.0f %%)", $0 * 100) } ?? ""
                    let interval = figures.changeLow.flatMap { low in figures.changeHigh.map { String(format: "%.3g to %.3g", low, $0) } } ?? "–"
                    return [String(alert.id), alert.screen, alert.metric, "\(alert.baseline) → \(alert.candidate)",
                            figures.change.map { String(format: "%+.3g %@", $0, figures.unit) + relative } ?? "–", interval,
                            alert.createdAt, alert.acknowledgedAt ?? "no", Self.deliveries(alert)]
                }
                print(table.render())
            }
        }

        /// "2 delivered, 1 undelivered", or "no webhooks".
        static func deliveries(_ alert: RegressionAlert) -> String {
            guard !alert.deliveries.isEmpty else { return "no webhooks" }
            return DeliveryState.allCases.compactMap { state in
                let count = alert.deliveries.filter { $0.state == state }.count
                return count > 0 ? "\(count) \(state.rawValue)" : nil
            }.joined(separator: ", ")
        }
    }
}
