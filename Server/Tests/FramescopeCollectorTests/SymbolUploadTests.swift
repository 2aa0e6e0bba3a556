import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import Testing

/// The symbol upload's rules and the stored table's binary form.
@Suite("Symbol uploads")
struct SymbolUploadTests {
    static let image = SymbolUpload.Image(id: "73d406b3246a378bbefc16429a4d8133", name: "Shop", arch: "arm64", symbols: [
        SymbolUpload.Symbol(offset: 0x1000, size: 0x10, name: "a()"),
        SymbolUpload.Symbol(offset: 0x1010, size: 0x20, name: "naïve \"b\"(_:)"),
        SymbolUpload.Symbol(offset: 0xFFFF_FFFF_0000, size: 0xFFFF, name: String(repeating: "x", count: 4096)),
    ])

    @Test("Every rule is refused by field")
    func rules() {
        func problem(_ edit: (inout SymbolUpload.Image) -> Void) -> String? {
            var image = Self.image
            edit(&image)
            return SymbolUpload(images: [image]).problem()?.0
        }
        #expect(problem { _ in } == nil)
        #expect(SymbolUpload(images: Array(repeating: Self.image, count: 257)).problem()?.0 == "images")
        #expect(problem { $0.id = "73D406B3246A378BBEFC16429A4D8133" } == "images[0].id")
        #expect(problem { $0.id = "abc" } == "images[0].id")
        #expect(problem { $0.id = String(repeating: "0", count: 32) } == "images[0].id", "an all-zero LC_UUID names no build")
        #expect(SymbolUpload.idProblem(String(repeating: "0", count: 40))?.contains("all zeros") == true)
        #expect(problem { $0.name = "a/b" } == "images[0].name")
        #expect(problem { $0.name = "" } == "images[0].name")
        #expect(problem { $0.arch = "arm 64" } == "images[0].arch")
        #expect(problem { $0.arch = String(repeating: "a", count: 17) } == "images[0].arch")
        #expect(problem { $0.symbols[1].offset = 0x1008 } == "images[0].symbols[1]", "overlap")
        #expect(problem { $0.symbols.swapAt(0, 1) } == "images[0].symbols[1]", "order")
        #expect(problem { $0.symbols[0].size = 0 } == "images[0].symbols[0]")
        #expect(problem { $0.symbols[2].size = .max } == "images[0].symbols[2]", "ends past 2^64")
        #expect(problem { $0.symbols[1].name = "" } == "images[0].symbols[1]")
        #expect(problem { $0.symbols[1].name = "a\nb" } == "images[0].symbols[1]")
        #expect(problem { $0.symbols[2].name += "x" } == "images[0].symbols[2]")
        #expect(problem { $0.symbols[1].name = "a\u{202E}b" } == "images[0].symbols[1]", "a bidirectional override")
        #expect(SymbolUpload(images: [Self.image, Self.image]).problem()?.0 == "images[1].id", "one image twice")
    }

    @Test("The stored form reads back; a lookup finds the symbol holding an offset, nothing between or past them")
    func blob() throws {
        let table = SymbolTableBlob(Self.image.symbols)
        let back = try #require(SymbolTableBlob(bytes: table.bytes))
        #expect(back == table)
        #expect(back.name(at: 0xFFF) == nil)
        #expect(back.name(at: 0x1000) == "a()")
        #expect(back.name(at: 0x100F) == "a()")
        #expect(back.name(at: 0x1010) == "naïve \"b\"(_:)")
        #expect(back.name(at: 0x1030) == nil)
        #expect(back.name(at: 0xFFFF_FFFF_FFFE) == String(repeating: "x", count: 4096))
        #expect(back.name(at: .max) == nil)
        #expect(SymbolTableBlob([]).count == 0 && SymbolTableBlob(bytes: SymbolTableBlob([]).bytes)?.count == 0)
    }

