import ArgumentParser
import Foundation
import FramescopeCore
import FramescopeTraces

/// `framescope bench`: benchmarks that print figures (`analyze`, the default, and `queries`).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure analyze's throughput, the collector's query latency over large rollups, compare's rank statistics, or the symbol cache.",
        subcommands: [BenchAnalyzeCommand.self, BenchFormatsCommand.self, BenchQueriesCommand.self, BenchCompareCommand.self, BenchSymbolsCommand.self],
        defaultSubcommand: BenchAnalyzeCommand.self
    )
}

/// `framescope bench analyze`: throughput and memory of `analyze` on a generated trace.
struct BenchAnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Measure analyze's throughput and memory on a generated CSV trace.",
        discussion: """
            Writes a CSV trace of --ticks ticks (60 Hz, a drop every 97 frames, a segment \
            every 600 ticks), then analyzes it as 'framescope analyze' does and prints \
            ticks/s, MB/s and peak resident memory, plus the engine's own ns per tick on \
            ticks generated in memory. Build with -c release for meaningful figures.
            """
    )

    @Option(help: "Number of ticks to generate.")
    var ticks: Int = 10_000_000

    @Option(help: ArgumentHelp("Where to write the trace; a temporary file by default (deleted afterwards).", valueName: "path"))
    var output: String?

    mutating func validate() throws {
        if ticks < 2 { throw ValidationError("--ticks must be at least 2") }
    }

    func run() throws {
        let path = output ?? NSTemporaryDirectory() + "framescope-bench-\(getpid()).csv"
        defer { if output == nil { try? FileManager.default.removeItem(atPath: path) } }
        let bytes = try writeBenchmarkTrace(ticks: ticks, to: path)
        let residentBefore = residentMemory().current

        let clock = ContinuousClock()
        var source = try FileByteSource(path: path)
        var report = RecordingReport(whole: FrameReport())
        let elapsed = try clock.measure {
            report = try TraceReader(file: path).analyze(from: &source)
        }
        let memory = residentMemory()
        let analyzeSeconds = seconds(elapsed)
        let measured = report.whole.frames + report.whole.firstFrames + 1

        let engineTicks = min(ticks, 50_000_000)
        var analyzer = FrameAnalyzer()
        let interval = 1.0 / 60
        let engineElapsed = clock.measure {
            var t = 0.0
            for index in 0..<engineTicks {
                t += index % 97 == 96 ? 2 * interval : interval
                analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + interval))
            }
        }
        let engineSeconds = seconds(engineElapsed)

        print("""
            trace:                 \(ticks) ticks, \(Metric.decimal(Double(bytes) / 1e6, digits: 1)) MB CSV
            analyze:               \(Metric.decimal(analyzeSeconds, digits: 3)) s
            ticks per second:      \(Metric.decimal(Double(measured) / analyzeSeconds / 1e6, digits: 2)) million
            throughput:            \(Metric.decimal(Double(bytes) / analyzeSeconds / 1e6, digits: 1)) MB/s
            resident before:       \(Metric.decimal(Double(residentBefore) / 1e6, digits: 1)) MB
            resident after:        \(Metric.decimal(Double(memory.current) / 1e6, digits: 1)) MB
            peak resident:         \(Metric.decimal(Double(memory.peak) / 1e6, digits: 1)) MB
            engine only:           \(Metric.decimal(engineSeconds / Double(engineTicks) * 1e9, digits: 1)) ns per tick (\(engineTicks) ticks in memory)
            check:                 \(report.whole.frames) frames, \(report.whole.dropEvents) drop events, \(report.segments.count) segments, averageFPS \(Metric.decimal(report.whole.averageFPS ?? 0, digits: 2))
            """)
        _ = analyzer.report().whole.frames
    }
}

