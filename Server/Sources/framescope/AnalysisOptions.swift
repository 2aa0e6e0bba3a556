import ArgumentParser
import FramescopeCore
import FramescopeTraces

/// Options every command that analyzes traces shares.
struct AnalysisOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Refresh rate in Hz for ticks without a targetTimestamp; overrides the trace's own '# refreshRate'.", valueName: "hz"))
    var refreshRate: Double?

    @Option(name: .long, help: ArgumentHelp("The recordings' format, when detection from the content should not decide (docs/traces.md).", valueName: "format"))
    var inputFormat: TraceFormat?

    @Option(name: .long, help: ArgumentHelp("In a recording of several applications (PresentMon, Chrome), the one to analyze: its name or process ID. Default: the one with the most frames.", valueName: "name|pid"))
    var process: String?

    @Option(name: .long, help: ArgumentHelp("A frame at least this long is a hang, in seconds.", valueName: "seconds"))
    var hangThreshold: Double = 0.25

    @Option(name: .long, help: ArgumentHelp("A frame at least this long is frozen, in seconds.", valueName: "seconds"))
    var frozenThreshold: Double = 0.7

    @Option(name: .long, help: ArgumentHelp("Length of one FPS window, in seconds.", valueName: "seconds"))
    var window: Double = 1.0

    @Option(name: .long, help: ArgumentHelp("Stability band around average FPS, as a fraction (0.2 = ±20 %).", valueName: "fraction"))
    var stabilityBand: Double = 0.2

    var configuration: AnalyzerConfiguration {
        AnalyzerConfiguration(hangThreshold: hangThreshold, frozenThreshold: frozenThreshold, windowLength: window, stabilityBand: stabilityBand)
    }

    mutating func validate() throws {
        if let refreshRate, !(refreshRate.isFinite && refreshRate > 0) {
            throw ValidationError("--refresh-rate must be a positive number of Hz, not \(refreshRate)")
        }
        if let problem = configuration.problem {
            throw ValidationError(problem)
        }
    }
}

/// How a command prints its result.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table
    case json
}

extension TraceFormat: @retroactive ExpressibleByArgument {}