    @Test("The stored form is pinned, and written alike from a table, from an upload's symbols and as Data")
    func blobLayout() {
        let one = [SymbolUpload.Symbol(offset: 0x1000, size: 0x10, name: "a()"), SymbolUpload.Symbol(offset: 0x1090, size: 1, name: "é")]
        // FSY1, the count 2 (LE), then per symbol: the gap from the last end, the size and the
        // name's length as LEB128, and the name's UTF-8.
        let pinned: [UInt8] = Array("FSY1".utf8) + [2, 0, 0, 0] + [0x80, 0x20, 0x10, 3] + Array("a()".utf8) + [0x80, 0x01, 1, 2, 0xC3, 0xA9]
        #expect(SymbolTableBlob.bytes(of: one) == pinned)
        #expect(SymbolTableBlob(one).bytes == pinned)
        #expect([UInt8](SymbolTableBlob.data(of: one)) == pinned)
        for symbols in [Self.image.symbols, []] {
            let bytes = SymbolTableBlob(symbols).bytes
            #expect(SymbolTableBlob.bytes(of: symbols) == bytes && [UInt8](SymbolTableBlob.data(of: symbols)) == bytes)
        }
    }

    @Test("The chunks' index is pinned (FSI1), and a table cut into chunks joins back into the same table")
    func indexLayout() throws {
        let symbols = (0..<5).map { SymbolUpload.Symbol(offset: 0x1000 + UInt64($0) * 0x20, size: 0x10, name: "f\($0)") }
        let (index, chunks) = SymbolTableIndex.chunks(of: symbols, chunkSymbols: 2)
        #expect(chunks == [0..<2, 2..<4, 4..<5])
        // FSI1; the count 5, 2 symbols a chunk, the whole table's 34 bytes (4-byte LE); each
        // chunk's first offset (8-byte LE).
        let pinned: [UInt8] = Array("FSI1".utf8) + [5, 0, 0, 0] + [2, 0, 0, 0] + [34, 0, 0, 0]
            + [0x00, 0x10, 0, 0, 0, 0, 0, 0] + [0x40, 0x10, 0, 0, 0, 0, 0, 0] + [0x80, 0x10, 0, 0, 0, 0, 0, 0]
        #expect(index.bytes == pinned)
        #expect(SymbolTableBlob.bytes(of: symbols).count == 34)
        #expect(SymbolTableIndex(bytes: pinned) == index)
        #expect(SymbolTableIndex.isIndex(pinned) && !SymbolTableIndex.isIndex(SymbolTableBlob.bytes(of: symbols)))
        let parts = chunks.map { SymbolTableBlob(symbols[$0]) }
        #expect(SymbolTableBlob(joining: parts) == SymbolTableBlob(symbols))
        #expect(SymbolTableBlob(joining: [parts[1], parts[0]]) == nil, "parts out of order do not join")
        #expect(SymbolTableBlob(joining: [parts[0], SymbolTableBlob(symbols[1..<3])]) == nil, "nor parts that overlap")
        #expect(SymbolTableBlob(joining: [])?.count == 0)
        for (number, part) in parts.enumerated() { #expect(index.isChunk(number, part)) }
        #expect(!index.isChunk(0, parts[1]) && !index.isChunk(2, parts[1]) && !index.isChunk(3, parts[2]))
        #expect(!index.isChunk(0, SymbolTableBlob([symbols[0], SymbolUpload.Symbol(offset: 0x1030, size: 0x20, name: "long")])),
                "a chunk reaching past the next one's start")
        #expect(index.chunk(holding: 0xFFF) == nil)
        #expect(index.chunk(holding: 0x1000) == 0 && index.chunk(holding: 0x103F) == 0 && index.chunk(holding: 0x1040) == 1)
        #expect(index.chunk(holding: .max) == 2)
        #expect(index.tableMemoryBytes == SymbolTableBlob(symbols).memoryBytes)
        let empty = SymbolTableIndex.chunks(of: [])
        #expect(empty.chunks.isEmpty && SymbolTableIndex(bytes: empty.index.bytes) == empty.index && empty.index.chunk(holding: 5) == nil)
    }

