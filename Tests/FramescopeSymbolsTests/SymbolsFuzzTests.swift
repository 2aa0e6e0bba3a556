import Foundation
import FramescopeSymbols
import Testing

/// Seeded fuzzing of the object-file readers, starting from the real files of
/// `../shared/binaries`: no input may trap, every refusal is an ``ObjectFileError`` with a
/// field and a message, and every accepted image's symbols were read from inside the input.
///
/// Three phases, as `TraceFuzzTests`: every file cut at 64 points; every header field that
/// sizes or places a table (`FieldMap`) set to 0, its maximum, and just past the end; then
/// random mutations (bit flips, hostile integers at header offsets, cuts, copies). CI runs a
/// fixed number of random inputs; a long run takes `FRAMESCOPE_FUZZ_SECONDS` for the third
/// phase:
///
/// ```
/// FRAMESCOPE_FUZZ_SECONDS=600 swift test --filter SymbolsFuzz
/// ```
@Suite("Fuzzing the Mach-O and ELF readers")
struct SymbolsFuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seconds = environment["FRAMESCOPE_FUZZ_SECONDS"].flatMap(Double.init)
    static let seed = environment["FRAMESCOPE_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_127

    /// Reads `input`; an accepted input's symbols must have been read inside it.
    /// - Returns: whether it was accepted.
    @discardableResult
    static func exercise(_ input: [UInt8], _ label: @autoclosure () -> String) -> Bool {
        let images: [SymbolImage]
        do throws(ObjectFileError) {
            images = try ObjectFile.images(in: input)
        } catch {
            #expect(!error.message.isEmpty && !error.field.isEmpty, "\(label()): \(error)")
            return false
        }
        for image in images {
            let symbols = image.symbols.symbols
            for (index, symbol) in symbols.enumerated() {
                if index > 0, symbols[index - 1].offset > symbol.offset { Issue.record("\(label()): unsorted at \(index)") }
                // The name is the bytes at nameOffset up to the first NUL, inside the input.
                guard symbol.nameOffset < UInt64(input.count) else {
                    Issue.record("\(label()): \(symbol.name) read at \(symbol.nameOffset), outside \(input.count) bytes")
                    return true
                }
                let start = Int(symbol.nameOffset)
                let name = symbol.name.utf8
                let end = start + name.count
                if end < input.count, input[end] == 0, name.isEmpty || name.withContiguousStorageIfAvailable({ text in
                       input.withUnsafeBufferPointer { memcmp($0.baseAddress! + start, text.baseAddress!, text.count) == 0 }
                   }) ?? false { continue }
                // Not the same bytes: only a name whose invalid UTF-8 was replaced may differ.
                guard let terminator = input[start...].firstIndex(of: 0),
                      String(decoding: input[start..<terminator], as: UTF8.self) == symbol.name else {
                    Issue.record("\(label()): \(symbol.name) is not the bytes at \(start)")
                    return true
                }
            }
            // Lookups at both ends of a few symbols, and names split, must not trap.
            for symbol in symbols.prefix(8) + symbols.suffix(8) {
                _ = image.symbols.lookup(symbol.offset)
                _ = image.symbols.lookup(symbol.end, isReturnAddress: true)
                _ = (symbol.baseName, symbol.suffix)
            }
        }
        return true
    }

    /// The files, read once.
    static let files: [(path: String, bytes: [UInt8])] = Binaries.all.compactMap { path in
        (try? Binaries.bytes(path)).map { (path, $0) }
    }

    @Test("Every file cut at 64 points is read or refused, never a trap")
    func truncations() throws {
        #expect(Self.files.count == Binaries.all.count)
        var inputs = 0, accepted = 0
        for (path, bytes) in Self.files {
            // 32 cuts spread over the file, 32 over its first 4 KiB (the headers).
            var cuts = Set((0..<32).map { bytes.count * $0 / 32 })
            cuts.formUnion((0..<32).map { min(bytes.count, $0 * 128 + 3) })
            var extra = 1
            while cuts.count < 64 { cuts.insert(max(0, bytes.count - extra)); extra += 97 }
            for cut in cuts.sorted() {
                if Self.exercise(Array(bytes[..<cut]), "\(path) cut at \(cut)") { accepted += 1 }
                inputs += 1
            }
        }
        print("fuzz symbols truncations: \(inputs) inputs, \(accepted) accepted, no crash")
        #expect(inputs == 64 * Self.files.count)
    }

    @Test("Every table-sizing header field set to 0, its maximum or just past the end is read or refused, never a trap")
    func headerFields() throws {
        var inputs = 0, accepted = 0, fields = 0
        for (path, bytes) in Self.files {
            let map = FieldMap.fields(bytes)
            #expect(map.count >= 10, "\(path): \(map.count) fields")
            fields += map.count
            for field in map {
                for value in Set([0, field.maximum, min(field.pastEnd, field.maximum)]) {
                    if Self.exercise(field.set(value, in: bytes), "\(path): \(field) = \(value)") { accepted += 1 }
                    inputs += 1
                }
            }
        }
        print("fuzz symbols header fields: \(fields) fields, \(inputs) inputs, \(accepted) accepted, no crash")
    }

    /// Values that sit on the edges of offsets and counts.
    static let hostile: [UInt64] = [0, 1, 7, 8, 0x7f, 0xff, 0xffff, 0xffff_ffff, 0x8000_0000, .max, .max - 1, 1 << 32, 1 << 63]

    /// One mutation of `input`.
    static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        guard !bytes.isEmpty else { return bytes }
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
        case 1, 2:
            // A hostile integer, little- or big-endian, at a header offset (most of the
            // fields that matter are in the first 4 KiB or where a slice starts).
            let value = hostile.randomElement(using: &random) ?? 0
            let width = [1, 2, 4, 8].randomElement(using: &random) ?? 4
            let limit = min(bytes.count, Bool.random(using: &random) ? 4096 : bytes.count)
            let at = Int.random(in: 0..<limit, using: &random) & ~(width - 1)
            let bigEndian = Bool.random(using: &random)
            for position in 0..<width where at + position < bytes.count {
                bytes[at + position] = UInt8(truncatingIfNeeded: value >> UInt64((bigEndian ? width - 1 - position : position) * 8))
            }
        case 3:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...256, using: &random)))
        case 4:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let range = start..<min(bytes.count, start + Int.random(in: 1...512, using: &random))
            bytes.insert(contentsOf: bytes[range], at: Int.random(in: 0...bytes.count, using: &random))
        default:
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        }
        return bytes
    }

    @Test("Random mutations of every file are read or refused, never a trap")
    func mutations() throws {
        var random = SplitMix64(seed: Self.seed)
        // The small files more often: they are read fastest and every byte of them matters.
        let seeds = Self.files.map(\.bytes)
        let started = Date()
        var inputs = 0, accepted = 0
        while Self.seconds.map({ Date().timeIntervalSince(started) < $0 }) ?? (inputs < 3000) {
            let pick = Int.random(in: 0..<seeds.count, using: &random)
            var input = seeds[pick]
            if input.count > 200_000, Bool.random(using: &random) { input = seeds[Int.random(in: 0..<seeds.count, using: &random)] }
            for _ in 0..<Int.random(in: 1...4, using: &random) { input = Self.mutate(input, &random) }
            if Self.exercise(input, "\(Self.files[pick].path) mutation \(inputs), seed \(Self.seed)") { accepted += 1 }
            inputs += 1
        }
        print("fuzz symbols mutations: \(inputs) inputs in \(Int(Date().timeIntervalSince(started))) s, \(accepted) accepted, seed \(Self.seed), no crash")
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a small seeded generator, so a failing input
/// can be reproduced from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
