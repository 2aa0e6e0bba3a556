import ArgumentParser
import Foundation
import FramescopeCollector
import FramescopeCore

extension AppsCommand {
    /// `framescope apps thresholds APP [options]`: shows an app's bands and verdict rules, or
    /// sets the ones given, on the database directly (as `PUT /v1/apps/{app}/thresholds` does
    /// over HTTP).
    struct Thresholds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "thresholds",
            abstract: "Show an app's bands and verdict rules, or set the ones given.",
            discussion: """
                Without options, prints the thresholds in effect and where each comes from (the \
                app's setting, the default, or none). Each option sets one and keeps the others; \
                `default` puts one back to its default. Bands are GOOD,CRITICAL in the figure's \
                unit: good below GOOD, critical above CRITICAL, warning between. \(bandUnits); a \
                p95 frame duration may also be given in ms (17ms,34ms). --min-change is a fraction \
                of the baseline or a percentage (0.05 or 5%, the default); --min-visits the fewest \
                visits per side (2, the default); --min-installations the fewest distinct \
                installations a version needs to take part in regression alerts (20, the \
                default; 0 lets every version take part).
                """
        )

        /// Each figure an app may band, with its unit and default bands, from the registry:
        /// "Hitch ratio (ms/s, default 5,10), …".
        static var bandUnits: String {
            ThresholdFigure.allCases.map { threshold in
                let figure = threshold.figure
                let defaults = figure.defaultBands.map { "default \(String(format: "%g", $0.warning)),\(String(format: "%g", $0.critical))" } ?? "no default bands"
                return "\(figure.label) (\(figure.unit), \(defaults))"
            }.joined(separator: ", ")
        }
        @Argument(help: "The app id.") var app: String
        @Option(help: ArgumentHelp("Hitch-ratio bands, \(Figure.hitchRatio.unit).", valueName: "good,critical|default")) var hitchRatio: BandOption?
        @Option(help: ArgumentHelp("Hitch-ratio bands in motion, \(Figure.motionHitchRatio.unit).", valueName: "good,critical|default")) var hitchRatioMotion: BandOption?
        @Option(help: ArgumentHelp("Hang-rate bands, \(Figure.hangRate.unit).", valueName: "good,critical|default")) var hangRate: BandOption?
        @Option(help: ArgumentHelp("Frozen-frame bands, \(Figure.frozenFramesPerThousand.unit).", valueName: "good,critical|default")) var frozenFrames: BandOption?
        @Option(help: ArgumentHelp("p95 frame-duration bands, s (or ms with the suffix).", valueName: "good,critical|default"))
        var frameDurationP95: DurationBandOption?
        @Option(help: ArgumentHelp("The smallest change a verdict counts, of the baseline.", valueName: "fraction|percent%|default"))
        var minChange: ChangeOption?
        @Option(help: ArgumentHelp("The fewest visits per side for a verdict.", valueName: "visits|default")) var minVisits: VisitsOption?
        @Option(help: ArgumentHelp("The fewest distinct installations a version needs to take part in regression alerts.",
                                   valueName: "installations|default"))
        var minInstallations: VisitsOption?
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Output format (json: as GET /v1/apps/{app}/thresholds answers).") var format: OutputFormat = .table

        /// Each band option with its figure.
        var bandOptions: [(ThresholdFigure, String, Setting<BandLimits>?)] {
            [(.hitchRatio, "--hitch-ratio", hitchRatio?.setting), (.motionHitchRatio, "--hitch-ratio-motion", hitchRatioMotion?.setting),
             (.hangRate, "--hang-rate", hangRate?.setting), (.frozenFramesPerThousand, "--frozen-frames", frozenFrames?.setting),
             (.frameDurationP95, "--frame-duration-p95", frameDurationP95?.setting)]
        }

        var changesSomething: Bool {
            bandOptions.contains { $0.2 != nil } || minChange != nil || minVisits != nil || minInstallations != nil
        }

        /// `current` with the options laid over it.
        func applied(to current: AppThresholds) -> AppThresholds {
            var settings = current
            for (figure, _, setting) in bandOptions {
                switch setting {
                case .value(let limits): settings.bands[figure] = limits
                case .default: settings.bands[figure] = nil
                case nil: break
                }
            }
            if let minChange { settings.minimumChange = minChange.setting.value }
            if let minVisits { settings.minimumVisits = minVisits.setting.value }
            if let minInstallations { settings.minimumInstallations = minInstallations.setting.value }
            return settings
        }

        mutating func validate() throws {
            // Each value alone against physics, naming its option (the store checks again).
            for (figure, option, setting) in bandOptions {
                if case .value(let limits) = setting, let problem = limits.problem(for: figure, path: option) {
                    throw ValidationError("\(option): \(problem.message)")
                }
            }
            if let change = minChange?.setting.value, let problem = AppThresholds(minimumChange: change).problem() {
                throw ValidationError("--min-change: \(problem.message)")
            }
            if let visits = minVisits?.setting.value, let problem = AppThresholds(minimumVisits: visits).problem() {
                throw ValidationError("--min-visits: \(problem.message)")
            }
            if let installations = minInstallations?.setting.value,
               let problem = AppThresholds(minimumInstallations: installations).problem() {
                throw ValidationError("--min-installations: \(problem.message)")
            }
        }

        func run() async throws {
            let store = try await storeOptions.open()
            guard let current = try await store.thresholds(app: app) else {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())")
            }
            var settings = current
            if changesSomething {
                settings = applied(to: current)
                do {
                    guard try await store.setThresholds(settings, app: app) else {
                        throw CLIFailure(exitCode: CLIFailure.dataError, message: "no app '\(app)' in \(storeOptions.name())")
                    }
                } catch let error as ThresholdError {
                    throw CLIFailure(exitCode: CLIFailure.usage, message: "\(error.field): \(error.message)")
                }
            }
            let answer = ThresholdsResponse(app: app, settings: settings)
            switch format {
            case .json: print(try encodeJSON(answer))
            case .table:
                if changesSomething { print("updated the thresholds of \(app)") }
                print(Self.render(answer))
            }
        }

        /// The thresholds in effect as a table, then the verdict rules.
        static func render(_ answer: ThresholdsResponse) -> String {
            var table = TextTable(header: ["figure", "unit", "good below", "critical above", "source"])
            table.rows = answer.bands.map { band in
                [band.metric, band.unit, band.goodBelow.map(number) ?? "–", band.criticalAbove.map(number) ?? "–", sourceText(band.source, figure: band.metric)]
            }
            let verdict = answer.verdict
            return table.render() + "\n"
                + "verdict: a change of at least \(number(verdict.minimumChange * 100)) % of the baseline (\(verdict.minimumChangeSource.rawValue)), "
                + "at least \(verdict.minimumVisits) visits on each side (\(verdict.minimumVisitsSource.rawValue))\n"
                + "alerts: versions sent by at least \(answer.alerts.minimumInstallations) installations "
                + "(\(answer.alerts.minimumInstallationsSource.rawValue)), at most \(answer.alerts.maximumAlertsPerPass) alerts a pass"
        }

        static func sourceText(_ source: ThresholdSource, figure: String) -> String {
            switch source {
            case .app: "app"
            case .default: figure.hasSuffix("hitchRatio") ? "default (Apple's guidance)" : "default"
            case .none: "none"
            }
        }

        /// A number as briefly as it is exact (5, 0.0175, 12.5).
        static func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
    }
}