    @Test("A lookup in the chunks an offset falls in answers as the whole table, for any offset (seeded)")
    func chunkLookupLaw() {
        var random = SeededGenerator(seed: 7)
        for trial in 0..<40 {
            var offset: UInt64 = UInt64.random(in: 0...64, using: &random)
            let symbols = (0..<Int.random(in: 1...300, using: &random)).map { index -> SymbolUpload.Symbol in
                let size = UInt64.random(in: 1...40, using: &random)
                defer { offset += size + UInt64.random(in: 0...24, using: &random) }
                return SymbolUpload.Symbol(offset: offset, size: size, name: "s\(index)")
            }
            let whole = SymbolTableBlob(symbols)
            let (index, chunks) = SymbolTableIndex.chunks(of: symbols, chunkSymbols: Int.random(in: 1...50, using: &random))
            for _ in 0..<50 {
                let probe = UInt64.random(in: 0...(offset + 64), using: &random)
                let parts = index.chunk(holding: probe).map { [SymbolTableBlob(symbols[chunks[$0]])] } ?? []
                #expect(SymbolTableBlob(joining: parts)?.name(at: probe) == whole.name(at: probe), "trial \(trial), offset \(probe)")
            }
        }
    }

    @Test("Damaged indexes read as nothing, never a crash")
    func damagedIndex() {
        let bytes = SymbolTableIndex.chunks(of: Self.image.symbols, chunkSymbols: 1).index.bytes
        for cut in 0..<bytes.count { #expect(SymbolTableIndex(bytes: Array(bytes[0..<cut])) == nil) }
        #expect(SymbolTableIndex(bytes: bytes + [0]) == nil)
        var zeroChunk = bytes
        zeroChunk[8] = 0
        #expect(SymbolTableIndex(bytes: zeroChunk) == nil, "a chunk of no symbols")
        var descending = bytes
        descending.replaceSubrange(24..<32, with: [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(SymbolTableIndex(bytes: descending) == nil, "chunks not ascending")
        var random = SeededGenerator(seed: 44)
        for _ in 0..<2_000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) { mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            _ = SymbolTableIndex(bytes: mutated)?.chunk(holding: UInt64.random(in: 0...UInt64.max, using: &random))
        }
    }

    /// The upload in `text`, read as the route reads it.
    static func scan(_ text: String) throws -> SymbolUpload {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBytes { try SymbolUpload.scan(UnsafeRawBufferPointer($0)) }
    }

    /// The (code, field) of the refusal of `text`, or nil when it is read.
    static func refusal(_ text: String) -> (String, String?)? {
        do {
            _ = try scan(text)
            return nil
        } catch let error as CollectorError {
            return (error.code, error.field)
        } catch {
            return ("unexpected \(error)", nil)
        }
    }

    @Test("The scanner reads what JSONDecoder read: escapes, UTF-8, 4 KiB names, offsets up to 2^64 − 1, unknown members skipped")
    func scanMatchesDecoder() throws {
        let upload = SymbolUpload(images: [Self.image, SymbolUpload.Image(id: "00112233445566778899aabbccddeeff", name: "画面 Kit", arch: "x86_64", symbols: [
            SymbolUpload.Symbol(offset: 0, size: 1, name: "\u{1F389} tab\there \\ slash"),
            SymbolUpload.Symbol(offset: UInt64.max - 1, size: 1, name: "last"),
        ])])
        let encoded = String(decoding: try JSONEncoder().encode(upload), as: UTF8.self)
        #expect(try Self.scan(encoded) == upload)
        #expect(try JSONDecoder().decode(SymbolUpload.self, from: Data(encoded.utf8)) == upload, "the peer agrees")
        let spaced = #" { "future" : {"a": [1, {"b": null}]}, "images" : [ { "arch" : "arm64" , "x": 1, "symbols" : [ [ 18446744073709551615 , 0 , "m" ] ] , "name" : "S", "id" : "0011223344556677" } ] } "#
        let read = try Self.scan(spaced)
        #expect(read.images.first?.symbols.first == SymbolUpload.Symbol(offset: .max, size: 0, name: "m"))
        #expect(try Self.scan(#"{"images": []}"#).images.isEmpty)
    }

    @Test("A wrong value is refused naming its field (invalid_field); text that is not JSON is invalid_json")
    func scanRefusals() {
        let image = #""id":"0011223344556677","name":"S","arch":"arm64""#
        let cases: [(String, String, String?)] = [
            (#"{"images":[{\#(image),"symbols":[[1,2]]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{\#(image),"symbols":[[1,2,"a",4]]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{\#(image),"symbols":[[0,1,"a"],[1,"2","b"]]}]}"#, "invalid_field", "images[0].symbols[1]"),
            (#"{"images":[{\#(image),"symbols":[[1.5,2,"a"]]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{\#(image),"symbols":[[-1,2,"a"]]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{\#(image),"symbols":[[18446744073709551616,2,"a"]]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{\#(image),"symbols":[[1,2,3]]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{\#(image),"symbols":{}}]}"#, "invalid_field", "images[0].symbols"),
            (#"{"images":[{\#(image),"symbols":[7]}]}"#, "invalid_field", "images[0].symbols[0]"),
            (#"{"images":[{"id":"0011223344556677","name":"S","symbols":[]}]}"#, "invalid_field", "images[0].arch"),
            (#"{"images":[{\#(image),"name":"T","symbols":[]}]}"#, "invalid_field", "images[0].name"),
            (#"{"images":[{"id":7,"name":"S","arch":"a","symbols":[]}]}"#, "invalid_field", "images[0].id"),
            (#"{"images":[{\#(image),"symbols":[]}, 5]}"#, "invalid_field", "images[1]"),
            (#"{"images":{}}"#, "invalid_field", "images"),
            (#"{"image":[]}"#, "invalid_field", "images"),
            (#"{"images":[],"images":[]}"#, "invalid_field", "images"),
            (#"{"images":[{\#(image),"symbols":[[1,2,"a"]]"#, "invalid_json", "images[0].symbols"),
            (#"{"images":[{\#(image),"symbols":[[1,2,"a\ud800"]]}]}"#, "invalid_json", "images[0].symbols[0]"),
            (#"{"images":[]} x"#, "invalid_json", nil),
            (#"[]"#, "invalid_json", nil),
            ("", "invalid_json", nil),
            ("\u{FEFF}{\"images\":[]}", "invalid_json", nil),
        ]
        for (text, code, field) in cases {
            let refused = Self.refusal(text)
            #expect(refused?.0 == code && refused?.1 == field, "\(text): \(String(describing: refused))")
        }
        let many = "{\"images\":[" + Array(repeating: "{\(image),\"symbols\":[]}", count: SymbolUpload.maximumImages + 1).joined(separator: ",") + "]}"
        #expect(Self.refusal(many)?.1 == "images", "more than 256 images, refused by count")
    }

    @Test("Damaged uploads are refused or read as JSONDecoder reads them, never a crash")
    func scanDamaged() throws {
        let valid = Array(try JSONEncoder().encode(SymbolUpload(images: [Self.image])))
        var random = SeededGenerator(seed: 35)
        var accepted = 0
        for round in 0..<3_000 {
            var bytes = valid
            if round % 3 == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = [UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"),
                        UInt8(ascii: ","), UInt8(ascii: "9"), UInt8(ascii: "-"), 0xC3, 0, UInt8.random(in: 0...255, using: &random)].randomElement(using: &random) ?? 0
                }
            }
            let scanned = try? bytes.withUnsafeBytes { try SymbolUpload.scan($0) }
            if let scanned {
                accepted += 1
                #expect(try JSONDecoder().decode(SymbolUpload.self, from: Data(bytes)) == scanned, "\(String(decoding: bytes.prefix(200), as: UTF8.self))")
            }
        }
        #expect(accepted > 0 && accepted < 3_000, "\(accepted) of 3,000 damaged uploads read")
    }

    @Test("Damaged stored forms read as nothing, never a crash")
    func damaged() {
        let bytes = SymbolTableBlob(Self.image.symbols).bytes
        for cut in 0..<bytes.count { #expect(SymbolTableBlob(bytes: Array(bytes[0..<cut])) == nil) }
        var random = SeededGenerator(seed: 33)
        for _ in 0..<2_000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) { mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            _ = SymbolTableBlob(bytes: mutated)?.name(at: UInt64.random(in: 0...UInt64.max, using: &random))
        }
        #expect(SymbolTableBlob(bytes: Array("FSY1".utf8) + [0xFF, 0xFF, 0xFF, 0x7F]) == nil, "a count past what the bytes hold")
    }
}
