import Foundation
@testable import FramescopeSymbols
import Testing

/// The one rule that sizes every symbol in both readers (`SymbolBounds`, issue 42 item 4): a
/// symbol ends at the first of its declared end, the next symbol of its section, and its
/// section's end.
@Suite("Symbol bounds: every symbol inside its section, in both readers")
struct SymbolBoundsTests {
    typealias Entry = SymbolBounds.Entry
    typealias Section = SymbolBounds.Section

    /// `name` at `address` in section `section`, declaring `size` bytes (0: none).
    static func entry(_ name: String, _ section: Int, _ address: UInt64, _ size: UInt64 = 0) -> Entry {
        Entry(name: name, nameOffset: 0, section: section, address: address, declaredSize: size)
    }

    /// Three sections as an executable lays them out: `.init` [0x1000, 0x1017), `.plt`
    /// [0x1020, 0x1060) holding no symbol, `.text` [0x1070, 0x1370); and a fourth that starts
    /// at 0 like every section of a relocatable object.
    static let sections = [Section(start: 0x1000, size: 0x17), Section(start: 0x1020, size: 0x40),
                           Section(start: 0x1070, size: 0x300), Section(start: 0, size: 0x2000)]

    @Test("Each symbol ends at the first of its declared end, the next symbol of its section and its section's end", arguments: [
        // _init declares no size: it ends with .init, not at the next symbol in .text.
        ([entry("_init", 0, 0x1000), entry("report", 2, 0x1070, 0x19)], ["_init 0x1000 0x17", "report 0x1070 0x19"]),
        // No declared size: up to the next symbol, the last one to the section's end.
        ([entry("a", 2, 0x1100), entry("b", 2, 0x1200)], ["a 0x1100 0x100", "b 0x1200 0x170"]),
        // A declared size that overlaps the next symbol is cut where it starts, one past the
        // section's end is cut there.
        ([entry("outer", 2, 0x1100, 0x400), entry("inner", 2, 0x1180, 0x4000)], ["outer 0x1100 0x80", "inner 0x1180 0x1f0"]),
        // Aliases end together, each no later than its own declared end.
        ([entry("f", 2, 0x1100), entry("f.localalias", 2, 0x1100, 0x10), entry("g", 2, 0x1140)],
         ["f 0x1100 0x40", "f.localalias 0x1100 0x10", "g 0x1140 0x230"]),
        // Outside its section (or in no section) a symbol covers none of it and is dropped.
        ([entry("before", 2, 0x1000), entry("past", 0, 0x1017), entry("nowhere", 9, 0x1100), entry("kept", 1, 0x1020)],
         ["kept 0x1020 0x40"]),
        // A symbol of another section at a higher address does not bound one of its own (an
        // object file's sections all start at 0).
        ([entry("x", 3, 0x10), entry("y", 2, 0x1100)], ["y 0x1100 0x270", "x 0x10 0x1ff0"]),
    ] as [([Entry], [String])])
    func rule(_ entries: [Entry], _ expected: [String]) {
        for order in [entries, entries.reversed()] {
            let symbols = SymbolBounds.symbols(order, sections: Self.sections, base: 0, format: .elf)
            #expect(symbols.map { "\($0.name) 0x\(String($0.offset, radix: 16)) 0x\(String($0.size, radix: 16))" }.sorted() == expected.sorted())
        }
    }

    @Test("Offsets count from the base; a symbol below it is dropped; a section reaching past UInt64.max ends there")
    func baseAndOverflow() {
        let sections = [Section(start: 0x1_0000_0000, size: 0x1000), Section(start: .max - 0xf, size: 0x100)]
        let symbols = SymbolBounds.symbols([Self.entry("main", 0, 0x1_0000_0100), Self.entry("low", 0, 0x1000), Self.entry("top", 1, .max - 8)],
                                           sections: sections, base: 0x1_0000_0000, format: .machO)
        #expect(symbols.map(\.name) == ["main", "top"])
        #expect(symbols[0].offset == 0x100 && symbols[0].size == 0xf00)
        #expect(symbols[1].offset == .max - 8 - 0x1_0000_0000 && symbols[1].size == 8)
    }