/// An option's value: a setting, or `default` to clear it.
enum Setting<Value: Equatable>: Equatable {
    case value(Value)
    case `default`

    /// The value, or `nil` for the default.
    var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }
}

/// `GOOD,CRITICAL` in the figure's unit, or `default`.
struct BandOption: ExpressibleByArgument {
    var setting: Setting<BandLimits>

    init?(argument: String) {
        guard let setting = Self.parse(argument, number: { Double($0) }) else { return nil }
        self.setting = setting
    }

    /// Two numbers read by `number`, separated by a comma, or `default`; `nil` otherwise.
    static func parse(_ argument: String, number: (String) -> Double?) -> Setting<BandLimits>? {
        let text = argument.trimmingCharacters(in: .whitespaces)
        if text == "default" { return .default }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let good = number(parts[0]), let critical = number(parts[1]) else { return nil }
        return .value(BandLimits(goodBelow: good, criticalAbove: critical))
    }
}

/// `GOOD,CRITICAL` in seconds, or each with `ms` (`17ms,34ms`), or `default`.
struct DurationBandOption: ExpressibleByArgument {
    var setting: Setting<BandLimits>

    init?(argument: String) {
        guard let setting = BandOption.parse(argument, number: Self.seconds) else { return nil }
        self.setting = setting
    }

    /// Seconds from `0.017`, `0.017s` or `17ms`.
    static func seconds(_ text: String) -> Double? {
        if text.hasSuffix("ms") { return Double(text.dropLast(2)).map { $0 / 1000 } }
        if text.hasSuffix("s") { return Double(text.dropLast()) }
        return Double(text)
    }
}

/// A fraction (`0.05`), a percentage (`5%`), or `default`.
struct ChangeOption: ExpressibleByArgument {
    var setting: Setting<Double>

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        if text == "default" {
            setting = .default
        } else if text.hasSuffix("%"), let percent = Double(text.dropLast()) {
            setting = .value(percent / 100)
        } else if let fraction = Double(text) {
            setting = .value(fraction)
        } else {
            return nil
        }
    }
}

/// A whole number of visits, or `default`.
struct VisitsOption: ExpressibleByArgument {
    var setting: Setting<Int>

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        if text == "default" {
            setting = .default
        } else if let visits = Int(text) {
            setting = .value(visits)
        } else {
            return nil
        }
    }
}
