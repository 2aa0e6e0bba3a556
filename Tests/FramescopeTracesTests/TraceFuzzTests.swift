import Foundation
import FramescopeCore
import FramescopeSimulation
import FramescopeTraces
import Testing

/// Seeded mutation fuzzing of the readers of other tools' recordings (SurfaceFlinger
/// latency, gfxinfo, xctrace XML, PresentMon CSV, Chrome JSON), starting from the corpus' real files: no input may trap,
/// and every refusal is a ``TraceError`` that says what is wrong (and where, when it can).
///
/// CI runs a fixed number of inputs per reader; a long run takes `FRAMESCOPE_FUZZ_SECONDS`
/// per reader (`docs/security.md`):
///
/// ```
/// FRAMESCOPE_FUZZ_SECONDS=600 swift test --filter TraceFuzz
/// ```
@Suite("Fuzzing the readers of other tools' recordings")
struct TraceFuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seconds = environment["FRAMESCOPE_FUZZ_SECONDS"].flatMap(Double.init)
    static let seed = environment["FRAMESCOPE_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_125

    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }

    /// Tokens that sit on the formats' edges.
    static let interesting: [String] = [
        "0 0 0\n", "9223372036854775807", "18446744073709551616", "-1", "\t", "\r\n", "\n\n", "\u{0}", "1e9",
        "<row>", "</row>", "<row/>", "</node>", "<sentinel/>", " ref=\"1\"", " id=\"99999999999999999999\"", " ref=\"-3\"",
        "&#0;", "&#x110000;", "&#xD800;", "&amp", "<![CDATA[", "]]>", "<!--", "-->", "<?x?>", "'", "\"",
        "<schema name=\"hitches\">", "<schema name=\"display-vsyncs-interval\">", "<col><mnemonic>start</mnemonic></col>",
        "HISTOGRAM: ", "5ms=", "=1000000000000 ", "** Graphics info for pid 1 [x] **\n", "50th percentile: 99999999999999999999ms\n",
        "Total frames rendered: ", "Janky frames: ", "Number X: 7\n", "\u{1B}[31m", "\u{202E}",
        "---PROFILEDATA---\n", "Flags,IntendedVsync,Vsync,FrameCompleted,FrameDeadline,FrameInterval,\n", "0,1,1,9223372036854775807,2,16666666,\n",
        ",NA", ",\"", "\"\"", ",,", ",1e308", ",-0", ",0x", "Application,", ",TimeInQPC", ",CPUStartTime", ",Dropped",
        "{\"name\":\"PipelineReporter\",\"ph\":\"b\",\"pid\":1,\"ts\":1,\"args\":{\"chrome_frame_reporter\":{\"state\":\"STATE_DROPPED\"}}},",
        "\"ts\":-1e999", "\"pid\":\"x\"", "\\u", "[", "]", "{", "}",
    ]

    /// One mutation of `input`.
    static func mutate(_ input: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where !bytes.isEmpty:
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
        case 1 where !bytes.isEmpty:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...64, using: &random)))
        case 2:
            bytes.insert(contentsOf: Array(interesting.randomElement(using: &random)!.utf8), at: Int.random(in: 0...bytes.count, using: &random))
        case 3 where !bytes.isEmpty:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let range = start..<min(bytes.count, start + Int.random(in: 1...512, using: &random))
            bytes.insert(contentsOf: bytes[range], at: Int.random(in: 0...bytes.count, using: &random))
        case 4 where !bytes.isEmpty:
            bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &random)...)
        default:
            if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
        }
        return bytes
    }

    /// Reads `input` as `format` through chunks of `chunk` bytes, the way `analyze` does.
    /// - Returns: whether it was accepted; a refusal must be a data error with a message.
    static func exercise(_ input: [UInt8], format: TraceFormat?, chunk: Int) -> Bool {
        var source = MemoryByteSource(input, chunkSize: chunk)
        do throws(TraceError) {
            let report = try TraceReader(file: "fuzz").analyze(from: &source, format: format)
            _ = report.whole.hitchRatio
            _ = report.whole.frameDurations.value(atQuantile: 0.99)
            return true
        } catch {
            #expect(error.kind == .data && !error.message.isEmpty, "\(error)")
            if let line = error.line { #expect(line >= 1, "\(error)") }
            return false
        }
    }

    static func run(_ format: TraceFormat, files: [String], derived: [[UInt8]] = [], defaultInputs: Int) throws {
        var random = SeededGenerator(seed: seed)
        var seeds = try files.map { Array(try Data(contentsOf: corpus.appendingPathComponent($0))) } + derived
        let started = Date()
        var inputs = 0
        var accepted = 0
        while seconds.map({ Date().timeIntervalSince(started) < $0 }) ?? (inputs < defaultInputs) {
            var input = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...4, using: &random) { input = mutate(input, &random) }
            let chunk = [1, 7, 64, 4096, Int.max].randomElement(using: &random)!
            // Half detected from the content, half forced: a forced format meets anything.
            if exercise(input, format: Bool.random(using: &random) ? format : nil, chunk: chunk) { accepted += 1 }
            inputs += 1
            if inputs % 64 == 0 && input.count < 64 << 10 { seeds.append(input); if seeds.count > 128 { seeds.remove(at: files.count + derived.count) } }
        }
        print("fuzz \(format.rawValue): \(inputs) inputs in \(Int(Date().timeIntervalSince(started))) s, \(accepted) accepted, seed \(seed), no crash")
    }

    @Test("SurfaceFlinger latency: mutated dumps are read or refused, never a trap")
    func surfaceFlinger() throws {
        try Self.run(.surfaceFlingerLatency, files: [
            "android-gfxinfo/aosp-studio-profiler_surfaceflinger-latency_127-frames.txt",
            "android-gfxinfo/aosp-studio-profiler_surfaceflinger-latency_with-zero-rows.txt",
        ], defaultInputs: 1_500)
    }

    @Test("gfxinfo: mutated dumps are read or refused, never a trap")
    func gfxinfo() throws {
        try Self.run(.gfxinfo, files: [
            "android-gfxinfo/flashlight_gfxinfo-summary_android12plus.txt",
            "android-gfxinfo/flashlight_reactnativefeed_gfxinfo-summary.txt",
        ], defaultInputs: 1_500)
    }

    @Test("xctrace XML: mutated exports are read or refused, never a trap")
    func xctrace() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.appendingPathComponent("xctrace").path)
            .filter { $0.hasSuffix(".xml") }.sorted().map { "xctrace/\($0)" }
        #expect(files.count == 6)
        try Self.run(.xctrace, files: files, defaultInputs: 1_500)
    }

    @Test("PresentMon CSV: mutated captures are read or refused, never a trap")
    func presentMon() throws {
        // The four layouts of one capture (the larger real captures add length, not shapes).
        try Self.run(.presentMon, files: [
            "presentmon/presentmon-1.5_test_case_2.csv",
            "presentmon/presentmon-2.x-v1metrics_test_case_2.csv",
            "presentmon/presentmon-2.x-v2metrics_test_case_2.csv",
            "presentmon/presentmon-2.x_test_case_2.csv",
        ], derived: [
            // A CapFrameX capture: its //key=value description before the 1.5 layout.
            Array((PresentMonTests.capFrameXHeader.joined(separator: "\r\n") + "\r\n").utf8)
                + Array(try Data(contentsOf: Self.corpus.appendingPathComponent("presentmon/presentmon-1.5_test_case_2.csv"))),
        ], defaultInputs: 1_500)
    }

    @Test("Chrome JSON: mutated traces are read or refused, never a trap")
    func chrome() throws {
        try Self.run(.chrome, files: ["chrome-trace/lighthouse_user-timing_pipelinereporter.json"], defaultInputs: 150)
    }

    @Test("MetricKit JSON: mutated payloads are read or refused, never a trap")
    func metricKit() throws {
        try Self.run(.metricKit, files: [
            "metrickit/meter_xcode-simulated_ios14_diagnostic-payload.json",
            "metrickit/meter_xcode-simulated_macos13_diagnostic-payload.json",
        ], defaultInputs: 400)
    }
}
