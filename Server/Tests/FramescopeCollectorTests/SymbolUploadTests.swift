@testable import FramescopeCollector
import FramescopeCore
import FramescopeSimulation
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