/// Writes the benchmark trace and returns its size in bytes.
func writeBenchmarkTrace(ticks: Int, to path: String) throws -> Int {
    guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
        throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): cannot create the benchmark trace")
    }
    defer { try? handle.close() }
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 21)
    var written = 0
    func flush() throws {
        try handle.write(contentsOf: buffer)
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
    buffer.append(contentsOf: Array("timestamp,targetTimestamp,segment\n".utf8))
    let intervalNanoseconds: Int64 = 16_666_667
    var now: Int64 = 1_000_000_000_000
    for index in 0..<ticks {
        now += index % 97 == 96 ? 2 * intervalNanoseconds : intervalNanoseconds
        appendSeconds(now, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        appendSeconds(now + intervalNanoseconds, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        if (index / 600) % 2 == 1 {
            buffer.append(contentsOf: Array("scroll \(index / 1200 + 1)".utf8))
        }
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 20 { try flush() }
    }
    try flush()
    return written
}

/// Appends whole nanoseconds as seconds with nine decimals ("1000.016666667").
func appendSeconds(_ nanoseconds: Int64, to buffer: inout [UInt8]) {
    let seconds = nanoseconds / 1_000_000_000
    var fraction = nanoseconds % 1_000_000_000
    buffer.append(contentsOf: String(seconds).utf8)
    buffer.append(UInt8(ascii: "."))
    var digits = [UInt8](repeating: 48, count: 9)
    for position in stride(from: 8, through: 0, by: -1) {
        digits[position] = UInt8(48 + fraction % 10)
        fraction /= 10
    }
    buffer.append(contentsOf: digits)
}

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// The process's resident memory now and at its peak, in bytes.
func residentMemory() -> (current: Int, peak: Int) {
    #if os(Linux)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    func field(_ name: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter(\.isNumber)
            return (Int(String(digits)) ?? 0) * 1024
        }
        return 0
    }
    return (field("VmRSS:"), field("VmHWM:"))
    #else
    var usage = rusage()
    getrusage(RUSAGE_SELF, &usage)
    return (Int(usage.ru_maxrss), Int(usage.ru_maxrss))
    #endif
}

/// `framescope bench formats`: each reader's throughput on a generated recording of its
/// format, beside `wc -l` on the same file (a floor: reading the bytes and counting lines).
struct BenchFormatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "formats",
        abstract: "Measure each trace reader's throughput (MB/s) on a generated recording, beside wc -l.",
        discussion: """
            Writes a recording of about --megabytes MB for each format (Framescope CSV, \
            SurfaceFlinger latency, PresentMon 2.x with two swap chains, a Chrome JSON \
            trace with twenty other events per frame, an xctrace display table), runs \
            'wc -l' on it, then analyzes it as 'framescope analyze' does, --runs times, and \
            prints the best and median MB/s of each and the peak resident memory. Build \
            with -c release for meaningful figures.
            """
    )

    @Option(help: "Size of each generated recording, in MB.")
    var megabytes: Int = 200

    @Option(help: "How many times each file is read.")
    var runs: Int = 3

    @Option(help: "Only these formats (repeat the option); all by default.")
    var only: [TraceFormat] = []

    mutating func validate() throws {
        if megabytes < 1 || megabytes > 100_000 { throw ValidationError("--megabytes must lie between 1 and 100000") }
        if runs < 1 || runs > 100 { throw ValidationError("--runs must lie between 1 and 100") }
    }

    func run() throws {
        let clock = ContinuousClock()
        print("format                   size      wc -l (best)   analyze best   analyze median   frames      peak RSS")
        for format in only.isEmpty ? BenchRecordings.formats : only {
            let path = NSTemporaryDirectory() + "framescope-bench-\(getpid()).\(format.rawValue)"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let bytes = try BenchRecordings.write(format, bytes: megabytes * 1_000_000, to: path)
            var floor: [Double] = []
            var rates: [Double] = []
            var frames = 0
            for _ in 0..<runs {
                let wc = Process()
                wc.executableURL = URL(fileURLWithPath: "/usr/bin/wc")
                wc.arguments = ["-l", path]
                wc.standardOutput = FileHandle.nullDevice
                let wcTime = try clock.measure { try wc.run(); wc.waitUntilExit() }
                floor.append(Double(bytes) / seconds(wcTime) / 1e6)
                var source = try FileByteSource(path: path)
                var report = RecordingReport(whole: FrameReport())
                let elapsed = try clock.measure { report = try TraceReader(file: path).analyze(from: &source, format: format) }
                rates.append(Double(bytes) / seconds(elapsed) / 1e6)
                frames = report.whole.frames + report.whole.firstFrames
            }
            rates.sort()
            let name = format.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)
            let size = Metric.decimal(Double(bytes) / 1e6, digits: 0) + " MB"
            print("\(name)  \(size.leftPadded(8))  \((Metric.decimal(floor.max() ?? 0, digits: 0) + " MB/s").leftPadded(13))  \((Metric.decimal(rates.last ?? 0, digits: 1) + " MB/s").leftPadded(13))  \((Metric.decimal(rates[rates.count / 2], digits: 1) + " MB/s").leftPadded(15))  \(String(frames).leftPadded(9))  \((Metric.decimal(Double(residentMemory().peak) / 1e6, digits: 1) + " MB").leftPadded(11))")
        }
    }
}

extension String {
    /// The text right-aligned in `width` characters.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
