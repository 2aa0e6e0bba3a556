import ArgumentParser
import Foundation
import FramescopeCore
import FramescopeSimulation

/// `framescope simulate`: tick streams from the frame-pipeline simulator.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write a simulated frame trace: a workload rendered on a simulated display.",
        discussion: """
            Without --scenario, simulates a generic app: idle spells and scroll gestures in \
            turn, per-frame work from the chosen --workload, optional main-thread stalls. \
            With --scenario, reproduces one variant of the thesis' message-list test \
            (--list names them and shows thesis and simulated figures). The trace is CSV \
            or JSON by the output file's extension; without --output, CSV goes to stdout. \
            --ground-truth writes what the simulator caused (drops, hangs, segments). \
            Every trace says in its first line that it is simulated, not measured.
            """
    )

    @Flag(help: "List the thesis scenarios with the thesis' and the simulated figures.")
    var list = false

    @Option(help: ArgumentHelp("A thesis scenario (see --list).", valueName: "name"))
    var scenario: String?

    @Option(help: "Seed for every random draw; the same seed gives the same trace.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Where to write the trace (.csv or .json); stdout (CSV) by default.", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Where to write the ground truth (JSON).", valueName: "file"))
    var groundTruth: String?

    @Option(help: "Display: 60, 120, 50 (Hz) or promotion (24 Hz idle, 120 Hz in motion).")
    var display: DisplayChoice = .hz60

    @Flag(help: "Low-power mode: caps the display at 60 Hz.")
    var lowPower = false

    @Option(help: "Per-frame cost of the generic workload.")
    var workload: WorkloadChoice = .moderate

    @Option(help: ArgumentHelp("Length of the generic workload, in seconds.", valueName: "seconds"))
    var duration: Double = 30

    @Option(help: ArgumentHelp("Idle seconds before each scroll.", valueName: "seconds"))
    var idle: Double = 1

    @Option(help: ArgumentHelp("Seconds each scroll gesture lasts.", valueName: "seconds"))
    var scroll: Double = 2

    @Option(help: ArgumentHelp("Mean seconds between main-thread stalls (none by default).", valueName: "seconds"))
    var stallEvery: Double?

    @Option(help: ArgumentHelp("How long each stall blocks the main thread, in seconds.", valueName: "seconds"))
    var stallLength: Double = 0.4

    @Option(help: ArgumentHelp("Timestamp jitter as a fraction of a refresh (0 to 0.2).", valueName: "fraction"))
    var jitter: Double = 0.02

    mutating func validate() throws {
        if let scenario, ThesisScenario.named(scenario) == nil {
            throw ValidationError("Unknown scenario '\(scenario)'. Known: \(ThesisScenario.all.map(\.name).joined(separator: ", ")).")
        }
        for (name, value) in [("--duration", duration), ("--scroll", scroll), ("--stall-length", stallLength)] where !(value.isFinite && value > 0) {
            throw ValidationError("\(name) must be a positive number of seconds, not \(value)")
        }
        if !(idle.isFinite && idle >= 0) { throw ValidationError("--idle must be zero or a positive number of seconds") }
        if duration > 86_400 { throw ValidationError("--duration is limited to one day (86400 s)") }
        if let stallEvery, !(stallEvery.isFinite && stallEvery > 0) { throw ValidationError("--stall-every must be a positive number of seconds") }
        if !(jitter.isFinite && jitter >= 0 && jitter <= 0.2) { throw ValidationError("--jitter must lie between 0 and 0.2") }
        if let output, !(output.hasSuffix(".csv") || output.hasSuffix(".json")) {
            throw ValidationError("--output must end in .csv or .json")
        }
    }

    func run() throws {
        if list {
            print(thesisTable(seed: seed))
            return
        }
        let recording: SimulatedRecording
        let description: String
        if let name = scenario, let thesis = ThesisScenario.named(name) {
            recording = thesis.simulate(seed: seed)
            description = "thesis scenario \(name) (\(thesis.thesisRow)), seed \(seed)"
        } else {
            var generic = SyntheticWorkload(profile: workload.profile, duration: duration, idleLength: idle, scrollLength: scroll,
                                            stallInterval: stallEvery, stallLength: stallLength, seed: seed)
            let simulator = PipelineSimulator(display: display.mode, lowPower: lowPower, timestampJitter: jitter, seed: seed)
            recording = simulator.run(&generic, startTime: 100)
            description = "\(workload.rawValue) workload on a \(display.rawValue) display\(lowPower ? " in low-power mode" : ""), seed \(seed)"
        }
        let header = "simulated by framescope simulate: \(description); not a measurement of a device"
        let text = output?.hasSuffix(".json") == true ? traceJSON(recording, header: header) : traceCSV(recording, header: header)
        try writeOutput(text, to: output)
        if let groundTruth {
            try writeOutput(try encodeJSON(recording.groundTruth) + "\n", to: groundTruth)
        }
    }
}