    @Test("symbolic's linux crash: _init (st_size 0) ends with .init, 0x1a bytes, so .plt names no function")
    func linuxCrashInit() throws {
        let image = try #require(try Binaries.images(Binaries.linuxCrash).first)
        // readelf -S: .init [0x401558, +0x1a), .plt [0x401580, +0x370), .plt.got [0x4018f0, +8).
        let initSymbol = try #require(image.symbols.symbols.first { $0.name == "_init" })
        #expect(initSymbol.offset == 0x401558 && initSymbol.size == 0x1a)
        for offset in stride(from: UInt64(0x401580), to: 0x4018f8, by: 4) {
            #expect(image.symbols.lookup(offset) == nil, "0x\(String(offset, radix: 16)) in .plt")
        }
        // _fini (st_size 0) is the last function: it ends with .fini, 9 bytes.
        let fini = try #require(image.symbols.symbols.first { $0.name == "_fini" })
        #expect(fini.offset == 0x414ca4 && fini.size == 9)
    }

    @Test("Every symbol of every real file lies inside one section of its image")
    func insideSections() throws {
        for path in Binaries.all {
            switch try ObjectFile(Binaries.bytes(path)) {
            case let .elf(file):
                let ranges = file.sections.map { Section(start: $0.address, size: $0.size) }
                for symbol in file.symbols.symbols {
                    #expect(ranges.contains { $0.contains(symbol.offset) && symbol.end <= $0.end }, "\(path): \(symbol.name)")
                }
            case let .machO(slices):
                for slice in slices {
                    let ranges = slice.segments.flatMap(\.sections).map { Section(start: $0.address, size: $0.size) }
                    for symbol in slice.symbols.symbols {
                        let address = symbol.offset + slice.textVMAddress
                        #expect(ranges.contains { $0.contains(address) && address + symbol.size <= $0.end }, "\(path): \(symbol.name)")
                    }
                }
            }
        }
    }

    #if os(Linux)
    @Test("A program compiled here: _init ends with .init, no .plt address is named, every size is readelf's or bounded")
    func compiledInit() throws {
        let program = try CompiledELF()
        guard case let .elf(file) = try ObjectFile(try program.bytes()) else { Issue.record("not ELF"); return }
        let readelf = try program.readelfFunctions()
        // The case at hand: _init has st_size 0 in readelf's eyes, and .plt follows .init.
        let declaredInit = try #require(readelf.first { $0.name == "_init" })
        #expect(declaredInit.size == 0)
        let initSection = try #require(file.sections.first { $0.name == ".init" })
        let initSymbol = try #require(file.symbols.symbols.first { $0.name == "_init" })
        #expect(initSymbol.offset == initSection.address && initSymbol.size == initSection.size)
        let plts = file.sections.filter { $0.name.hasPrefix(".plt") }
        #expect(!plts.isEmpty)
        for plt in plts {
            for offset in plt.address..<(plt.address + plt.size) {
                #expect(file.symbols.lookup(offset) == nil, "0x\(String(offset, radix: 16)) in \(plt.name) is named \(file.symbols.lookup(offset)?.symbol.name ?? "")")
            }
        }
        // Every defined function readelf lists is read; a declared size is kept (no two overlap
        // here), a size of 0 runs to the next function or the section's end.
        #expect(Set(file.symbols.symbols.map(\.name)) == Set(readelf.map(\.name)))
        let sorted = file.symbols.symbols
        for (index, symbol) in sorted.enumerated() {
            let declared = try #require(readelf.first { $0.name == symbol.name && $0.value == symbol.offset })
            if declared.size != 0 {
                #expect(symbol.size == declared.size, "\(symbol.name)")
            } else {
                let section = try #require(file.sections.first { $0.address <= symbol.offset && symbol.offset < $0.address + $0.size })
                let next = sorted[(index + 1)...].first { $0.offset > symbol.offset }?.offset ?? .max
                #expect(symbol.end == min(next, section.address + section.size), "\(symbol.name)")
            }
        }
    }

