import CompressNIO
import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import NIOCore
import Testing

/// Seeded, structure-aware mutation fuzzing of every decoder a device can reach: the
/// batch decoders (fast and Codable), the binary report decoder and gzip bodies, each
/// followed by validation and by merging what was accepted (where arithmetic could trap).
///
/// A crash ends the test process, so a clean run means no input trapped. CI runs a short
/// fixed number of inputs; a long run takes `FRAMESCOPE_FUZZ_SECONDS` per target and
/// `FRAMESCOPE_FUZZ_SEED`, and prints the figures recorded in docs/security.md:
///
/// ```sh
/// FRAMESCOPE_FUZZ_SECONDS=600 swift test --filter Fuzz
/// ```
@Suite("Fuzzing the decoders a device can reach")
struct FuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seconds = environment["FRAMESCOPE_FUZZ_SECONDS"].flatMap(Double.init)
    static let seed = environment["FRAMESCOPE_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_124
    static let now = CollectorRouteTests.now

    /// Values that sit on edges: limits, overflow, signs, non-numbers, markup, format scalars.
    static let interesting: [String] = [
        "0", "-1", "1", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "4611686018427387904",
        "1e308", "-1e308", "1e-320", "0.0001", "1000.5", "\"NaN\"", "null", "true", "[]", "{}", "\"\"",
        "\"x\\\"\u{301} autofocus\"", "\"\u{600}<b>\"", "\"\u{202E}\"", "\"\\u0000\"", String(repeating: "9", count: 400),
    ]

    /// Valid batches to start from: binary reports (as the SDK sends) and JSON reports.
    static func seeds() throws -> [[UInt8]] {
        let batch = makeBatch(id: "seed", count: 3, start: now - 600)
        let compact = JSONEncoder()
        compact.userInfo[ScreenVisitEvent.compactReportsKey] = true
        // Hangs with sampled stacks (issue 33): images, frames and samples to mutate.
        var stacked = makeBatch(id: "stacked", count: 2, start: now - 600)
        stacked.events[0].hangs = [HangRecord(offset: 0.5, duration: 0.75, stack: HangStackFixtures.stack(site: 0x215c)),
                                   HangRecord(offset: 2, duration: 0.3, idle: true, stack: HangStackFixtures.stack(site: 0x25b8, samples: 2))]
        return [Array(try compact.encode(batch)), Array(try JSONEncoder().encode(batch)), Array(try compact.encode(stacked))]
    }

    /// One mutation of `input`, chosen by `random`.
    static func mutate(_ input: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        switch Int.random(in: 0..<7, using: &random) {
        case 0 where !bytes.isEmpty:  // flip bits
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
        case 1 where !bytes.isEmpty:  // delete a range
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...32, using: &random)))
        case 2:  // insert an interesting token
            let token = Array(interesting.randomElement(using: &random)!.utf8)
            bytes.insert(contentsOf: token, at: Int.random(in: 0...bytes.count, using: &random))
        case 3 where !bytes.isEmpty:  // duplicate a range (repeated keys, long arrays)
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let range = start..<min(bytes.count, start + Int.random(in: 1...256, using: &random))
            bytes.insert(contentsOf: bytes[range], at: Int.random(in: 0...bytes.count, using: &random))
        case 4:  // replace a JSON number with an interesting value
            if let replaced = replaceNumber(in: bytes, &random) { bytes = replaced }
        case 5:  // corrupt one event's binary report and re-encode it in base64
            if let replaced = corruptBinaryReport(in: bytes, &random) { bytes = replaced }
        default:
            if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
        }
        return bytes
    }

    /// `bytes` with one number token replaced.
    static func replaceNumber(in bytes: [UInt8], _ random: inout SeededGenerator) -> [UInt8]? {
        var starts: [Int] = []
        for index in bytes.indices where (bytes[index] >= 0x30 && bytes[index] <= 0x39) && (index == 0 || !(bytes[index - 1] >= 0x30 && bytes[index - 1] <= 0x39) && bytes[index - 1] != 0x2E) {
            starts.append(index)
        }
        guard let start = starts.randomElement(using: &random) else { return nil }
        var end = start
        while end < bytes.count, let next = Optional(bytes[end]), (next >= 0x30 && next <= 0x39) || next == 0x2E || next == 0x65 || next == 0x2D || next == 0x2B { end += 1 }
        var result = Array(bytes[..<start])
        result += Array(interesting.randomElement(using: &random)!.utf8)
        result += bytes[end...]
        return result
    }

    /// `bytes` with the first `reportData` value's binary report mutated.
    static func corruptBinaryReport(in bytes: [UInt8], _ random: inout SeededGenerator) -> [UInt8]? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let key = text.range(of: "\"reportData\":\""), let end = text[key.upperBound...].firstIndex(of: "\""),
              let decoded = Base64.decode(String(text[key.upperBound..<end])) else { return nil }
        var report = decoded
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !report.isEmpty: report[Int.random(in: 0..<report.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1: report.insert(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], at: Int.random(in: 0...report.count, using: &random))
            default: if !report.isEmpty { report.removeSubrange(Int.random(in: 0..<report.count, using: &random)..<report.count) }
            }
        }
        return Array((String(text[..<key.upperBound]) + Base64.encode(report) + String(text[end...])).utf8)
    }

    /// Everything the collector does with a body before it writes it: decode, validate,
    /// merge the accepted reports into a rollup value and read that back from its binary form.
    /// - Returns: whether at least one event was accepted.
    @discardableResult
    static func exercise(_ body: ByteBuffer, into total: inout RollupValue) -> Bool {
        guard let batch = try? decodeBatch(body),
              let (ingest, _) = try? IngestValidator(limits: IngestLimits(), now: now).validate(batch, app: "shop") else { return false }
        for (event, _) in ingest.events {
            total.merge(RollupValue(visit: event, installationId: ingest.installationId))
            _ = event.report.hitchRatio
            _ = event.report.stability
        }
        if let back = try? FrameReport(binary: total.report.binaryEncoded()) { _ = back.frameDuration(atQuantile: 0.99) }
        return !ingest.events.isEmpty
    }

    /// Runs `target` on mutated inputs for the long run's seconds, or `defaultInputs` times.
    /// `target` returns whether the input went all the way (accepted), for the figures.
    static func run(_ name: String, defaultInputs: Int, _ target: ([UInt8]) -> Bool) throws {
        var random = SeededGenerator(seed: seed)
        var corpus = try seeds()
        let started = Date()
        var inputs = 0
        var deep = 0
        while seconds.map({ Date().timeIntervalSince(started) < $0 }) ?? (inputs < defaultInputs) {
            var input = corpus.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...4, using: &random) { input = mutate(input, &random) }
            if target(input) { deep += 1 }
            inputs += 1
            // Keep some mutants as new starting points, so mutations stack over time.
            if inputs % 64 == 0 && input.count < 64 << 10 { corpus.append(input); if corpus.count > 256 { corpus.remove(at: 2) } }
        }
        print("fuzz \(name): \(inputs) inputs in \(Int(Date().timeIntervalSince(started))) s, \(deep) accepted whole or in part, seed \(seed), no crash")
    }

    @Test("The JSON batch decoders, validation and merging survive mutated batches")
    func batches() throws {
        var total = RollupValue()
        try Self.run("batch", defaultInputs: 1500) { input in
            Self.exercise(ByteBuffer(bytes: input), into: &total)
        }
        #expect(total.report.inconsistency == nil)
    }

    @Test("The binary report decoder survives mutated reports, and what it accepts is consistent")
    func binaryReports() throws {
        let reports = makeBatch(id: "b", count: 3, start: Self.now).events.map { $0.report.binaryEncoded() }
        var random = SeededGenerator(seed: Self.seed &+ 1)
        var accepted = FrameReport()
        try Self.run("binary report", defaultInputs: 3000) { _ in
            var bytes = reports.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.insert(contentsOf: (0..<Int.random(in: 1...10, using: &random)).map { _ in 0xFF }, at: Int.random(in: 1...bytes.count, using: &random))
                case 2: bytes.removeSubrange(Int.random(in: 1..<bytes.count, using: &random)...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: Int.random(in: 1...bytes.count, using: &random))
                }
                if bytes.count < 2 { bytes = reports[0] }
            }
            guard let report = try? FrameReport(binary: bytes) else { return false }
            #expect(report.inconsistency == nil)
            accepted.merge(report)
            return true
        }
        #expect(accepted.inconsistency == nil)
    }

    @Test("gzip bodies: damaged, truncated and mutated streams are refused or decoded, never a crash")
    func gzipBodies() throws {
        var total = RollupValue()
        var random = SeededGenerator(seed: Self.seed &+ 2)
        try Self.run("gzip", defaultInputs: 600) { input in
            var plain = ByteBuffer(bytes: input)
            guard var compressed = try? plain.compress(with: .gzip()) else { return false }
            var bytes = Array(compressed.readableBytesView)
            if Bool.random(using: &random), !bytes.isEmpty {
                for _ in 0..<Int.random(in: 1...3, using: &random) { bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random) }
            }
            if Int.random(in: 0..<4, using: &random) == 0 { bytes.removeLast(Int.random(in: 0...min(bytes.count, 20), using: &random)) }
            compressed = ByteBuffer(bytes: bytes)
            guard let body = try? gunzip(compressed, limit: 1 << 20) else { return false }
            return Self.exercise(body, into: &total)
        }
        #expect(total.report.inconsistency == nil)
    }
}