/// The display choices of `simulate`.
enum DisplayChoice: String, ExpressibleByArgument, CaseIterable {
    case hz60 = "60"
    case hz120 = "120"
    case hz50 = "50"
    case promotion

    var mode: DisplayMode {
        switch self {
        case .hz60: return .fixed(hz: 60)
        case .hz120: return .fixed(hz: 120)
        case .hz50: return .fixed(hz: 50)
        case .promotion: return .variable(idleHz: 24, motionHz: 120)
        }
    }
}

/// The generic workload choices of `simulate`.
enum WorkloadChoice: String, ExpressibleByArgument, CaseIterable {
    case light, moderate, heavy

    var profile: SyntheticWorkload.Profile {
        switch self {
        case .light: return .light
        case .moderate: return .moderate
        case .heavy: return .heavy
        }
    }
}

/// A simulated recording as a CSV trace.
func traceCSV(_ recording: SimulatedRecording, header: String) -> String {
    var lines = ["# \(header)", "timestamp,targetTimestamp,segment"]
    lines.reserveCapacity(recording.ticks.count + 2)
    for tick in recording.ticks {
        lines.append("\(tick.timestamp),\(tick.targetTimestamp),\(tick.segment ?? "")")
    }
    return lines.joined(separator: "\n") + "\n"
}

/// A simulated recording as a JSON trace.
func traceJSON(_ recording: SimulatedRecording, header: String) -> String {
    var parts: [String] = []
    parts.reserveCapacity(recording.ticks.count)
    for tick in recording.ticks {
        let segment = tick.segment.map { "\"\($0)\"" } ?? "null"
        parts.append("{\"timestamp\": \(tick.timestamp), \"targetTimestamp\": \(tick.targetTimestamp), \"segment\": \(segment)}")
    }
    return "{\"simulated\": \"\(header)\",\n\"ticks\": [\n" + parts.joined(separator: ",\n") + "\n]}\n"
}

/// The table of `simulate --list`: each scenario's thesis figures beside the simulated ones.
func thesisTable(seed: UInt64) -> String {
    var table = TextTable(header: ["scenario", "thesis row", "thesis FPS", "simulated FPS", "thesis stability", "simulated stability", "thesis s", "simulated s"])
    for scenario in ThesisScenario.all {
        let (recording, testDuration) = scenario.run(seed: seed)
        let report = recording.analyze().whole
        table.rows.append([
            scenario.name, scenario.thesisRow,
            Metric.decimal(scenario.thesisAverageFPS, digits: 1), report.averageFPS.map { Metric.decimal($0, digits: 1) } ?? "—",
            Metric.stability.format(scenario.thesisStability), report.stability.map(Metric.stability.format) ?? "—",
            Metric.decimal(scenario.thesisDuration, digits: 1), testDuration.map { Metric.decimal($0, digits: 1) } ?? "—",
        ])
    }
    return "Simulated: the thesis' scroll test over a generated 500-message list on a 60 Hz display (seed \(seed)).\n"
        + "A simulation calibrated to the thesis' table, not a measurement of a device.\n\n" + table.render()
}