    @Test("SHN_XINDEX takes the section from SHT_SYMTAB_SHNDX; without one, or SHN_ABS, the symbol has no section and is not read")
    func extendedSectionIndex() throws {
        let program = try CompiledELF()
        let bytes = try program.bytes()
        guard case let .elf(file) = try ObjectFile(bytes) else { Issue.record("not ELF"); return }
        let symtabIndex = try #require(file.sections.firstIndex { $0.type == 2 })
        let symtab = file.sections[symtabIndex]
        let strtab = file.sections[Int(symtab.link)]
        let count = Int(symtab.size / 24)
        // main's entry in .symtab, by its name.
        let mainEntry = try #require((0..<count).first { entry in
            guard let name = FieldMap.read(bytes, Int(symtab.offset) + entry * 24, 4) else { return false }
            let start = Int(strtab.offset) + Int(name)
            return bytes.count > start + 5 && Array(bytes[start..<start + 5]) == Array("main\0".utf8)
        })
        let shndxAt = Int(symtab.offset) + mainEntry * 24 + 6
        let textIndex = try #require(FieldMap.read(bytes, shndxAt, 2))
        let shoff = Int(try #require(FieldMap.read(bytes, 40, 8)))
        let commentHeader = shoff + 64 * (try #require(file.sections.firstIndex { $0.name == ".comment" }))
        func names(_ bytes: [UInt8]) throws -> [String] {
            try #require(try ObjectFile.images(in: bytes).first).symbols.symbols.map { "\($0.name) \($0.offset) \($0.size)" }
        }
        let original = try names(bytes)
        #expect(original.contains { $0.hasPrefix("main ") })

        // .comment's header made into SHT_SYMTAB_SHNDX for .symtab, its table appended to the file.
        var indices = [UInt8](repeating: 0, count: count * 4)
        indices[mainEntry * 4] = UInt8(textIndex & 0xff)
        indices[mainEntry * 4 + 1] = UInt8(textIndex >> 8)
        var extended = bytes + indices
        for (offset, width, value) in [(4, 4, UInt64(18)), (24, 8, UInt64(bytes.count)), (32, 8, UInt64(count * 4)),
                                       (40, 4, UInt64(symtabIndex)), (56, 8, UInt64(4))] {
            extended = Field(name: "section header", offset: commentHeader + offset, width: width, pastEnd: 0).set(value, in: extended)
        }
        extended = Field(name: "st_shndx", offset: shndxAt, width: 2, pastEnd: 0).set(0xffff, in: extended)
        #expect(try names(extended) == original)

        // Its table cut short of main's entry: refused, naming the entry and where it is.
        let cut = Field(name: "sh_size", offset: commentHeader + 32, width: 8, pastEnd: 0).set(UInt64(mainEntry * 4), in: extended)
        let found = ObjectFileErrorTests.refusal(cut)
        let refusal = try #require(found, "a SHT_SYMTAB_SHNDX too short for main's entry was read")
        #expect(refusal.code == .truncated)
        #expect(refusal.field.hasPrefix("entry \(mainEntry) of SHT_SYMTAB_SHNDX"), "\(refusal)")
        #expect(refusal.offset == UInt64(bytes.count + mainEntry * 4))

        let withoutMain = original.filter { !$0.hasPrefix("main ") }
        let noTable = Field(name: "st_shndx", offset: shndxAt, width: 2, pastEnd: 0).set(0xffff, in: bytes)
        #expect(try names(noTable) == withoutMain)
        let absolute = Field(name: "st_shndx", offset: shndxAt, width: 2, pastEnd: 0).set(0xfff1, in: bytes)
        #expect(try names(absolute) == withoutMain)
    }
    #endif
}
